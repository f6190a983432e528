//! Rules for `#[prompt]`.

use super::handler;
use crate::attr::PromptAttr;
use crate::ctxt::Ctxt;
use crate::model::HandlerFn;

pub(crate) fn prompt(cx: &Ctxt, prompt: &HandlerFn<'_>, attr: &PromptAttr) {
    handler(cx, prompt, &attr.common);
    check_name(cx, prompt);
    check_completers(cx, prompt, attr);
}

/// Prompts are picked by users (often as slash commands) by name.
fn check_name(cx: &Ctxt, prompt: &HandlerFn<'_>) {
    if prompt.name.is_empty()
        || prompt
            .name
            .chars()
            .any(|c| c.is_whitespace() || c.is_control())
    {
        cx.push(syn::Error::new(
            prompt.name_span,
            "prompt names cannot be empty or contain spaces or control characters",
        ));
    }
}

/// A completer must complete one of this prompt's arguments.
fn check_completers(cx: &Ctxt, prompt: &HandlerFn<'_>, attr: &PromptAttr) {
    for completer in &attr.completers {
        if !prompt
            .arguments()
            .any(|a| completer.argument == a.wire_name)
        {
            cx.error_spanned_by(
                &completer.argument,
                format!(
                    "`{}` is not an argument of prompt `{}`; completers complete the prompt's arguments",
                    completer.argument, prompt.name
                ),
            );
        }
    }
}

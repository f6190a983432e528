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
    let Some(problem) = name_problem(&prompt.name) else {
        return;
    };
    let message = match problem {
        NameProblem::Empty => "prompt names cannot be empty".to_owned(),
        NameProblem::Char(c) => {
            let name = prompt.name.escape_debug();
            let suggestion = suggest_name(&prompt.name);
            let what = if c.is_whitespace() {
                "whitespace"
            } else {
                "control characters"
            };
            if suggestion.is_empty() {
                format!("invalid prompt name `{name}`: prompt names cannot contain {what}")
            } else {
                format!(
                    "invalid prompt name `{name}`: prompt names cannot contain {what}; try `name = \"{suggestion}\"`"
                )
            }
        }
    };
    cx.push(syn::Error::new(prompt.name_span, message));
}

#[derive(Debug, PartialEq, Eq)]
enum NameProblem {
    Empty,
    /// The first whitespace or control character.
    Char(char),
}

fn name_problem(name: &str) -> Option<NameProblem> {
    if name.is_empty() {
        return Some(NameProblem::Empty);
    }
    name.chars()
        .find(|c| c.is_whitespace() || c.is_control())
        .map(NameProblem::Char)
}

/// `name` with runs of whitespace turned into `-` and control characters
/// dropped: `"code review"` becomes `code-review`.
fn suggest_name(name: &str) -> String {
    name.split(char::is_whitespace)
        .map(|word| word.chars().filter(|c| !c.is_control()).collect::<String>())
        .filter(|word| !word.is_empty())
        .collect::<Vec<_>>()
        .join("-")
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prompt_names_are_single_words() {
        assert_eq!(name_problem("review"), None);
        assert_eq!(name_problem("résumé/review:v2"), None);
        assert_eq!(name_problem(""), Some(NameProblem::Empty));
        assert_eq!(name_problem("code review"), Some(NameProblem::Char(' ')));
        assert_eq!(name_problem("a\tb"), Some(NameProblem::Char('\t')));
        assert_eq!(name_problem("a\u{7}b"), Some(NameProblem::Char('\u{7}')));
    }

    #[test]
    fn suggestions_join_words_with_dashes() {
        assert_eq!(suggest_name("code review"), "code-review");
        assert_eq!(suggest_name("  code \t review\n"), "code-review");
        assert_eq!(suggest_name("a\u{7}b"), "ab");
        assert_eq!(suggest_name(" "), "");
    }
}

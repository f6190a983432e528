//! Rules for `#[tool]`.

use super::extension::check_extensions;
use super::handler;
use crate::attr::{Flag, ToolAttr};
use crate::ctxt::Ctxt;
use crate::model::HandlerFn;

pub(crate) fn tool(cx: &Ctxt, tool: &HandlerFn<'_>, attr: &ToolAttr) {
    handler(cx, tool, &attr.common);
    check_tool_name(cx, tool);
    check_raw_schema(cx, tool, attr);
    check_extensions(cx, &attr.extensions);
    check_replayable_state(cx, attr);
    check_task(cx, attr);
    super::app::tool(cx, &attr.app, &attr.common);
}

/// `task(...)` values: positive where zero means nothing, and an
/// `answer_within_ms` shorter than the task's lifetime. The Tasks
/// extension is declared with `task(required)`, not `requires_extension`,
/// which would refuse clients without it even for a synchronous call.
fn check_task(cx: &Ctxt, attr: &ToolAttr) {
    if let Some(id) = attr
        .extensions
        .iter()
        .find(|id| id.value() == TASKS_EXTENSION)
    {
        cx.error_spanned_by(
            id,
            "the Tasks extension is declared with `task`: write `#[tool(task)]` (or `task(required)` to refuse clients without it) instead of `requires_extension`",
        );
    }
    let Some(task) = &attr.task else {
        return;
    };
    let number = |lit: &Option<syn::LitInt>, key: &str, positive: bool| -> Option<u64> {
        let lit = lit.as_ref()?;
        match lit.base10_parse::<u64>() {
            Ok(0) if positive => {
                cx.error_spanned_by(lit, format!("`{key}` must be at least 1"));
                None
            }
            Ok(value) => Some(value),
            Err(_) => {
                cx.error_spanned_by(
                    lit,
                    format!("`{key}` is a whole number of milliseconds that fits in 64 bits"),
                );
                None
            }
        }
    };
    let answer = number(&task.answer_within_ms, "answer_within_ms", false);
    let ttl = number(&task.ttl_ms, "ttl_ms", true);
    number(&task.poll_interval_ms, "poll_interval_ms", true);
    if let (Some(answer), Some(ttl), Some(lit)) = (answer, ttl, &task.answer_within_ms)
        && answer >= ttl
    {
        cx.error_spanned_by(
            lit,
            format!("`answer_within_ms` ({answer}) must be shorter than the task's `ttl_ms` ({ttl}): a call is answered directly only if it finishes well within its task's lifetime"),
        );
    }
}

/// The Tasks extension's identifier.
const TASKS_EXTENSION: &str = "io.modelcontextprotocol/tasks";

/// `replayable_state` lifts the single use the runtime gives, by default,
/// the `requestState` of a tool that a repeat could change things with. On
/// a tool whose annotations say a repeat changes nothing (the runtime's
/// rule, `registry::tool`), it would do nothing, and likely stands for an
/// annotation that is wrong.
fn check_replayable_state(cx: &Ctxt, attr: &ToolAttr) {
    let Some((key, Flag { value: true })) = &attr.replayable_state else {
        return;
    };
    let a = &attr.annotations;
    let is = |flag: Option<Flag>, value: bool| flag.is_some_and(|f| f.value == value);
    let reason = if is(a.read_only, true) {
        "a `read_only` tool"
    } else if is(a.destructive, false) && is(a.idempotent, true) {
        "a tool annotated `destructive = false` and `idempotent`"
    } else {
        return;
    };
    cx.error_spanned_by(
        key,
        format!(
            "`replayable_state` has no effect on {reason}: its `requestState` can already be used more than once; remove `replayable_state`"
        ),
    );
}

/// A hand-written schema is published as written, so header mirroring
/// must be declared in it, not on parameters.
fn check_raw_schema(cx: &Ctxt, tool: &HandlerFn<'_>, attr: &ToolAttr) {
    if attr.input_schema.is_none() {
        return;
    }
    for argument in tool.arguments() {
        if let Some(header) = &argument.header {
            cx.error_spanned_by(
                header,
                "with `input_schema`, the schema is published as written: declare the header there (`\"x-mcp-header\": \"...\"` on the property) and remove `header` here",
            );
        }
    }
}

/// The spec's tool-name rule: 1 to 128 characters of `A-Za-z0-9_.-`.
fn check_tool_name(cx: &Ctxt, tool: &HandlerFn<'_>) {
    let Some(problem) = name_problem(&tool.name) else {
        return;
    };
    let message = match (problem, tool.explicit_name) {
        (NameProblem::Empty, _) => "tool names cannot be empty".to_owned(),
        // Echoing 129+ characters back would bury the message.
        (NameProblem::TooLong(length), _) => {
            format!("tool names are at most 128 characters; this one has {length}")
        }
        (NameProblem::Char(c), true) => format!(
            "invalid tool name `{}`: {c:?} is not allowed; use only ASCII letters, digits, `_`, `-` and `.`",
            tool.name
        ),
        (NameProblem::Char(c), false) => format!(
            "`{}` is not a valid tool name ({c:?} is not allowed); choose one with `#[tool(name = \"...\")]` using only ASCII letters, digits, `_`, `-` and `.`",
            tool.name
        ),
    };
    cx.push(syn::Error::new(tool.name_span, message));
}

#[derive(Debug, PartialEq, Eq)]
pub(crate) enum NameProblem {
    Empty,
    TooLong(usize),
    /// The first character outside the allowed set.
    Char(char),
}

pub(crate) fn name_problem(name: &str) -> Option<NameProblem> {
    if name.is_empty() {
        return Some(NameProblem::Empty);
    }
    let length = name.chars().count();
    if length > 128 {
        return Some(NameProblem::TooLong(length));
    }
    name.chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.')))
        .map(NameProblem::Char)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn replayable_state_errors(args: proc_macro2::TokenStream) -> Vec<String> {
        let cx = Ctxt::new();
        let attr = ToolAttr::parse(&cx, args);
        check_replayable_state(&cx, &attr);
        match cx.check() {
            Ok(()) => Vec::new(),
            Err(errors) => errors.into_iter().map(|e| e.to_string()).collect(),
        }
    }

    #[test]
    fn replayable_state_must_lift_something() {
        use quote::quote;
        // Single use is the default for these: lifting it is meaningful.
        for args in [
            quote!(replayable_state),
            quote!(replayable_state, annotations(destructive)),
            quote!(replayable_state, annotations(idempotent)),
            quote!(replayable_state, annotations(destructive = false)),
            quote!(replayable_state, annotations(read_only = false)),
            // `= false` asks for nothing, so it contradicts nothing.
            quote!(replayable_state = false, annotations(read_only)),
        ] {
            assert_eq!(
                replayable_state_errors(args.clone()),
                Vec::<String>::new(),
                "{args}"
            );
        }
        assert_eq!(
            replayable_state_errors(quote!(replayable_state, annotations(read_only))),
            [
                "`replayable_state` has no effect on a `read_only` tool: its `requestState` can already be used more than once; remove `replayable_state`"
            ]
        );
        assert_eq!(
            replayable_state_errors(quote!(
                annotations(idempotent, destructive = false),
                replayable_state
            )),
            [
                "`replayable_state` has no effect on a tool annotated `destructive = false` and `idempotent`: its `requestState` can already be used more than once; remove `replayable_state`"
            ]
        );
    }

    #[test]
    fn tool_names_follow_the_spec() {
        assert_eq!(name_problem("getUser"), None);
        assert_eq!(name_problem("DATA_EXPORT_v2"), None);
        assert_eq!(name_problem("admin.tools.list"), None);
        assert_eq!(name_problem(""), Some(NameProblem::Empty));
        assert_eq!(name_problem("has space"), Some(NameProblem::Char(' ')));
        assert_eq!(name_problem("a/b"), Some(NameProblem::Char('/')));
        assert_eq!(name_problem("café"), Some(NameProblem::Char('é')));
        assert_eq!(name_problem(&"x".repeat(128)), None);
        assert_eq!(
            name_problem(&"x".repeat(129)),
            Some(NameProblem::TooLong(129))
        );
        // Counted in characters, as the spec says, not bytes.
        assert_eq!(
            name_problem(&"é".repeat(129)),
            Some(NameProblem::TooLong(129))
        );
    }
}

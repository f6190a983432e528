//! Rules that span several parts of the model, checked before anything is
//! generated. One function per rule; each says why it exists.

use std::collections::HashMap;

use syn::{LitStr, Type};

use crate::ctxt::Ctxt;
use crate::model::{Param, ToolFn};

pub(crate) fn tool(cx: &Ctxt, tool: &ToolFn<'_>) {
    check_signature(cx, tool);
    check_tool_name(cx, tool);
    check_argument_types(cx, tool);
    check_unique_arguments(cx, tool);
    for icon in &tool.attr.icons {
        check_icon(cx, icon);
    }
    if let Some(meta) = &tool.attr.meta {
        check_meta(cx, meta);
    }
}

/// The generated glue calls the function by name with concrete argument
/// types; generics, `unsafe` and foreign ABIs make that impossible or unsound.
fn check_signature(cx: &Ctxt, tool: &ToolFn<'_>) {
    let sig = &tool.original.sig;
    if !sig.generics.params.is_empty() || sig.generics.where_clause.is_some() {
        cx.error_spanned_by(
            &sig.generics,
            "`#[tool]` functions cannot be generic: arguments need concrete types to have a schema",
        );
    }
    if let Some(unsafety) = &sig.unsafety {
        cx.error_spanned_by(
            unsafety,
            "`#[tool]` functions cannot be `unsafe`: clients call them with arbitrary input; keep the `unsafe` block inside a safe function",
        );
    }
    if let Some(abi) = &sig.abi {
        cx.error_spanned_by(
            abi,
            "`#[tool]` functions cannot have an `extern` ABI; call the `extern` function from a plain `fn` tool",
        );
    }
    if let Some(variadic) = &sig.variadic {
        cx.error_spanned_by(variadic, "`#[tool]` functions cannot be variadic");
    }
    if let Some(Type::ImplTrait(ty)) = tool.output {
        cx.error_spanned_by(
            ty,
            "the return type of a `#[tool]` function must be nameable; return a concrete type instead of `impl Trait`",
        );
    }
}

/// The spec's tool-name rule: 1 to 128 characters of `A-Za-z0-9_.-`.
fn check_tool_name(cx: &Ctxt, tool: &ToolFn<'_>) {
    let Some(problem) = name_problem(&tool.name) else {
        return;
    };
    let message = match (problem, &tool.attr.name) {
        (NameProblem::Empty, _) => "tool names cannot be empty".to_owned(),
        // Echoing 129+ characters back would bury the message.
        (NameProblem::TooLong(length), _) => {
            format!("tool names are at most 128 characters; this one has {length}")
        }
        (NameProblem::Char(c), Some(_)) => format!(
            "invalid tool name `{}`: {c:?} is not allowed; use only ASCII letters, digits, `_`, `-` and `.`",
            tool.name
        ),
        (NameProblem::Char(c), None) => format!(
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

/// Arguments are deserialized into an owned struct, so they cannot borrow
/// from the request, and `impl Trait` has no schema.
fn check_argument_types(cx: &Ctxt, tool: &ToolFn<'_>) {
    for argument in tool.arguments() {
        match argument.ty {
            Type::Reference(reference) => cx.error_spanned_by(
                reference,
                "tool arguments must be owned types (for example `String` instead of `&str`): they are deserialized from the request",
            ),
            Type::ImplTrait(ty) => cx.error_spanned_by(
                ty,
                "tool arguments need a concrete type with a schema, not `impl Trait`",
            ),
            _ => {}
        }
    }
}

/// Two arguments with one JSON name would make the schema ambiguous.
fn check_unique_arguments(cx: &Ctxt, tool: &ToolFn<'_>) {
    let mut seen: HashMap<&str, ()> = HashMap::new();
    for argument in tool.params.iter().filter_map(|p| match p {
        Param::Argument(a) => Some(a),
        Param::Context(_) => None,
    }) {
        if seen.insert(&argument.wire_name, ()).is_some() {
            cx.push(syn::Error::new(
                argument.wire_name_span,
                format!(
                    "two arguments are named `{}`; give one another name with `#[arg(rename = \"...\")]`",
                    argument.wire_name
                ),
            ));
        }
    }
}

/// Clients must reject icon URIs other than `https:` and `data:`, so an
/// icon that would be rejected is a mistake worth catching here.
fn check_icon(cx: &Ctxt, icon: &crate::attr::IconAttr) {
    let Some(src) = &icon.src else {
        cx.push(syn::Error::new(
            icon.span,
            "an `icon(...)` needs `src = \"https://...\"`",
        ));
        return;
    };
    let value = src.value();
    if !(value.starts_with("https://") || value.starts_with("data:")) {
        cx.error_spanned_by(
            src,
            "icon `src` must be an `https:` or `data:` URI; clients reject other schemes",
        );
    }
    if let Some(theme) = icon
        .theme
        .as_ref()
        .filter(|t| !matches!(t.value().as_str(), "light" | "dark"))
    {
        cx.error_spanned_by(theme, "icon `theme` is \"light\" or \"dark\"");
    }
    for size in &icon.sizes {
        if !is_icon_size(&size.value()) {
            cx.error_spanned_by(
                size,
                "icon sizes look like \"48x48\", or \"any\" for scalable icons",
            );
        }
    }
}

fn is_icon_size(size: &str) -> bool {
    if size == "any" {
        return true;
    }
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    size.split_once('x')
        .is_some_and(|(w, h)| digits(w) && digits(h))
}

/// `_meta` must be a JSON object whose keys follow the spec's naming rules,
/// and the `io.modelcontextprotocol/`-style prefixes are reserved for MCP.
fn check_meta(cx: &Ctxt, meta: &LitStr) {
    let value: serde_json::Value = match serde_json::from_str(&meta.value()) {
        Ok(value) => value,
        Err(error) => {
            cx.error_spanned_by(meta, format!("`meta` is not valid JSON: {error}"));
            return;
        }
    };
    let Some(object) = value.as_object() else {
        cx.error_spanned_by(
            meta,
            r##"`meta` must be a JSON object, such as `meta = r#"{"com.example/key": "value"}"#`"##,
        );
        return;
    };
    for key in object.keys() {
        if let Some(problem) = meta_key_problem(key) {
            cx.push(syn::Error::new(
                meta.span(),
                format!("invalid `_meta` key `{key}`: {problem}"),
            ));
        }
    }
}

pub(crate) fn meta_key_problem(key: &str) -> Option<&'static str> {
    let (prefix, name) = match key.rsplit_once('/') {
        Some((prefix, name)) => (Some(prefix), name),
        None => (None, key),
    };
    if let Some(prefix) = prefix {
        let labels: Vec<&str> = prefix.split('.').collect();
        let label_ok = |l: &&str| {
            let b = l.as_bytes();
            !b.is_empty()
                && b[0].is_ascii_alphabetic()
                && b[b.len() - 1].is_ascii_alphanumeric()
                && b.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'-')
        };
        if !labels.iter().all(label_ok) {
            return Some(
                "a prefix is dot-separated labels of letters, digits and `-`, followed by `/`",
            );
        }
        if matches!(labels.get(1), Some(&"modelcontextprotocol" | &"mcp")) {
            return Some(
                "prefixes whose second label is `modelcontextprotocol` or `mcp` are reserved for MCP",
            );
        }
    }
    let b = name.as_bytes();
    let name_ok = b.is_empty()
        || (b[0].is_ascii_alphanumeric()
            && b[b.len() - 1].is_ascii_alphanumeric()
            && b.iter()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.')));
    (!name_ok).then_some("a name starts and ends with a letter or digit and uses only letters, digits, `-`, `_` and `.`")
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn meta_keys_follow_the_spec() {
        assert_eq!(meta_key_problem("com.example/ui"), None);
        assert_eq!(meta_key_problem("plain"), None);
        assert_eq!(meta_key_problem("com.example.mcp/x"), None);
        assert!(meta_key_problem("io.modelcontextprotocol/x").is_some());
        assert!(meta_key_problem("dev.mcp/x").is_some());
        assert!(meta_key_problem("-bad/x").is_some());
        assert!(meta_key_problem("com.example/-x").is_some());
    }

    #[test]
    fn icon_sizes() {
        assert!(is_icon_size("48x48"));
        assert!(is_icon_size("any"));
        assert!(!is_icon_size("48"));
        assert!(!is_icon_size("x48"));
    }
}

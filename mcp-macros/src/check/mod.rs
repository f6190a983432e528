//! Rules that span several parts of the model, checked before anything is
//! generated. One function per rule; each says why it exists. Rules for one
//! kind of handler live in that kind's file.

pub(crate) mod app;
mod ask;
mod extension;
mod prompt;
mod resource;
mod scopes;
mod tool;

use std::collections::HashMap;

use syn::{LitStr, Type};

use crate::attr::CommonAttr;
use crate::ctxt::Ctxt;
use crate::model::HandlerFn;

pub(crate) use self::prompt::prompt;
pub(crate) use self::resource::{priority_value, resource};
pub(crate) use self::tool::tool;

/// Rules every kind of handler follows.
fn handler(cx: &Ctxt, handler: &HandlerFn<'_>, common: &CommonAttr) {
    check_signature(cx, handler);
    check_argument_types(cx, handler);
    check_unique_arguments(cx, handler);
    check_headers(cx, handler);
    ask::check_asks(cx, handler);
    for icon in &common.icons {
        check_icon(cx, icon);
    }
    if let Some(meta) = &common.meta {
        check_meta(cx, meta);
    }
    if let Some(scopes) = &common.scopes {
        scopes::check_scopes(cx, scopes);
    }
    if let Some(group) = &common.group {
        check_group(cx, group);
    }
    if let Some(blocking) = &common.blocking {
        check_blocking(cx, handler, blocking);
    }
}

/// `blocking` moves a synchronous body to the blocking pool. An async fn
/// would be polled there by nothing: it has to await instead (and an
/// async body that blocks should move that step with `run_blocking`).
fn check_blocking(cx: &Ctxt, handler: &HandlerFn<'_>, blocking: &syn::Path) {
    if handler.is_async {
        cx.error_spanned_by(
            blocking,
            "`blocking` runs a synchronous body on the blocking pool; an async fn should await instead: remove `blocking`, or make the fn non-async",
        );
    }
}

/// A group name is what a builder selects items by (`Items::group`), and
/// what the contract lock records: lowercase ASCII letters, digits, `-`,
/// `_` and `.`, starting with a letter, so that it reads the same in code,
/// in a lock file and on a command line.
fn check_group(cx: &Ctxt, group: &syn::LitStr) {
    let value = group.value();
    let valid = value.len() <= 64
        && value.starts_with(|c: char| c.is_ascii_lowercase())
        && value
            .bytes()
            .all(|b| matches!(b, b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.'));
    if !valid {
        cx.error_spanned_by(
            group,
            format!(
                "`{}` is not a group name: use lowercase ASCII letters, digits, `-`, `_` and `.`, starting with a letter (at most 64), such as \"admin\"",
                value.escape_debug()
            ),
        );
    }
}

/// The generated glue calls the function by name with concrete argument
/// types; generics, `unsafe` and foreign ABIs make that impossible or unsound.
fn check_signature(cx: &Ctxt, handler: &HandlerFn<'_>) {
    let attribute = handler.kind.attribute();
    let sig = &handler.original.sig;
    if !sig.generics.params.is_empty() || sig.generics.where_clause.is_some() {
        cx.error_spanned_by(
            &sig.generics,
            format!("`{attribute}` functions cannot be generic: arguments need concrete types"),
        );
    }
    if let Some(unsafety) = &sig.unsafety {
        cx.error_spanned_by(
            unsafety,
            format!("`{attribute}` functions cannot be `unsafe`: clients call them with arbitrary input; keep the `unsafe` block inside a safe function"),
        );
    }
    if let Some(abi) = &sig.abi {
        cx.error_spanned_by(
            abi,
            format!("`{attribute}` functions cannot have an `extern` ABI; call the `extern` function from a plain `fn`"),
        );
    }
    if let Some(variadic) = &sig.variadic {
        cx.error_spanned_by(
            variadic,
            format!("`{attribute}` functions cannot be variadic"),
        );
    }
    if let Some(Type::ImplTrait(ty)) = handler.output {
        cx.error_spanned_by(
            ty,
            format!("the return type of a `{attribute}` function must be nameable; return a concrete type instead of `impl Trait`"),
        );
    }
}

/// Arguments are parsed into owned values, so they cannot borrow from the
/// request, and `impl Trait` names no type to parse into.
fn check_argument_types(cx: &Ctxt, handler: &HandlerFn<'_>) {
    let parameters = handler.kind.parameters();
    for argument in handler.arguments() {
        match argument.ty {
            Type::Reference(reference) => cx.error_spanned_by(
                reference,
                format!("{parameters} must be owned types (for example `String` instead of `&str`): they are parsed from the request"),
            ),
            Type::ImplTrait(ty) => cx.error_spanned_by(
                ty,
                format!("{parameters} need a concrete type, not `impl Trait`"),
            ),
            _ => {}
        }
    }
}

/// Two arguments with one wire name would be ambiguous.
fn check_unique_arguments(cx: &Ctxt, handler: &HandlerFn<'_>) {
    let mut seen: HashMap<&str, ()> = HashMap::new();
    for argument in handler.arguments() {
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

/// `x-mcp-header` rules the macro can check: only tool arguments are
/// mirrored into headers, names are HTTP tokens, unique ignoring case. The
/// type (string, integer or boolean) is checked by a trait bound.
fn check_headers(cx: &Ctxt, handler: &HandlerFn<'_>) {
    let mut seen: Vec<String> = Vec::new();
    for argument in handler.arguments() {
        let Some(header) = &argument.header else {
            continue;
        };
        if handler.kind != crate::kind::Kind::Tool {
            cx.error_spanned_by(
                header,
                "`header` mirrors a tool argument into an `Mcp-Param-*` HTTP header; it applies to `#[tool]` arguments only",
            );
            continue;
        }
        let name = header.value();
        let token = |b: u8| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b);
        if name.is_empty() || !name.bytes().all(token) {
            cx.error_spanned_by(
                header,
                format!("`{name}` is not an HTTP header name; use letters, digits and `-`, such as `header = \"Region\"`"),
            );
        } else if seen.iter().any(|s| s.eq_ignore_ascii_case(&name)) {
            cx.error_spanned_by(
                header,
                format!("header `{name}` is used twice (header names ignore case); give each argument its own"),
            );
        } else {
            seen.push(name);
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

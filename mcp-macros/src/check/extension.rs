//! `requires_extension = "..."`: each names one MCP extension by its
//! identifier, so that the server can match it against the extensions it
//! offers and clients can match it against the ones they negotiated.

use std::collections::HashSet;

use syn::LitStr;

use crate::ctxt::Ctxt;

/// A malformed identifier could never match an extension a client
/// negotiates; a repeated one is a typo.
pub(crate) fn check_extensions(cx: &Ctxt, extensions: &[LitStr]) {
    let mut seen = HashSet::new();
    for extension in extensions {
        let id = extension.value();
        if let Some(problem) = extension_id_problem(&id) {
            cx.error_spanned_by(
                extension,
                format!(
                    "`requires_extension` must be an extension identifier `{{vendor-prefix}}/{{name}}` such as `com.example/my-extension`: {problem}"
                ),
            );
        } else if !seen.insert(id.clone()) {
            cx.error_spanned_by(
                extension,
                format!("extension `{id}` is required twice; remove one"),
            );
        }
    }
}

/// What is wrong with `id` as an extension identifier, if anything.
///
/// The spec (`extensions/overview`): `{vendor-prefix}/{extension-name}`,
/// following the rules of `_meta` keys with a mandatory prefix. The prefix
/// is dot-separated labels, each starting with a letter, ending with a
/// letter or digit, with letters, digits and `-` inside; the name starts
/// and ends with a letter or digit, with letters, digits, `-`, `_` and `.`
/// inside. The `_meta` reservation of `modelcontextprotocol`/`mcp` prefixes
/// does not apply: official extensions use them
/// (`io.modelcontextprotocol/tasks`). Mirrored by the runtime's check of
/// `Extension::new`.
pub(crate) fn extension_id_problem(id: &str) -> Option<String> {
    if id.is_empty() {
        return Some("it is empty".into());
    }
    let Some((prefix, name)) = id.split_once('/') else {
        return Some(
            "it has no vendor prefix; add one before a `/`, such as `com.example/`".into(),
        );
    };
    if prefix.is_empty() {
        return Some("the vendor prefix before `/` is empty".into());
    }
    for label in prefix.split('.') {
        if label.is_empty() {
            return Some(
                "the vendor prefix has an empty label; separate labels with single dots".into(),
            );
        }
        let bytes = label.as_bytes();
        let starts = bytes[0].is_ascii_alphabetic();
        let ends = bytes[bytes.len() - 1].is_ascii_alphanumeric();
        let inside = bytes
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || *b == b'-');
        if !(starts && ends && inside) {
            return Some(format!(
                "the prefix label `{label}` must start with a letter, end with a letter or digit, and hold only letters, digits and `-`"
            ));
        }
    }
    if name.is_empty() {
        return Some("the name after `/` is empty".into());
    }
    let bytes = name.as_bytes();
    let starts = bytes[0].is_ascii_alphanumeric();
    let ends = bytes[bytes.len() - 1].is_ascii_alphanumeric();
    let inside = bytes
        .iter()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'));
    if !(starts && ends && inside) {
        return Some(format!(
            "the name `{name}` must start and end with a letter or digit, and hold only letters, digits, `-`, `_` and `.`"
        ));
    }
    None
}

#[cfg(test)]
mod tests {
    use proc_macro2::Span;

    use super::*;

    #[test]
    fn good_identifiers() {
        for id in [
            "com.example/my-extension",
            "io.modelcontextprotocol/oauth-client-credentials",
            "io.modelcontextprotocol/tasks",
            "example/x",
            "com.example-corp.a1/ui",
            "com.example/v2.ui_apps",
            "A.b9/Z",
            "com.example/7",
        ] {
            assert_eq!(extension_id_problem(id), None, "{id}");
        }
    }

    #[test]
    fn bad_identifiers() {
        let problem = |id| extension_id_problem(id).unwrap_or_else(|| panic!("{id} accepted"));
        // The prefix is mandatory.
        assert!(problem("my-extension").contains("no vendor prefix"));
        assert_eq!(problem(""), "it is empty");
        assert!(problem("/my-extension").contains("prefix before `/` is empty"));
        // Labels.
        assert!(problem(".com/x").contains("empty label"));
        assert!(problem("com..example/x").contains("empty label"));
        assert!(problem("com./x").contains("empty label"));
        assert!(problem("1com.example/x").contains("label `1com`"));
        assert!(problem("com.-example/x").contains("label `-example`"));
        assert!(problem("com.example-/x").contains("label `example-`"));
        assert!(problem("com.exa_mple/x").contains("label `exa_mple`"));
        assert!(problem("com.exämple/x").contains("label `exämple`"));
        assert!(problem("com example/x").contains("label `com example`"));
        // Names.
        assert!(problem("com.example/").contains("name after `/` is empty"));
        assert!(problem("com.example/-x").contains("name `-x`"));
        assert!(problem("com.example/x.").contains("name `x.`"));
        assert!(problem("com.example/_x").contains("name `_x`"));
        assert!(problem("com.example/a b").contains("name `a b`"));
        assert!(problem("com.example/a/b").contains("name `a/b`"));
        assert!(problem("com.example/é").contains("name `é`"));
    }

    fn messages(extensions: &[&str]) -> Vec<String> {
        let literals: Vec<LitStr> = extensions
            .iter()
            .map(|id| LitStr::new(id, Span::call_site()))
            .collect();
        let cx = Ctxt::new();
        check_extensions(&cx, &literals);
        match cx.check() {
            Ok(()) => Vec::new(),
            Err(errors) => errors.into_iter().map(|e| e.to_string()).collect(),
        }
    }

    #[test]
    fn each_bad_or_repeated_identifier_is_reported() {
        assert!(messages(&["com.example/a", "com.example/b"]).is_empty());
        assert_eq!(
            messages(&["com.example/a", "bad", "com.example/a", "bad"]),
            [
                "`requires_extension` must be an extension identifier `{vendor-prefix}/{name}` such as `com.example/my-extension`: it has no vendor prefix; add one before a `/`, such as `com.example/`",
                "extension `com.example/a` is required twice; remove one",
                "`requires_extension` must be an extension identifier `{vendor-prefix}/{name}` such as `com.example/my-extension`: it has no vendor prefix; add one before a `/`, such as `com.example/`",
            ]
        );
    }
}

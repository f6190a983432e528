//! `scopes = [...]`: each is one OAuth scope-token, so that the scopes the
//! server publishes in its metadata and challenges are ones clients can
//! request.

use std::collections::HashSet;

use crate::attr::ScopesAttr;
use crate::ctxt::Ctxt;

/// RFC 6749 §3.3: `scope-token = 1*( %x21 / %x23-5B / %x5D-7E )`. Kept in
/// step with `mcp_runtime::auth::is_scope_token`.
pub(crate) fn is_scope_token(scope: &str) -> bool {
    !scope.is_empty()
        && scope
            .bytes()
            .all(|b| matches!(b, 0x21 | 0x23..=0x5B | 0x5D..=0x7E))
}

/// An empty list would read as "no scope needed", which is what leaving
/// `scopes` out already says; a bad token could never be granted; a
/// repeated one is a typo.
pub(crate) fn check_scopes(cx: &Ctxt, attr: &ScopesAttr) {
    if attr.list.elems.is_empty() {
        cx.error_spanned_by(
            &attr.list,
            "`scopes` is empty; list the OAuth scopes callers need, or remove `scopes`",
        );
    }
    let mut seen = HashSet::new();
    for scope in &attr.scopes {
        let value = scope.value();
        if value.is_empty() {
            cx.error_spanned_by(scope, "a scope cannot be empty");
        } else if !is_scope_token(&value) {
            cx.error_spanned_by(
                scope,
                format!(
                    "`{}` is not an OAuth scope: use printable ASCII without spaces, `\"` or `\\` (RFC 6749 §3.3)",
                    value.escape_debug()
                ),
            );
        } else if !seen.insert(value.clone()) {
            cx.error_spanned_by(scope, format!("scope `{value}` is listed twice"));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scope_tokens() {
        assert!(is_scope_token("notes:write"));
        assert!(is_scope_token("https://x/y.read"));
        assert!(!is_scope_token(""));
        assert!(!is_scope_token("a b"));
        assert!(!is_scope_token("a\"b"));
        assert!(!is_scope_token("a\\b"));
        assert!(!is_scope_token("é"));
    }
}

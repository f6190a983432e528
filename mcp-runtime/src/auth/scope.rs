//! Scope tokens (RFC 6749 §3.3) and what a granted set satisfies, with the
//! scope hierarchy the server declares (a broader scope implies narrower
//! ones, as the MCP authorization spec requires servers to honour).

use std::collections::{BTreeMap, BTreeSet};

/// Whether `scope` is one RFC 6749 scope-token: one or more printable ASCII
/// characters other than space, `"` and `\`
/// (`%x21 / %x23-5B / %x5D-7E`).
pub fn is_scope_token(scope: &str) -> bool {
    crate::security::is_scope_token(scope)
}

/// Broader scopes and the narrower scopes each implies.
#[derive(Clone, Debug, Default)]
pub(crate) struct Hierarchy {
    implies: BTreeMap<String, BTreeSet<String>>,
}

impl Hierarchy {
    pub(crate) fn add(&mut self, broad: &str, narrow: impl IntoIterator<Item = String>) {
        self.implies
            .entry(broad.to_owned())
            .or_default()
            .extend(narrow);
    }

    /// `granted` with everything it implies, transitively.
    pub(crate) fn expand<'a>(
        &self,
        granted: impl IntoIterator<Item = &'a str>,
    ) -> BTreeSet<String> {
        let mut all: BTreeSet<String> = BTreeSet::new();
        let mut pending: Vec<String> = granted.into_iter().map(str::to_owned).collect();
        while let Some(scope) = pending.pop() {
            if let Some(narrow) = self.implies.get(&scope) {
                pending.extend(narrow.iter().filter(|n| !all.contains(*n)).cloned());
            }
            all.insert(scope);
        }
        all
    }
}

/// The scopes of a space-separated `scope` claim (RFC 9068 §2.2.3, RFC 7662
/// §2.2); an array (`scp`, as some servers issue) is accepted too.
#[cfg_attr(
    all(not(feature = "auth"), not(test)),
    expect(dead_code, reason = "used by the built-in verifiers (feature `auth`)")
)]
pub(crate) fn from_claim(value: Option<&serde_json::Value>) -> Vec<String> {
    match value {
        Some(serde_json::Value::String(text)) => text
            .split(' ')
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
            .collect(),
        Some(serde_json::Value::Array(items)) => items
            .iter()
            .filter_map(|v| v.as_str())
            .map(str::to_owned)
            .collect(),
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scope_token_syntax_follows_rfc_6749() {
        for ok in [
            "notes:write",
            "a",
            "https://api.example.com/x.read",
            "!#[]~",
        ] {
            assert!(is_scope_token(ok), "{ok}");
        }
        for bad in ["", "a b", "quote\"d", "back\\slash", "tab\t", "é", "\u{7f}"] {
            assert!(!is_scope_token(bad), "{bad:?}");
        }
    }

    #[test]
    fn hierarchy_expands_transitively() {
        let mut h = Hierarchy::default();
        h.add("admin", ["notes:write".to_owned()]);
        h.add("notes:write", ["notes:read".to_owned()]);
        let all = h.expand(["admin"]);
        assert_eq!(
            all.iter().map(String::as_str).collect::<Vec<_>>(),
            ["admin", "notes:read", "notes:write"]
        );
        assert_eq!(h.expand(["other"]).len(), 1);
    }

    #[test]
    fn claim_forms() {
        let v = serde_json::json!("a  b c");
        assert_eq!(from_claim(Some(&v)), ["a", "b", "c"]);
        let v = serde_json::json!(["x", 1, "y"]);
        assert_eq!(from_claim(Some(&v)), ["x", "y"]);
        assert!(from_claim(None).is_empty());
    }
}

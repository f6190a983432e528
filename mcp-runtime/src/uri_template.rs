//! Matching URIs against RFC 6570 templates (level 1 `{var}` and reserved
//! `{+var}` expansion). Templates are parsed by the `#[resource]` macro at
//! compile time; only matching happens here.
//!
//! # Which template wins
//!
//! Static resources are matched first, by exact URI. Then templates are
//! tried from the most specific to the least: more literal characters
//! first, then fewer `{+var}` (which can span `/`), then fewer variables,
//! then the template text in byte order. The first template whose pattern
//! matches *and* whose variables all parse into their parameter types
//! serves the read.

use std::cmp::Reverse;

use percent_encoding::percent_decode_str;

/// One piece of a parsed URI template.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TemplatePart {
    /// Text that must appear verbatim.
    Literal(&'static str),
    /// `{name}` (one path segment) or `{+name}` (may contain `/`).
    Variable {
        /// The variable name, which is also the parameter name.
        name: &'static str,
        /// `{+name}`: reserved expansion.
        reserved: bool,
    },
}

/// The sort key that orders templates from most to least specific.
pub(crate) fn specificity(template: &'static str, parts: &[TemplatePart]) -> impl Ord + use<> {
    let literal: usize = parts
        .iter()
        .map(|p| match p {
            TemplatePart::Literal(l) => l.len(),
            TemplatePart::Variable { .. } => 0,
        })
        .sum();
    let reserved = parts
        .iter()
        .filter(|p| matches!(p, TemplatePart::Variable { reserved: true, .. }))
        .count();
    let variables = parts
        .iter()
        .filter(|p| matches!(p, TemplatePart::Variable { .. }))
        .count();
    (Reverse(literal), reserved, variables, template)
}

/// Matches `uri` against `parts`, returning the percent-decoded value of each
/// variable in template order.
pub(crate) fn match_uri(parts: &[TemplatePart], uri: &str) -> Option<Vec<(&'static str, String)>> {
    let mut values = Vec::new();
    if match_from(parts, uri, &mut values) {
        values.reverse();
        Some(values)
    } else {
        None
    }
}

fn match_from(
    parts: &[TemplatePart],
    rest: &str,
    values: &mut Vec<(&'static str, String)>,
) -> bool {
    let Some((first, others)) = parts.split_first() else {
        return rest.is_empty();
    };
    match *first {
        TemplatePart::Literal(literal) => rest
            .strip_prefix(literal)
            .is_some_and(|after| match_from(others, after, values)),
        TemplatePart::Variable { name, reserved } => {
            // The longest run the variable may cover; then back off until the
            // rest of the template matches.
            let limit = if reserved {
                rest.len()
            } else {
                rest.find(['/', '?', '#']).unwrap_or(rest.len())
            };
            let ends = rest[..limit]
                .char_indices()
                .map(|(i, c)| i + c.len_utf8())
                .collect::<Vec<_>>();
            for &end in ends.iter().rev() {
                if match_from(others, &rest[end..], values) {
                    let Ok(decoded) = percent_decode_str(&rest[..end]).decode_utf8() else {
                        return false;
                    };
                    values.push((name, decoded.into_owned()));
                    return true;
                }
            }
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use TemplatePart::{Literal, Variable};

    const NOTE: &[TemplatePart] = &[
        Literal("memo://notes/"),
        Variable {
            name: "id",
            reserved: false,
        },
    ];
    const FILE: &[TemplatePart] = &[
        Literal("file:///"),
        Variable {
            name: "path",
            reserved: true,
        },
        Literal(".txt"),
    ];
    const TWO: &[TemplatePart] = &[
        Literal("repo://"),
        Variable {
            name: "owner",
            reserved: false,
        },
        Literal("/"),
        Variable {
            name: "name",
            reserved: false,
        },
    ];

    fn vars(parts: &[TemplatePart], uri: &str) -> Option<Vec<(&'static str, String)>> {
        match_uri(parts, uri)
    }

    #[test]
    fn simple_variables_stay_within_a_segment() {
        assert_eq!(
            vars(NOTE, "memo://notes/42"),
            Some(vec![("id", "42".into())])
        );
        assert_eq!(
            vars(NOTE, "memo://notes/a%20b"),
            Some(vec![("id", "a b".into())])
        );
        assert_eq!(vars(NOTE, "memo://notes/4/2"), None);
        assert_eq!(vars(NOTE, "memo://notes/"), None);
        assert_eq!(vars(NOTE, "memo://other/1"), None);
        assert_eq!(
            vars(TWO, "repo://rust-lang/rust"),
            Some(vec![("owner", "rust-lang".into()), ("name", "rust".into())])
        );
    }

    #[test]
    fn reserved_variables_span_slashes() {
        assert_eq!(
            vars(FILE, "file:///a/b/c.txt"),
            Some(vec![("path", "a/b/c".into())])
        );
        assert_eq!(
            vars(FILE, "file:///a.txt.txt"),
            Some(vec![("path", "a.txt".into())])
        );
        assert_eq!(vars(FILE, "file:///a/b.md"), None);
    }

    #[test]
    fn invalid_percent_encoding_does_not_match() {
        assert_eq!(vars(NOTE, "memo://notes/%FF"), None);
    }

    #[test]
    fn more_literal_text_is_more_specific() {
        let readme: &[TemplatePart] = &[
            Literal("file:///"),
            Variable {
                name: "dir",
                reserved: true,
            },
            Literal("/README.md"),
        ];
        let any: &[TemplatePart] = &[
            Literal("file:///"),
            Variable {
                name: "path",
                reserved: true,
            },
        ];
        assert!(
            specificity("file:///{+dir}/README.md", readme) < specificity("file:///{+path}", any)
        );
    }
}

//! Matching URIs against RFC 6570 templates (level 1 `{var}`, reserved
//! `{+var}` expansion, and the form-style query expressions `{?a,b}` and
//! `{&c}` that end a template). Templates are parsed by the `#[resource]`
//! macro at compile time; only matching happens here.
//!
//! # Query expressions
//!
//! `tracker://issues{?state,label}` matches `tracker://issues`,
//! `tracker://issues?state=open` and `tracker://issues?label=bug&state=open`:
//! what comes before the query matches as any template does, then the
//! query's `name=value` pairs bind their variables in any order, each
//! optional, values percent-decoded (`+` stays `+`: RFC 6570 encodes a space
//! as `%20`). A key the template does not name makes the URI not match it
//! (see [`match_uri`]). With `{&c}` the query starts in the template's
//! literal text (`tracker://search?kind=issue{&state}`), which the URI
//! must begin its query with.
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
    /// `{?a,b}` or `{&c}`: query parameters, each optional, in any order.
    /// Only at the end of a template.
    Query {
        /// The variable names, which are also the parameter names.
        names: &'static [&'static str],
        /// `{&c}`: the query started in the template's literal text.
        continuation: bool,
    },
}

/// Every variable of a template, query variables included.
pub(crate) fn variable_names(parts: &[TemplatePart]) -> impl Iterator<Item = &'static str> + '_ {
    parts
        .iter()
        .flat_map(|part| match *part {
            TemplatePart::Literal(_) => &[][..],
            TemplatePart::Variable { ref name, .. } => std::slice::from_ref(name),
            TemplatePart::Query { names, .. } => names,
        })
        .copied()
}

/// The sort key that orders templates from most to least specific.
pub(crate) fn specificity(template: &'static str, parts: &[TemplatePart]) -> impl Ord + use<> {
    let literal: usize = parts
        .iter()
        .map(|p| match p {
            TemplatePart::Literal(l) => l.len(),
            TemplatePart::Variable { .. } | TemplatePart::Query { .. } => 0,
        })
        .sum();
    let reserved = parts
        .iter()
        .filter(|p| matches!(p, TemplatePart::Variable { reserved: true, .. }))
        .count();
    let variables = variable_names(parts).count();
    (Reverse(literal), reserved, variables, template)
}

/// The variables of a template's query expressions.
pub(crate) fn query_names(parts: &[TemplatePart]) -> impl Iterator<Item = &'static str> + '_ {
    let queries = parts
        .iter()
        .filter(|p| matches!(p, TemplatePart::Query { .. }));
    queries.flat_map(|p| variable_names(std::slice::from_ref(p)))
}

/// How a URI fares against one template.
#[derive(Debug, PartialEq, Eq)]
enum Match {
    /// It matches, with each variable's decoded value (absent query
    /// variables left out).
    Yes(Vec<(&'static str, String)>),
    No,
    /// It would match but for these query keys, which the template does not
    /// name.
    UnknownKeys(Vec<String>),
}

/// Matches `uri` against `parts`, returning the percent-decoded value of each
/// variable in template order (query variables in the URI's order, absent
/// ones left out).
///
/// A query key the template does not name means no match. The spec's
/// templates are RFC 6570 templates, which "can be used to construct
/// resource URIs": a form-style query expansion only ever writes the
/// template's own variables, so a URI with another key was not built from
/// this template. Ignoring the key would serve a resource the template does
/// not describe, and hide a client's typo (`?stat=open` reading every
/// issue); if nothing else serves the URI, the read's `-32602` names the
/// keys ([`unknown_query_keys`]).
pub(crate) fn match_uri(parts: &[TemplatePart], uri: &str) -> Option<Vec<(&'static str, String)>> {
    match match_template(parts, uri) {
        Match::Yes(values) => Some(values),
        Match::No | Match::UnknownKeys(_) => None,
    }
}

/// The query keys that keep `uri` from matching `parts`, when they are all
/// that does.
pub(crate) fn unknown_query_keys(parts: &[TemplatePart], uri: &str) -> Option<Vec<String>> {
    match match_template(parts, uri) {
        Match::UnknownKeys(keys) => Some(keys),
        Match::Yes(_) | Match::No => None,
    }
}

fn match_template(parts: &[TemplatePart], uri: &str) -> Match {
    // The macro puts query expressions last.
    let path_len = parts
        .iter()
        .position(|p| matches!(p, TemplatePart::Query { .. }))
        .unwrap_or(parts.len());
    let (path, query) = parts.split_at(path_len);
    let Some(first) = query.first() else {
        return path_match(path, uri).map_or(Match::No, Match::Yes);
    };
    let lead = match first {
        TemplatePart::Query {
            continuation: true, ..
        } => '&',
        _ => '?',
    };
    // Where the query may begin: at the URI's `?` (or its end) for `{?..}`;
    // after the template's literal query, at one of its `&`s, for `{&..}`.
    let starts = uri
        .char_indices()
        .filter(|&(i, c)| c == lead && (lead == '&' || !uri[..i].contains('?')))
        .map(|(i, _)| i)
        .chain([uri.len()]);
    for start in starts {
        if let Some(mut values) = path_match(path, &uri[..start]) {
            return match bind_query(query, &uri[start..]) {
                Ok(bound) => {
                    values.extend(bound);
                    Match::Yes(values)
                }
                Err(found) => found,
            };
        }
    }
    Match::No
}

/// The values of a template without query expressions.
fn path_match(parts: &[TemplatePart], uri: &str) -> Option<Vec<(&'static str, String)>> {
    let mut values = Vec::new();
    if match_from(parts, uri, &mut values) {
        values.reverse();
        Some(values)
    } else {
        None
    }
}

/// Binds the `name=value` pairs of `query` (empty, or starting with the
/// `?` or `&` that leads it) to the query expressions' variables.
fn bind_query(
    expressions: &[TemplatePart],
    query: &str,
) -> Result<Vec<(&'static str, String)>, Match> {
    let names = variable_names(expressions);
    let names: Vec<&'static str> = names.collect();
    let mut values: Vec<(&'static str, String)> = Vec::new();
    let mut unknown = Vec::new();
    let pairs = query.get(1..).unwrap_or_default().split('&');
    for pair in pairs.filter(|pair| !pair.is_empty()) {
        // `name` alone is `name=` (an empty value).
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        let Some(&name) = names.iter().find(|&&name| name == key) else {
            unknown.push(percent_decode_str(key).decode_utf8_lossy().into_owned());
            continue;
        };
        // Given twice: no expansion of this template writes that.
        if values.iter().any(|(bound, _)| *bound == name) {
            return Err(Match::No);
        }
        let decoded = percent_decode_str(value)
            .decode_utf8()
            .map_err(|_| Match::No)?;
        values.push((name, decoded.into_owned()));
    }
    if unknown.is_empty() {
        Ok(values)
    } else {
        Err(Match::UnknownKeys(unknown))
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
        // Bound by `bind_query`: a path never holds one.
        TemplatePart::Query { .. } => false,
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

    const ISSUES: &[TemplatePart] = &[
        Literal("tracker://issues"),
        TemplatePart::Query {
            names: &["state", "label"],
            continuation: false,
        },
    ];

    fn bound(pairs: &[(&'static str, &str)]) -> Option<Vec<(&'static str, String)>> {
        Some(pairs.iter().map(|&(n, v)| (n, v.to_owned())).collect())
    }

    #[test]
    fn query_variables_are_optional_and_in_any_order() {
        assert_eq!(vars(ISSUES, "tracker://issues"), bound(&[]));
        assert_eq!(vars(ISSUES, "tracker://issues?"), bound(&[]));
        assert_eq!(
            vars(ISSUES, "tracker://issues?state=open"),
            bound(&[("state", "open")])
        );
        assert_eq!(
            vars(ISSUES, "tracker://issues?label=bug&state=open"),
            bound(&[("label", "bug"), ("state", "open")])
        );
        // Percent-decoded; `+` is not a space in RFC 6570; `name` alone is
        // an empty value.
        assert_eq!(
            vars(ISSUES, "tracker://issues?label=good%20first+issue&state"),
            bound(&[("label", "good first+issue"), ("state", "")])
        );
        assert_eq!(vars(ISSUES, "tracker://issues/7"), None);
        assert_eq!(vars(ISSUES, "tracker://issues?state=%FF"), None);
        // Twice: no expansion writes that.
        assert_eq!(vars(ISSUES, "tracker://issues?state=a&state=b"), None);
        assert_eq!(
            unknown_query_keys(ISSUES, "tracker://issues?state=a&state=b"),
            None
        );
    }

    #[test]
    fn unknown_query_keys_do_not_match_and_are_named() {
        let uri = "tracker://issues?stat=open&label=bug&sort%20by=age";
        assert_eq!(vars(ISSUES, uri), None);
        assert_eq!(
            unknown_query_keys(ISSUES, uri),
            Some(vec!["stat".to_owned(), "sort by".to_owned()])
        );
        assert_eq!(
            unknown_query_keys(ISSUES, "tracker://pulls?stat=open"),
            None
        );
        assert_eq!(
            unknown_query_keys(ISSUES, "tracker://issues?state=open"),
            None
        );
    }

    #[test]
    fn queries_follow_path_variables_and_continue_literal_queries() {
        let project: &[TemplatePart] = &[
            Literal("tracker://"),
            Variable {
                name: "project",
                reserved: false,
            },
            Literal("/issues"),
            TemplatePart::Query {
                names: &["state"],
                continuation: false,
            },
            TemplatePart::Query {
                names: &["label"],
                continuation: true,
            },
        ];
        assert_eq!(
            vars(project, "tracker://mcp/issues?label=bug&state=open"),
            bound(&[("project", "mcp"), ("label", "bug"), ("state", "open")])
        );
        assert_eq!(
            vars(project, "tracker://mcp/issues"),
            bound(&[("project", "mcp")])
        );
        let search: &[TemplatePart] = &[
            Literal("tracker://search?kind=issue"),
            TemplatePart::Query {
                names: &["state"],
                continuation: true,
            },
        ];
        assert_eq!(vars(search, "tracker://search?kind=issue"), bound(&[]));
        assert_eq!(
            vars(search, "tracker://search?kind=issue&state=open"),
            bound(&[("state", "open")])
        );
        assert_eq!(vars(search, "tracker://search?kind=pr&state=open"), None);
        assert_eq!(
            variable_names(project).collect::<Vec<_>>(),
            ["project", "state", "label"]
        );
        assert_eq!(query_names(project).collect::<Vec<_>>(), ["state", "label"]);
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

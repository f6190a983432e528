//! Compile-time parsing of resource URIs and RFC 6570 URI templates
//! (level 1 `{var}`, reserved `{+var}`, and the form-style query
//! expressions `{?a,b}` and `{&c}` that end a template), so that a
//! malformed URI is a compile error and the runtime only matches.

/// One piece of a parsed template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Part {
    Literal(String),
    Variable {
        name: String,
        reserved: bool,
    },
    /// `{?a,b}` (starts the query) or `{&c}` (`continuation`: continues a
    /// query the template started before it).
    Query {
        names: Vec<String>,
        continuation: bool,
    },
}

/// A resource URI: static, or a template with at least one variable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ResourceUri {
    Static,
    Template(Vec<Part>),
}

impl ResourceUri {
    pub(crate) fn variables(&self) -> impl Iterator<Item = &str> {
        let parts: &[Part] = match self {
            ResourceUri::Static => &[],
            ResourceUri::Template(parts) => parts,
        };
        parts
            .iter()
            .flat_map(|p| match p {
                Part::Variable { name, .. } => std::slice::from_ref(name),
                Part::Query { names, .. } => names.as_slice(),
                Part::Literal(_) => &[],
            })
            .map(String::as_str)
    }

    /// Whether `name` is a variable of a query expression: it may be left
    /// out of the URI, so its parameter is an `Option`.
    pub(crate) fn is_query_variable(&self, name: &str) -> bool {
        match self {
            ResourceUri::Static => false,
            ResourceUri::Template(parts) => parts
                .iter()
                .any(|p| matches!(p, Part::Query { names, .. } if names.iter().any(|n| n == name))),
        }
    }
}

/// Parses `uri`, explaining what is wrong if it is not a valid absolute URI
/// or a supported template.
pub(crate) fn parse(uri: &str) -> Result<ResourceUri, String> {
    check_scheme(uri)?;
    if let Some(bad) = uri
        .chars()
        .find(|c| c.is_whitespace() || c.is_control() || "<>\"\\^`|".contains(*c))
    {
        return Err(format!(
            "{bad:?} is not allowed in a URI; percent-encode it"
        ));
    }
    if !uri.contains(['{', '}']) {
        return Ok(ResourceUri::Static);
    }
    let mut parts = Vec::new();
    let mut rest = uri;
    while !rest.is_empty() {
        match rest.find(['{', '}']) {
            None => {
                push_literal(&mut parts, rest)?;
                rest = "";
            }
            Some(i) if rest.as_bytes()[i] == b'}' => {
                return Err("`}` without a matching `{`".into());
            }
            Some(i) => {
                if i > 0 {
                    push_literal(&mut parts, &rest[..i])?;
                }
                let after = &rest[i + 1..];
                let close = after
                    .find(['{', '}'])
                    .filter(|&j| after.as_bytes()[j] == b'}')
                    .ok_or("`{` without a matching `}`")?;
                // The expression first: an unsupported one is named as such,
                // wherever it is.
                let part = expression(&after[..close])?;
                check_position(&parts, &part, &after[..close])?;
                parts.push(part);
                rest = &after[close + 1..];
            }
        }
    }
    let template = ResourceUri::Template(parts);
    let mut seen = Vec::new();
    for name in template.variables() {
        if seen.contains(&name) {
            return Err(format!("variable `{name}` appears twice"));
        }
        seen.push(name);
    }
    Ok(template)
}

/// Literal text, unless it would follow a query expression (which ends the
/// template).
fn push_literal(parts: &mut Vec<Part>, text: &str) -> Result<(), String> {
    if let Some(Part::Query { .. }) = parts.last() {
        return Err(format!(
            "`{text}` follows a query expression; query expressions (`{{?..}}`, `{{&..}}`) end the template"
        ));
    }
    parts.push(Part::Literal(text.to_owned()));
    Ok(())
}

/// Where an expression may stand, given the parts before it. Query
/// expressions end the template: the runtime matches everything before
/// them as a path, then reads the query's `name=value` pairs in any order.
fn check_position(parts: &[Part], part: &Part, expression: &str) -> Result<(), String> {
    let query_started = parts.iter().any(|p| match p {
        Part::Literal(text) => text.contains('?'),
        Part::Query { .. } => true,
        Part::Variable { .. } => false,
    });
    match (parts.last(), part) {
        (Some(Part::Query { .. }), Part::Variable { .. }) => Err(format!(
            "`{{{expression}}}` follows a query expression; query expressions (`{{?..}}`, `{{&..}}`) end the template"
        )),
        (Some(Part::Variable { .. }), Part::Variable { .. }) => {
            Err("two variables in a row cannot be told apart; put literal text between them".into())
        }
        (
            _,
            Part::Query {
                continuation: false,
                ..
            },
        ) if query_started => Err(format!(
            "`{{{expression}}}` starts a query, but the template already has one; continue it with `{{&{}}}`",
            &expression[1..]
        )),
        (
            _,
            Part::Query {
                continuation: true, ..
            },
        ) if !query_started => Err(format!(
            "`{{{expression}}}` continues a query, but nothing before it starts one; use `{{?{}}}`, or put `?` in the URI before it",
            &expression[1..]
        )),
        _ => Ok(()),
    }
}

fn check_scheme(uri: &str) -> Result<(), String> {
    let scheme = uri.split_once(':').map(|(s, _)| s).unwrap_or("");
    let valid = scheme
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic())
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c));
    if valid {
        Ok(())
    } else {
        Err("a resource URI must be absolute, starting with a scheme such as `file://` or `memo://`".into())
    }
}

/// The forms this runtime supports, for the messages about those it does
/// not.
const SUPPORTED: &str =
    "use `{name}`, `{+name}` (may contain `/`), or `{?name,...}` and `{&name,...}` at the end";

/// One `{...}` expression: its operator, then its variable list.
fn expression(expression: &str) -> Result<Part, String> {
    let (operator, list) = match expression.chars().next() {
        Some(op @ ('+' | '#' | '.' | '/' | ';' | '?' | '&' | '=' | ',' | '!' | '@' | '|')) => {
            (Some(op), &expression[1..])
        }
        _ => (None, expression),
    };
    let unsupported = |form: &str| {
        Err(format!(
            "{form} `{{{expression}}}` is not supported; {SUPPORTED}"
        ))
    };
    match operator {
        Some('#') => return unsupported("fragment expansion"),
        Some('.') => return unsupported("label expansion"),
        Some('/') => return unsupported("path segment expansion"),
        Some(';') => return unsupported("path-style parameter expansion"),
        Some(op @ ('=' | ',' | '!' | '@' | '|')) => {
            return Err(format!(
                "`{{{expression}}}`: RFC 6570 reserves the `{op}` operator for future extensions; {SUPPORTED}"
            ));
        }
        _ => {}
    }
    if list.contains([':', '*']) {
        return Err(format!(
            "`{{{expression}}}` uses a modifier (`:N` or `*`), which is not supported; {SUPPORTED}"
        ));
    }
    let names: Vec<&str> = list.split(',').collect();
    for name in &names {
        check_name(expression, name, names.len() > 1)?;
    }
    match operator {
        Some(op @ ('?' | '&')) => Ok(Part::Query {
            names: names.iter().map(|n| (*n).to_owned()).collect(),
            continuation: op == '&',
        }),
        _ if names.len() > 1 => Err(format!(
            "`{{{expression}}}` lists several variables; give each its own braces"
        )),
        reserved => Ok(Part::Variable {
            name: list.to_owned(),
            reserved: reserved == Some('+'),
        }),
    }
}

/// Variable names are the parameters' names: the generated code binds
/// each to the parameter of that name.
fn check_name(expression: &str, name: &str, in_list: bool) -> Result<(), String> {
    let valid = name
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    let bad = if in_list {
        format!("`{name}` in `{{{expression}}}`")
    } else {
        format!("`{{{expression}}}`")
    };
    if valid {
        Ok(())
    } else {
        Err(format!(
            "{bad} is not a valid variable name; name variables like the function's parameters, with letters, digits and `_`"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn template(uri: &str) -> Vec<Part> {
        match parse(uri) {
            Ok(ResourceUri::Template(parts)) => parts,
            other => panic!("{uri}: {other:?}"),
        }
    }

    fn lit(s: &str) -> Part {
        Part::Literal(s.into())
    }

    fn var(name: &str, reserved: bool) -> Part {
        Part::Variable {
            name: name.into(),
            reserved,
        }
    }

    fn query(names: &[&str], continuation: bool) -> Part {
        Part::Query {
            names: names.iter().map(|n| (*n).to_owned()).collect(),
            continuation,
        }
    }

    #[test]
    fn static_uris() {
        assert_eq!(parse("memo://readme"), Ok(ResourceUri::Static));
        assert_eq!(parse("file:///a/b.txt"), Ok(ResourceUri::Static));
        assert!(parse("readme").is_err());
        assert!(parse("1abc://x").is_err());
        assert!(parse("memo://a b").is_err());
    }

    #[test]
    fn templates() {
        assert_eq!(
            template("memo://notes/{id}"),
            [lit("memo://notes/"), var("id", false)]
        );
        assert_eq!(
            template("file:///{+path}.txt"),
            [lit("file:///"), var("path", true), lit(".txt")]
        );
        assert_eq!(
            template("repo://{owner}/{name}"),
            [
                lit("repo://"),
                var("owner", false),
                lit("/"),
                var("name", false)
            ]
        );
    }

    #[test]
    fn query_expressions_end_a_template() {
        let issues = parse("tracker://issues{?state,label}").unwrap();
        assert_eq!(
            issues,
            ResourceUri::Template(vec![
                lit("tracker://issues"),
                query(&["state", "label"], false)
            ])
        );
        assert_eq!(issues.variables().collect::<Vec<_>>(), ["state", "label"]);
        assert!(issues.is_query_variable("label"));
        assert_eq!(
            template("tracker://{project}/issues{?state}{&label}"),
            [
                lit("tracker://"),
                var("project", false),
                lit("/issues"),
                query(&["state"], false),
                query(&["label"], true)
            ]
        );
        assert_eq!(
            template("tracker://search?kind=issue{&state}"),
            [lit("tracker://search?kind=issue"), query(&["state"], true)]
        );
        let project = parse("tracker://{project}{?state}").unwrap();
        assert!(!project.is_query_variable("project"));
    }

    #[test]
    fn unsupported_forms_are_named() {
        let problem = |uri| parse(uri).unwrap_err();
        let supported = "use `{name}`, `{+name}` (may contain `/`), or `{?name,...}` and `{&name,...}` at the end";
        for (uri, form) in [
            ("memo://a{#section}", "fragment expansion `{#section}`"),
            ("memo://a{.ext}", "label expansion `{.ext}`"),
            ("memo://a{/path}", "path segment expansion `{/path}`"),
            (
                "memo://a{;params}",
                "path-style parameter expansion `{;params}`",
            ),
            // After a variable: the form, not "two variables in a row".
            ("memo://{id}{.ext}", "label expansion `{.ext}`"),
        ] {
            assert_eq!(
                problem(uri),
                format!("{form} is not supported; {supported}"),
                "{uri}"
            );
        }
        assert_eq!(
            problem("memo://a{=x}"),
            format!(
                "`{{=x}}`: RFC 6570 reserves the `=` operator for future extensions; {supported}"
            )
        );
        assert_eq!(
            problem("memo://a{?list*}"),
            format!(
                "`{{?list*}}` uses a modifier (`:N` or `*`), which is not supported; {supported}"
            )
        );
    }

    #[test]
    fn query_expression_errors() {
        let problem = |uri| parse(uri).unwrap_err();
        assert_eq!(
            problem("tracker://issues{?state}/open"),
            "`/open` follows a query expression; query expressions (`{?..}`, `{&..}`) end the template"
        );
        assert_eq!(
            problem("tracker://issues{?state}{id}"),
            "`{id}` follows a query expression; query expressions (`{?..}`, `{&..}`) end the template"
        );
        assert_eq!(
            problem("tracker://issues{&state}"),
            "`{&state}` continues a query, but nothing before it starts one; use `{?state}`, or put `?` in the URI before it"
        );
        assert_eq!(
            problem("tracker://issues?all{?state}"),
            "`{?state}` starts a query, but the template already has one; continue it with `{&state}`"
        );
        assert_eq!(
            problem("tracker://issues{?state,1x}"),
            "`1x` in `{?state,1x}` is not a valid variable name; name variables like the function's parameters, with letters, digits and `_`"
        );
        assert_eq!(
            problem("tracker://{state}{?state}"),
            "variable `state` appears twice"
        );
    }

    #[test]
    fn template_errors() {
        for bad in [
            "memo://{id",
            "memo://id}",
            "memo://{}",
            "memo://{?}",
            "memo://{#f}",
            "memo://{a,b}",
            "memo://{a:3}",
            "memo://{a*}",
            "memo://{a}{b}",
            "memo://{a}/{a}",
            "memo://{1a}",
            "memo://{a-b}",
        ] {
            assert!(parse(bad).is_err(), "{bad}");
        }
    }
}

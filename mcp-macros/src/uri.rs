//! Compile-time parsing of resource URIs and RFC 6570 URI templates
//! (level 1 `{var}` and reserved `{+var}`), so that a malformed URI is a
//! compile error and the runtime only matches.

/// One piece of a parsed template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Part {
    Literal(String),
    Variable { name: String, reserved: bool },
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
        parts.iter().filter_map(|p| match p {
            Part::Variable { name, .. } => Some(name.as_str()),
            Part::Literal(_) => None,
        })
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
                parts.push(Part::Literal(rest.to_owned()));
                rest = "";
            }
            Some(i) if rest.as_bytes()[i] == b'}' => {
                return Err("`}` without a matching `{`".into());
            }
            Some(i) => {
                if i > 0 {
                    parts.push(Part::Literal(rest[..i].to_owned()));
                }
                let after = &rest[i + 1..];
                let close = after
                    .find(['{', '}'])
                    .filter(|&j| after.as_bytes()[j] == b'}')
                    .ok_or("`{` without a matching `}`")?;
                if matches!(parts.last(), Some(Part::Variable { .. })) {
                    return Err("two variables in a row cannot be told apart; put literal text between them".into());
                }
                parts.push(variable(&after[..close])?);
                rest = &after[close + 1..];
            }
        }
    }
    let mut seen = Vec::new();
    for part in &parts {
        if let Part::Variable { name, .. } = part {
            if seen.contains(&name) {
                return Err(format!("variable `{name}` appears twice"));
            }
            seen.push(name);
        }
    }
    Ok(ResourceUri::Template(parts))
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

fn variable(expression: &str) -> Result<Part, String> {
    let (reserved, name) = match expression.chars().next() {
        Some('+') => (true, &expression[1..]),
        Some(op @ ('#' | '.' | '/' | ';' | '?' | '&' | '=' | ',' | '!' | '@' | '|')) => {
            return Err(format!(
                "the `{op}` operator is not supported; use `{{name}}` or `{{+name}}`"
            ));
        }
        _ => (false, expression),
    };
    if name.contains(',') {
        return Err(format!(
            "`{{{expression}}}` lists several variables; give each its own braces"
        ));
    }
    if name.contains([':', '*']) {
        return Err(format!(
            "`{{{expression}}}` uses a modifier; only `{{name}}` and `{{+name}}` are supported"
        ));
    }
    let valid = name
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !valid {
        return Err(format!(
            "`{{{expression}}}` is not a valid variable name; name variables like the function's parameters, with letters, digits and `_`"
        ));
    }
    Ok(Part::Variable {
        name: name.to_owned(),
        reserved,
    })
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
    fn template_errors() {
        for bad in [
            "memo://{id",
            "memo://id}",
            "memo://{}",
            "memo://{?q}",
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

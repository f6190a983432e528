//! A `SKILL.md`'s YAML frontmatter, rendered as the JSON object the
//! extension's entries carry.

use serde_json::{Map, Value};

use crate::MAX_DESCRIPTION;

/// The YAML between a `SKILL.md`'s opening `---` line and the next `---`
/// line, as the conformance suite finds it: a byte order mark may come
/// first, lines may end in `\r\n`, and the closing line may carry trailing
/// spaces or tabs. `None` when the text does not begin with such a block.
pub fn frontmatter_block(text: &str) -> Option<&str> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let rest = text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))?;
    let mut offset = 0;
    while let Some(newline) = rest[offset..].find('\n') {
        let end = offset + newline;
        if closing_line(&rest[end + 1..]) {
            let block = &rest[..end];
            return Some(block.strip_suffix('\r').unwrap_or(block));
        }
        offset = end + 1;
    }
    None
}

/// Whether `text` starts with a closing `---` line (trailing spaces or
/// tabs allowed, then a line end or the end of the text).
fn closing_line(text: &str) -> bool {
    let Some(rest) = text.strip_prefix("---") else {
        return false;
    };
    let rest = rest.trim_start_matches([' ', '\t']);
    rest.is_empty() || rest.starts_with('\n') || rest.starts_with("\r\n")
}

/// The frontmatter of a `SKILL.md` as a JSON object, every field as
/// written, with no field required: what a client compares, field by
/// field, with a skill's entry.
pub fn frontmatter_fields(bytes: &[u8]) -> Result<Map<String, Value>, String> {
    let text = std::str::from_utf8(bytes).map_err(|_| "SKILL.md is not UTF-8".to_owned())?;
    let block = frontmatter_block(text).ok_or_else(|| {
        "SKILL.md must begin with YAML frontmatter: a `---` line, `name:` and `description:`, and a closing `---` line".to_owned()
    })?;
    let value: Value = serde_saphyr::from_str(block)
        .map_err(|error| format!("the frontmatter is not YAML that JSON can hold: {error}"))?;
    match value {
        Value::Object(fields) => Ok(fields),
        _ => Err("the frontmatter must be a YAML mapping (`name: ...`, `description: ...`)".into()),
    }
}

/// The frontmatter of a `SKILL.md` as a JSON object, with the fields the
/// Agent Skills specification requires: `name` and `description`, strings
/// that are not empty (the description at most 1024 characters). Every
/// other field passes through as written.
pub fn parse_frontmatter(bytes: &[u8]) -> Result<Map<String, Value>, String> {
    let fields = frontmatter_fields(bytes)?;
    for required in ["name", "description"] {
        match fields.get(required) {
            Some(Value::String(text)) if !text.trim().is_empty() => {}
            Some(Value::String(_)) => {
                return Err(format!("the frontmatter's `{required}` is empty"));
            }
            Some(_) => return Err(format!("the frontmatter's `{required}` must be a string")),
            None => return Err(format!("the frontmatter has no `{required}`")),
        }
    }
    let description = fields["description"].as_str().unwrap_or_default();
    if description.chars().count() > MAX_DESCRIPTION {
        return Err(format!(
            "the frontmatter's `description` is longer than {MAX_DESCRIPTION} characters"
        ));
    }
    Ok(fields)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_block_is_found_as_the_suite_finds_it() {
        assert_eq!(frontmatter_block("---\na: 1\n---\nbody"), Some("a: 1"));
        assert_eq!(
            frontmatter_block("\u{feff}---\r\na: 1\r\n--- \t\r\nbody"),
            Some("a: 1")
        );
        assert_eq!(
            frontmatter_block("---\na: 1\nb: 2\n---"),
            Some("a: 1\nb: 2")
        );
        // The suite's expression needs a line end before the closing line.
        assert_eq!(frontmatter_block("---\n---\n"), None);
        assert_eq!(frontmatter_block("---\n\n---\n"), Some(""));
        assert_eq!(frontmatter_block("---\na: 1\n----\n"), None);
        assert_eq!(frontmatter_block("# title\n---\na: 1\n---\n"), None);
        assert_eq!(frontmatter_block("---\na: 1\n"), None);
    }

    #[test]
    fn fields_pass_through_in_order() {
        let text = b"---\nname: pdf\ndescription: Fill forms\nmetadata:\n  version: \"2.1\"\nlicense: MIT\n---\n# PDF\n";
        let fields = parse_frontmatter(text).unwrap();
        assert_eq!(
            Value::Object(fields),
            json!({"name": "pdf", "description": "Fill forms", "metadata": {"version": "2.1"}, "license": "MIT"})
        );
        let keys: Vec<_> = parse_frontmatter(text).unwrap().keys().cloned().collect();
        assert_eq!(keys, ["name", "description", "metadata", "license"]);
    }

    #[test]
    fn what_the_specification_requires_is_checked() {
        let error = |text: &str| parse_frontmatter(text.as_bytes()).unwrap_err();
        assert!(error("# no frontmatter").contains("must begin with YAML frontmatter"));
        assert!(error("---\nname: [a\n---\n").contains("not YAML"));
        assert!(error("---\n- a\n---\n").contains("mapping"));
        assert_eq!(
            error("---\ndescription: d\n---\n"),
            "the frontmatter has no `name`"
        );
        assert_eq!(
            error("---\nname: a\n---\n"),
            "the frontmatter has no `description`"
        );
        assert_eq!(
            error("---\nname: 3\ndescription: d\n---\n"),
            "the frontmatter's `name` must be a string"
        );
        assert_eq!(
            error("---\nname: a\ndescription: ''\n---\n"),
            "the frontmatter's `description` is empty"
        );
        let long = format!("---\nname: a\ndescription: {}\n---\n", "x".repeat(1025));
        assert!(error(&long).contains("longer than 1024"));
        assert_eq!(
            parse_frontmatter(&[0xff]).unwrap_err(),
            "SKILL.md is not UTF-8"
        );
    }
}

//! Skill names (the Agent Skills naming rules) and skill paths as the path
//! of a `skill://` URI.

/// A skill name by the Agent Skills specification: 1 to 64 characters,
/// lowercase ASCII letters, digits and hyphens, neither starting nor ending
/// with a hyphen, and no two hyphens in a row.
pub fn check_name(name: &str) -> Result<(), String> {
    let bytes = name.as_bytes();
    let problem = if bytes.is_empty() || bytes.len() > 64 {
        "is not 1 to 64 characters long"
    } else if !bytes
        .iter()
        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'-')
    {
        "may hold only lowercase letters, digits and hyphens"
    } else if bytes[0] == b'-' || bytes[bytes.len() - 1] == b'-' {
        "may not start or end with a hyphen"
    } else if name.contains("--") {
        "may not hold two hyphens in a row"
    } else {
        return Ok(());
    };
    Err(format!("the skill name `{name}` {problem}"))
}

/// A file's path below the skills' root, `/`-separated, as it appears in
/// its `skill://` URI: every segment a URI path segment that needs no
/// percent-encoding (letters, digits and `-._~!$&'()*+,;=:@`), and none of
/// them empty, `.` or `..`.
pub fn check_file_path(path: &str) -> Result<(), String> {
    for segment in path.split('/') {
        if segment.is_empty() || segment == "." || segment == ".." {
            return Err(format!(
                "`{path}` has an empty, `.` or `..` segment, which a URI path cannot carry"
            ));
        }
        if let Some(bad) = segment.chars().find(|c| !is_pchar(*c)) {
            return Err(format!(
                "`{path}` holds {bad:?}, which a `skill://` URI cannot carry without percent-encoding; rename it using letters, digits and `-._~`"
            ));
        }
    }
    Ok(())
}

/// A skill's path (its directory below the skills' root): a valid file
/// path whose first segment is a URI `reg-name` (it is the `skill://`
/// URI's authority, so `:` and `@` are out) and whose last segment is the
/// skill's name.
pub fn check_skill_path(path: &str, name: &str) -> Result<(), String> {
    check_file_path(path)?;
    let first = path.split('/').next().unwrap_or(path);
    if first.contains([':', '@']) {
        return Err(format!(
            "`{first}` is the authority of the skill's URI, where `:` and `@` have another meaning; rename it"
        ));
    }
    let last = path.rsplit('/').next().unwrap_or(path);
    if last != name {
        return Err(format!(
            "the directory `{last}` must be named after the skill: its frontmatter says `name: {name}`"
        ));
    }
    check_name(name)
}

/// RFC 3986's `pchar`, without percent-encoding.
fn is_pchar(c: char) -> bool {
    c.is_ascii_alphanumeric() || "-._~!$&'()*+,;=:@".contains(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_the_agent_skills_rules() {
        for good in ["a", "pdf-processing", "v2", &"a".repeat(64)] {
            assert_eq!(check_name(good), Ok(()), "{good}");
        }
        let problem = |name: &str| check_name(name).unwrap_err();
        assert!(problem("").contains("1 to 64"));
        assert!(problem(&"a".repeat(65)).contains("1 to 64"));
        assert!(problem("Pdf").contains("lowercase"));
        assert!(problem("pdf_tools").contains("lowercase"));
        assert!(problem("-pdf").contains("start or end"));
        assert!(problem("pdf-").contains("start or end"));
        assert!(problem("pdf--tools").contains("two hyphens"));
    }

    #[test]
    fn paths_are_uri_paths() {
        assert_eq!(check_file_path("acme/billing/refunds/SKILL.md"), Ok(()));
        assert_eq!(check_file_path("a/templates/eu~invoice(v2).md"), Ok(()));
        assert!(check_file_path("a/my file.md").unwrap_err().contains("' '"));
        assert!(check_file_path("a/50%.md").unwrap_err().contains("'%'"));
        assert!(check_file_path("a/é.md").is_err());
        assert!(check_file_path("a//b").unwrap_err().contains("empty"));
        assert!(check_file_path("a/../b").is_err());
    }

    #[test]
    fn a_skill_path_ends_in_its_name() {
        assert_eq!(check_skill_path("acme/billing/refunds", "refunds"), Ok(()));
        assert!(
            check_skill_path("acme/refund", "refunds")
                .unwrap_err()
                .contains("`refund`")
        );
        assert!(
            check_skill_path("user@host/refunds", "refunds")
                .unwrap_err()
                .contains("authority")
        );
        assert!(
            check_skill_path("Refunds", "Refunds")
                .unwrap_err()
                .contains("lowercase")
        );
    }
}

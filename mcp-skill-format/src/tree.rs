//! The skills in a tree of files: each directory holding a `SKILL.md` is a
//! skill, whose files are everything below it (nested skills included, as
//! the SEP says: they are its supporting files too).

use std::fmt;

use serde_json::{Map, Value};

use crate::{
    MAX_BYTES, MAX_FILES, SKILL_FILE, check_file_path, check_skill_path, parse_frontmatter,
};

/// A skill found by [`plan`].
#[derive(Debug, Clone, PartialEq)]
pub struct PlannedSkill {
    /// Its directory below the root, `/`-separated (`acme/billing/refunds`):
    /// its URI is `skill://{path}/SKILL.md`.
    pub path: String,
    /// Its `SKILL.md` frontmatter as JSON.
    pub frontmatter: Map<String, Value>,
    /// Its files, as indices into what [`plan`] was given: `SKILL.md`
    /// first, then the others by path.
    pub files: Vec<usize>,
}

/// Why a tree of files is not a set of skills: the file (or skill
/// directory) at fault, below the root, and what to change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanError {
    /// The file or directory, below the root.
    pub file: String,
    /// What is wrong, and what to do.
    pub problem: String,
}

impl fmt::Display for PlanError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.file, self.problem)
    }
}

impl std::error::Error for PlanError {}

/// The skills in `files`: `(path below the root, content)` pairs, every
/// file of the tree (what to leave out, such as hidden files, the caller
/// leaves out). Sorted by path; every file must belong to a skill, and
/// every skill must keep to the naming rules and the SEP's limits.
pub fn plan<P: AsRef<str>, B: AsRef<[u8]>>(
    files: &[(P, B)],
) -> Result<Vec<PlannedSkill>, PlanError> {
    let path = |index: usize| files[index].0.as_ref();
    for (file, _) in files {
        check_file_path(file.as_ref()).map_err(|problem| error(file.as_ref(), problem))?;
    }
    let mut roots: Vec<(&str, usize)> = Vec::new();
    for (index, (file, _)) in files.iter().enumerate() {
        let file = file.as_ref();
        if file == SKILL_FILE {
            return Err(error(
                file,
                "a skill is a directory: move this SKILL.md, with its files, into a directory named after the skill",
            ));
        }
        if let Some(root) = file.strip_suffix("/SKILL.md") {
            roots.push((root, index));
        }
    }
    roots.sort_unstable();
    let mut skills = Vec::with_capacity(roots.len());
    for (root, manifest) in &roots {
        let frontmatter = parse_frontmatter(files[*manifest].1.as_ref())
            .map_err(|problem| error(path(*manifest), problem))?;
        let name = frontmatter["name"].as_str().unwrap_or_default();
        check_skill_path(root, name).map_err(|problem| error(path(*manifest), problem))?;
        let mut members: Vec<usize> = (0..files.len())
            .filter(|&index| index != *manifest && is_below(path(index), root))
            .collect();
        members.sort_unstable_by_key(|&index| path(index));
        members.insert(0, *manifest);
        skills.push(PlannedSkill {
            path: (*root).to_owned(),
            frontmatter,
            files: members,
        });
    }
    check_covered(files, &roots)?;
    for skill in &skills {
        check_limits(files, skill)?;
    }
    Ok(skills)
}

/// Every file is in some skill's directory.
fn check_covered<P: AsRef<str>, B>(
    files: &[(P, B)],
    roots: &[(&str, usize)],
) -> Result<(), PlanError> {
    for (file, _) in files {
        let file = file.as_ref();
        if !roots.iter().any(|(root, _)| is_below(file, root)) {
            let directory = file
                .rsplit_once('/')
                .map_or(".", |(directory, _)| directory);
            return Err(error(
                file,
                format!(
                    "this file is in no skill: `{directory}` and the directories above it have no SKILL.md"
                ),
            ));
        }
    }
    Ok(())
}

/// At most [`MAX_FILES`] files and [`MAX_BYTES`] bytes.
fn check_limits<P: AsRef<str>, B: AsRef<[u8]>>(
    files: &[(P, B)],
    skill: &PlannedSkill,
) -> Result<(), PlanError> {
    if skill.files.len() > MAX_FILES {
        return Err(error(
            &skill.path,
            format!(
                "the skill has {} files; a skill may have at most {MAX_FILES} (SEP-2640)",
                skill.files.len()
            ),
        ));
    }
    let bytes: u64 = skill
        .files
        .iter()
        .map(|&index| files[index].1.as_ref().len() as u64)
        .sum();
    if bytes > MAX_BYTES {
        return Err(error(
            &skill.path,
            format!(
                "the skill's files hold {bytes} bytes; a skill may hold at most {MAX_BYTES} (16 MiB, SEP-2640)"
            ),
        ));
    }
    Ok(())
}

fn is_below(file: &str, root: &str) -> bool {
    file.strip_prefix(root)
        .is_some_and(|rest| rest.starts_with('/'))
}

fn error(file: &str, problem: impl Into<String>) -> PlanError {
    PlanError {
        file: file.to_owned(),
        problem: problem.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn skill_md(name: &str) -> Vec<u8> {
        format!("---\nname: {name}\ndescription: The {name} skill\n---\n# {name}\n").into_bytes()
    }

    #[test]
    fn nested_skills_are_files_of_the_enclosing_one() {
        let files = vec![
            ("pdf/templates/regional/eu.md", b"eu".to_vec()),
            ("pdf/SKILL.md", skill_md("pdf")),
            ("pdf/forms/SKILL.md", skill_md("forms")),
            ("acme/billing/refunds/SKILL.md", skill_md("refunds")),
            ("pdf/a.md", b"a".to_vec()),
        ];
        let skills = plan(&files).unwrap();
        let summary: Vec<(&str, Vec<usize>)> = skills
            .iter()
            .map(|s| (s.path.as_str(), s.files.clone()))
            .collect();
        assert_eq!(
            summary,
            [
                ("acme/billing/refunds", vec![3]),
                ("pdf", vec![1, 4, 2, 0]),
                ("pdf/forms", vec![2])
            ]
        );
        assert_eq!(skills[1].frontmatter["description"], "The pdf skill");
    }

    #[test]
    fn every_problem_names_its_file() {
        let problem = |files: &[(&str, Vec<u8>)]| plan(files).unwrap_err();
        let stray = problem(&[
            ("pdf/SKILL.md", skill_md("pdf")),
            ("notes/todo.md", b"x".to_vec()),
        ]);
        assert_eq!(stray.file, "notes/todo.md");
        assert!(
            stray
                .problem
                .contains("`notes` and the directories above it have no SKILL.md")
        );
        let root = problem(&[("SKILL.md", skill_md("pdf"))]);
        assert!(root.problem.contains("a skill is a directory"));
        let misnamed = problem(&[("pdf-tools/SKILL.md", skill_md("pdf"))]);
        assert_eq!(misnamed.file, "pdf-tools/SKILL.md");
        assert!(misnamed.problem.contains("must be named after the skill"));
        let no_yaml = problem(&[("pdf/SKILL.md", b"# PDF".to_vec())]);
        assert!(no_yaml.problem.contains("must begin with YAML frontmatter"));
        let spaced = problem(&[
            ("pdf/SKILL.md", skill_md("pdf")),
            ("pdf/my notes.md", vec![]),
        ]);
        assert_eq!(spaced.file, "pdf/my notes.md");
    }

    #[test]
    fn the_limits_hold() {
        let mut files = vec![("pdf/SKILL.md".to_owned(), skill_md("pdf"))];
        files.extend((0..MAX_FILES).map(|i| (format!("pdf/{i}.md"), vec![])));
        let error = plan(&files).unwrap_err();
        assert_eq!(error.file, "pdf");
        assert!(error.problem.contains("513 files"));
        let big = vec![
            ("pdf/SKILL.md".to_owned(), skill_md("pdf")),
            ("pdf/big.bin".to_owned(), vec![0; MAX_BYTES as usize]),
        ];
        assert!(plan(&big).unwrap_err().problem.contains("at most 16777216"));
    }
}

//! One skill: its URI, frontmatter and files, with what the extension's
//! answers need (digests, sizes, the entry's JSON) computed once, when the
//! skill is made.

use std::fmt;
use std::sync::Arc;

use bytes::Bytes;
use mcp_runtime_skill_format as format;
use serde_json::{Map, Value};

/// The URI scheme skills are served under.
pub(crate) const SCHEME: &str = "skill://";

/// A skill: a directory with a `SKILL.md` and its supporting files, served
/// as `skill://{path}/...` resources. Cheap to clone.
///
/// Made from files with [`Skill::from_files`], loaded with the others of a
/// directory by [`Skills::load_dir`](super::Skills::load_dir), or embedded
/// at compile time by [`skills!`](crate::skills!). Either way the files
/// are checked as the Agent Skills specification and SEP-2640 say, and
/// their digests are computed once, here.
#[derive(Clone)]
pub struct Skill {
    inner: Arc<Inner>,
}

struct Inner {
    path: String,
    uri: String,
    frontmatter: Map<String, Value>,
    files: Vec<SkillFile>,
    /// The skill's entry in `skills/list` and `skills/get`, as JSON text.
    entry: String,
}

/// One file of a skill.
#[derive(Clone, Debug)]
pub(crate) struct SkillFile {
    pub(crate) uri: String,
    pub(crate) bytes: Bytes,
    pub(crate) mime: &'static str,
    pub(crate) digest: String,
}

/// Why files are not a skill (or a set of skills): the file or directory
/// at fault, relative to the skill's root, and what to change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillError {
    /// The file or directory.
    pub file: String,
    /// What is wrong.
    pub problem: String,
}

impl fmt::Display for SkillError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.file, self.problem)
    }
}

impl std::error::Error for SkillError {}

impl From<format::PlanError> for SkillError {
    fn from(error: format::PlanError) -> Self {
        SkillError {
            file: error.file,
            problem: error.problem,
        }
    }
}

impl fmt::Debug for Skill {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Skill")
            .field("uri", &self.inner.uri)
            .field("files", &self.inner.files.len())
            .finish_non_exhaustive()
    }
}

impl Skill {
    /// The skill at `path` (such as `git-workflow` or `acme/billing/refunds`,
    /// its last segment the skill's name) made of `files`: each file's path
    /// within the skill (`SKILL.md`, `templates/invoice.md`) and its bytes.
    /// Checked as [`skills!`](crate::skills!) checks at compile time.
    pub fn from_files<P, B>(
        path: &str,
        files: impl IntoIterator<Item = (P, B)>,
    ) -> Result<Skill, SkillError>
    where
        P: AsRef<str>,
        B: Into<Bytes>,
    {
        let files: Vec<(String, Bytes)> = files
            .into_iter()
            .map(|(file, bytes)| (format!("{path}/{}", file.as_ref()), bytes.into()))
            .collect();
        let planned = format::plan(&files)?;
        let Some(skill) = planned.into_iter().find(|skill| skill.path == path) else {
            return Err(SkillError {
                file: path.to_owned(),
                problem: "the skill has no SKILL.md".into(),
            });
        };
        let members = skill.files.iter().map(|&index| {
            let (file, bytes) = &files[index];
            let digest = format::digest(bytes);
            (file.as_str(), bytes.clone(), digest)
        });
        Ok(Skill::new(skill.path, skill.frontmatter, members))
    }

    /// A skill whose files were checked already: `files` are `(path below
    /// the skills' root, bytes, digest)`, `SKILL.md` first.
    pub(crate) fn new<'a>(
        path: String,
        frontmatter: Map<String, Value>,
        files: impl Iterator<Item = (&'a str, Bytes, String)>,
    ) -> Skill {
        let files: Vec<SkillFile> = files
            .map(|(file, bytes, digest)| SkillFile {
                uri: format!("{SCHEME}{file}"),
                mime: format::mime_type(file),
                bytes,
                digest,
            })
            .collect();
        let uri = format!("{SCHEME}{path}/{}", format::SKILL_FILE);
        let entry = entry(&uri, &frontmatter, &files);
        Skill {
            inner: Arc::new(Inner {
                path,
                uri,
                frontmatter,
                files,
                entry,
            }),
        }
    }

    /// The URI of its `SKILL.md`, which identifies it:
    /// `skill://acme/billing/refunds/SKILL.md`.
    pub fn uri(&self) -> &str {
        &self.inner.uri
    }

    /// Its path below the skills' root: `acme/billing/refunds`.
    pub fn path(&self) -> &str {
        &self.inner.path
    }

    /// Its name (the frontmatter's `name`, the path's last segment).
    pub fn name(&self) -> &str {
        self.frontmatter_str("name")
    }

    /// Its description (the frontmatter's `description`).
    pub fn description(&self) -> &str {
        self.frontmatter_str("description")
    }

    /// Its `SKILL.md` frontmatter, as JSON.
    pub fn frontmatter(&self) -> &Map<String, Value> {
        &self.inner.frontmatter
    }

    /// Its entry in `skills/list` and `skills/get`, as JSON text.
    pub(crate) fn entry(&self) -> &str {
        &self.inner.entry
    }

    /// Its files, `SKILL.md` first.
    pub(crate) fn files(&self) -> &[SkillFile] {
        &self.inner.files
    }

    fn frontmatter_str(&self, field: &str) -> &str {
        self.inner.frontmatter[field].as_str().unwrap_or_default()
    }
}

/// `{"uri", "frontmatter", "resources": [{"uri", "digest", "size"}...]}`.
fn entry(uri: &str, frontmatter: &Map<String, Value>, files: &[SkillFile]) -> String {
    let resources: Vec<Value> = files
        .iter()
        .map(|file| {
            serde_json::json!({
                "uri": file.uri,
                "digest": file.digest,
                "size": file.bytes.len(),
            })
        })
        .collect();
    let entry = serde_json::json!({
        "uri": uri,
        "frontmatter": frontmatter,
        "resources": resources,
    });
    entry.to_string()
}

//! One skill: its URI, frontmatter and files, with what the extension's
//! answers need (digests, sizes, the entry's JSON) computed once, when the
//! skill is made.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use bytes::Bytes;
use mcp_runtime_skill_format as format;
use serde_json::{Map, Value};

use crate::context::Context;
use crate::resource::ReadError;

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
    /// For a generated skill, what writes its `SKILL.md` below the
    /// frontmatter, on each read.
    generate: Option<Generate>,
}

/// The future of a generated skill's instructions: the text of `SKILL.md`
/// after its frontmatter.
pub type InstructionsFuture = Pin<Box<dyn Future<Output = Result<String, ReadError>>>>;

type Generate = Arc<dyn Fn(Context) -> InstructionsFuture + Send + Sync>;

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

    /// A skill whose instructions are written when they are read (from a
    /// database, say): `generate` returns the text of `SKILL.md` below its
    /// frontmatter, which the server writes from `frontmatter` (it holds
    /// `name`, the path's last segment, and `description`). The skill has
    /// no other file, and its entry in `skills/list` has no `resources`:
    /// content that changes cannot be digested beforehand (SEP-2640 allows
    /// this for generated skills, and hosts may decline to load them).
    ///
    /// ```
    /// use mcp_runtime::skills::{Skill, Skills};
    ///
    /// let frontmatter = serde_json::json!({
    ///     "name": "on-call",
    ///     "description": "Who is on call this week, and how to page them.",
    /// });
    /// let skill = Skill::generated("team/on-call", frontmatter, |_ctx| async {
    ///     Ok("Page Ada Lovelace through the `page` tool.\n".to_owned())
    /// })
    /// .unwrap();
    /// let skills = Skills::new();
    /// skills.add(skill).unwrap();
    /// ```
    pub fn generated<F, Fut>(
        path: &str,
        frontmatter: Value,
        generate: F,
    ) -> Result<Skill, SkillError>
    where
        F: Fn(Context) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<String, ReadError>> + 'static,
    {
        let file = format!("{path}/{}", format::SKILL_FILE);
        let refused = |problem: &str| SkillError {
            file: file.clone(),
            problem: problem.to_owned(),
        };
        let Value::Object(frontmatter) = frontmatter else {
            return Err(refused("the frontmatter must be a JSON object"));
        };
        let header = render_frontmatter(&frontmatter);
        let planned = format::plan(&[(file.as_str(), header.as_bytes())])?;
        let Some(skill) = planned.into_iter().find(|skill| skill.path == path) else {
            return Err(refused("the skill's path is not a skill directory"));
        };
        if skill.frontmatter != frontmatter {
            return Err(refused(
                "the frontmatter does not read back the same from YAML; use strings, numbers, booleans, arrays and objects",
            ));
        }
        let generate: Generate = Arc::new(move |context| Box::pin(generate(context)));
        let members = std::iter::once((file.as_str(), Bytes::from(header), String::new()));
        Ok(Skill::build(
            skill.path,
            frontmatter,
            members,
            Some(generate),
        ))
    }

    /// A skill whose files were checked already: `files` are `(path below
    /// the skills' root, bytes, digest)`, `SKILL.md` first.
    pub(crate) fn new<'a>(
        path: String,
        frontmatter: Map<String, Value>,
        files: impl Iterator<Item = (&'a str, Bytes, String)>,
    ) -> Skill {
        Skill::build(path, frontmatter, files, None)
    }

    fn build<'a>(
        path: String,
        frontmatter: Map<String, Value>,
        files: impl Iterator<Item = (&'a str, Bytes, String)>,
        generate: Option<Generate>,
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
        let listed = generate.is_none().then_some(files.as_slice());
        let entry = entry(&uri, &frontmatter, listed);
        Skill {
            inner: Arc::new(Inner {
                path,
                uri,
                frontmatter,
                files,
                entry,
                generate,
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

    /// Whether its `SKILL.md` is written on each read (see
    /// [`generated`](Self::generated)).
    pub fn is_generated(&self) -> bool {
        self.inner.generate.is_some()
    }

    /// The text of a generated skill's `SKILL.md`, written now: its
    /// frontmatter, then what the generator returns. `None` for a skill
    /// whose files are fixed.
    pub(crate) fn generate(&self, context: Context) -> Option<InstructionsFuture> {
        let generate = self.inner.generate.clone()?;
        let header = self.inner.files[0].bytes.clone();
        Some(Box::pin(async move {
            let body = generate(context).await?;
            let header = String::from_utf8_lossy(&header);
            Ok(format!("{header}{body}"))
        }))
    }

    fn frontmatter_str(&self, field: &str) -> &str {
        self.inner.frontmatter[field].as_str().unwrap_or_default()
    }
}

/// `{"uri", "frontmatter", "resources": [{"uri", "digest", "size"}...]}`,
/// without `resources` for a generated skill (`files` is `None`).
fn entry(uri: &str, frontmatter: &Map<String, Value>, files: Option<&[SkillFile]>) -> String {
    let mut entry = serde_json::json!({
        "uri": uri,
        "frontmatter": frontmatter,
    });
    if let Some(files) = files {
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
        entry["resources"] = Value::Array(resources);
    }
    entry.to_string()
}

/// `frontmatter` as a YAML block: one `key: value` line per field, each
/// value in JSON form (JSON's strings, numbers, arrays and objects are
/// YAML's flow forms), so that hosts' YAML parsers read it back exactly.
fn render_frontmatter(frontmatter: &Map<String, Value>) -> String {
    let mut block = String::from("---\n");
    for (key, value) in frontmatter {
        let plain = !key.is_empty()
            && key
                .bytes()
                .all(|byte| byte.is_ascii_alphanumeric() || byte == b'-' || byte == b'_');
        if plain {
            block.push_str(key);
        } else {
            block.push_str(&Value::String(key.clone()).to_string());
        }
        block.push_str(": ");
        block.push_str(&value.to_string());
        block.push('\n');
    }
    block.push_str("---\n\n");
    block
}

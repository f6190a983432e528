//! The client side of the extension: skills listed without fetching a
//! file, and loaded lazily, every fetched file verified against the
//! skill's entry before it is handed back.
//!
//! - Listing ([`Client::list_skills`]) and getting an entry
//!   ([`Client::get_skill`]) read entries only: no file is fetched on
//!   connection, listing or approval (the SEP: "Hosts MUST NOT retrieve a
//!   skill's files ahead of need").
//! - [`Client::load_skill`] fetches the `SKILL.md`, checks its size and
//!   digest against the entry, and compares its frontmatter field by field
//!   with the entry's.
//! - [`Client::read_skill_file`] fetches one supporting file of a loaded
//!   skill: only a file the entry lists, checked the same way.
//!
//! A failed check is a [`SkillLoadError`] naming the file; the content is
//! dropped, never returned.
//!
//! ```standalone_crate
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # let skills = mcp_runtime::skills!("tests/skills");
//! # let server = mcp_runtime::ServerBuilder::new("docs", "1.0.0").with(&skills).build()?;
//! use mcp_runtime::client::{Client, InProcess};
//!
//! let mut client = Client::new(InProcess::new(server));
//! let entries = client.list_skills().await?;
//! let entry = entries.iter().find(|e| e.name() == Some("pdf-processing")).unwrap();
//! let skill = client.load_skill(entry).await?;
//! assert!(skill.text().starts_with("---\nname: pdf-processing\n"));
//! let forms = client.read_skill_file(&skill, "references/FORMS.md").await?;
//! assert!(forms.text().is_some());
//! # Ok(())
//! # }
//! ```

use std::fmt;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use mcp_runtime_skill_format as format;
use serde::{Deserialize, Deserializer};
use serde_json::{Map, Value, json};

use crate::client::{Client, ClientError, Outcome, Transport};
use crate::protocol::ResourceContents;

/// One skill's entry, as `skills/list` and `skills/get` give it.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[non_exhaustive]
pub struct SkillEntry {
    /// The URI of the skill's `SKILL.md`.
    pub uri: String,
    /// The `SKILL.md` frontmatter, as JSON.
    pub frontmatter: Map<String, Value>,
    /// Every file of the skill with its digest (and size), or `None` for a
    /// generated skill whose content has no stable digest (`resources`
    /// omitted, or `"dynamic"`).
    #[serde(default, deserialize_with = "listed_files")]
    pub resources: Option<Vec<SkillFile>>,
}

impl SkillEntry {
    /// The frontmatter's `name`.
    pub fn name(&self) -> Option<&str> {
        self.frontmatter.get("name").and_then(Value::as_str)
    }

    /// The frontmatter's `description`.
    pub fn description(&self) -> Option<&str> {
        self.frontmatter.get("description").and_then(Value::as_str)
    }

    /// The skill's root directory: its URI without `/SKILL.md`.
    pub fn root(&self) -> &str {
        self.uri
            .strip_suffix(format::SKILL_FILE)
            .and_then(|root| root.strip_suffix('/'))
            .unwrap_or(&self.uri)
    }

    /// The listed file at `uri`.
    fn file(&self, uri: &str) -> Option<&SkillFile> {
        self.resources.as_deref()?.iter().find(|f| f.uri == uri)
    }
}

/// `resources`: an array of files, or `"dynamic"` (the pinned suite's
/// spelling) or nothing (the SEP's) for a generated skill.
fn listed_files<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<Vec<SkillFile>>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Listed {
        Files(Vec<SkillFile>),
        Dynamic(String),
    }
    match Listed::deserialize(deserializer)? {
        Listed::Files(files) => Ok(Some(files)),
        Listed::Dynamic(word) if word == "dynamic" => Ok(None),
        Listed::Dynamic(other) => Err(serde::de::Error::custom(format!(
            "`resources` is an array of files or \"dynamic\", not {other:?}"
        ))),
    }
}

/// One file of a skill's entry.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[non_exhaustive]
pub struct SkillFile {
    /// The file's resource URI.
    pub uri: String,
    /// `sha256:` and the SHA-256 of its bytes, in lowercase hex.
    pub digest: String,
    /// Its length in bytes, where the server gives it.
    #[serde(default)]
    pub size: Option<u64>,
}

/// A skill whose `SKILL.md` was fetched and verified: the entry it was
/// verified against (which its supporting files are held to) and the file.
#[derive(Clone, Debug)]
pub struct LoadedSkill {
    entry: SkillEntry,
    skill_md: SkillContent,
}

impl LoadedSkill {
    /// The entry the skill was loaded from.
    pub fn entry(&self) -> &SkillEntry {
        &self.entry
    }

    /// The verified `SKILL.md`.
    pub fn skill_md(&self) -> &SkillContent {
        &self.skill_md
    }

    /// The `SKILL.md` text (frontmatter and instructions).
    pub fn text(&self) -> &str {
        self.skill_md.text().unwrap_or_default()
    }
}

/// A verified file of a skill.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SkillContent {
    /// The file's URI.
    pub uri: String,
    /// Its MIME type, as the server gave it.
    pub mime_type: Option<String>,
    /// Its bytes: the ones the digest covers.
    pub bytes: Vec<u8>,
}

impl SkillContent {
    /// The bytes as text, if they are UTF-8.
    pub fn text(&self) -> Option<&str> {
        std::str::from_utf8(&self.bytes).ok()
    }
}

/// Why a skill or one of its files was not loaded. Content that fails a
/// check is dropped: no error carries it.
#[derive(Debug)]
#[non_exhaustive]
pub enum SkillLoadError {
    /// The request failed.
    Request(ClientError),
    /// The file is not in the skill's entry: a read of an unlisted file
    /// is a verification failure (the SEP: "an unlisted file is a change
    /// to the skill").
    NotListed {
        /// The file asked for.
        uri: String,
    },
    /// The file is not what the entry says: its size, its digest, or (for
    /// `SKILL.md`) its frontmatter differs.
    Mismatch {
        /// The file.
        uri: String,
        /// What differs.
        problem: String,
    },
    /// The entry lists no files (a generated skill), so nothing it serves
    /// can be verified; [`Client::load_unverifiable_skill`] loads it anyway.
    Unverifiable {
        /// The skill's URI.
        uri: String,
    },
    /// The server answered the read with something that is not the file.
    Malformed {
        /// The file.
        uri: String,
        /// What was wrong.
        problem: String,
    },
}

impl fmt::Display for SkillLoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SkillLoadError::Request(error) => write!(f, "{error}"),
            SkillLoadError::NotListed { uri } => write!(
                f,
                "{uri}: refused, the skill's entry does not list this file"
            ),
            SkillLoadError::Mismatch { uri, problem } => {
                write!(f, "{uri}: verification failed, {problem}; not loaded")
            }
            SkillLoadError::Unverifiable { uri } => write!(
                f,
                "{uri}: the skill's entry lists no files and digests (a generated skill), so its content cannot be verified; not loaded"
            ),
            SkillLoadError::Malformed { uri, problem } => write!(f, "{uri}: {problem}"),
        }
    }
}

impl std::error::Error for SkillLoadError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            SkillLoadError::Request(error) => Some(error),
            _ => None,
        }
    }
}

impl From<ClientError> for SkillLoadError {
    fn from(error: ClientError) -> Self {
        SkillLoadError::Request(error)
    }
}

impl<T: Transport> Client<T> {
    /// `skills/list`, every page: the entries only, no file fetched.
    pub async fn list_skills(&mut self) -> Result<Vec<SkillEntry>, ClientError> {
        let entries = self.list_json(crate::client::ListKind::Skills).await?;
        entries.iter().map(entry_from).collect()
    }

    /// `skills/get`: the entry of the skill whose `SKILL.md` is at `uri`,
    /// listed or not.
    pub async fn get_skill(&mut self, uri: &str) -> Result<SkillEntry, ClientError> {
        let (result, _) = self.request("skills/get", json!({"uri": uri})).await?;
        entry_from(&result["skill"])
    }

    /// Loads a skill: fetches its `SKILL.md` and verifies it against
    /// `entry` (size, digest, and the frontmatter field by field). A skill
    /// whose entry lists no files is refused
    /// ([`SkillLoadError::Unverifiable`]).
    pub async fn load_skill(&mut self, entry: &SkillEntry) -> Result<LoadedSkill, SkillLoadError> {
        if entry.resources.is_none() {
            return Err(SkillLoadError::Unverifiable {
                uri: entry.uri.clone(),
            });
        }
        self.load_unverifiable_skill(entry).await
    }

    /// [`load_skill`](Self::load_skill), also for a generated skill whose
    /// entry lists no files: its `SKILL.md` frontmatter is still compared
    /// with the entry's, but no digest can be checked.
    pub async fn load_unverifiable_skill(
        &mut self,
        entry: &SkillEntry,
    ) -> Result<LoadedSkill, SkillLoadError> {
        let skill_md = self.fetch_verified(entry, &entry.uri).await?;
        compare_frontmatter(entry, &skill_md)?;
        Ok(LoadedSkill {
            entry: entry.clone(),
            skill_md,
        })
    }

    /// Fetches one file of a loaded skill, by its URI or its path in the
    /// skill (`references/FORMS.md`), verified against the entry the skill
    /// was loaded from. A file the entry does not list is refused without
    /// a request.
    pub async fn read_skill_file(
        &mut self,
        skill: &LoadedSkill,
        file: &str,
    ) -> Result<SkillContent, SkillLoadError> {
        let uri = resolve(skill.entry.root(), file);
        // Within the skill's directory, with no `.` or `..` segment: what a
        // generated skill (no list to hold reads to) may be asked for.
        let inside = uri
            .strip_prefix(skill.entry.root())
            .and_then(|rest| rest.strip_prefix('/'))
            .is_some_and(|path| format::check_file_path(path).is_ok());
        if !inside {
            return Err(SkillLoadError::NotListed { uri });
        }
        self.fetch_verified(&skill.entry, &uri).await
    }

    /// `resources/read` of `uri`, held to its listing in `entry` (when the
    /// entry lists files): unlisted, a different size or a different digest
    /// is an error, and the bytes are dropped.
    async fn fetch_verified(
        &mut self,
        entry: &SkillEntry,
        uri: &str,
    ) -> Result<SkillContent, SkillLoadError> {
        let listed = match &entry.resources {
            Some(_) => Some(entry.file(uri).ok_or_else(|| SkillLoadError::NotListed {
                uri: uri.to_owned(),
            })?),
            None => None,
        };
        let content = self.fetch(uri).await?;
        if let Some(listed) = listed {
            verify(listed, &content)?;
        }
        Ok(content)
    }

    async fn fetch(&mut self, uri: &str) -> Result<SkillContent, SkillLoadError> {
        let malformed = |problem: &str| SkillLoadError::Malformed {
            uri: uri.to_owned(),
            problem: problem.to_owned(),
        };
        let response = self.read_resource(uri).await?;
        let Outcome::Complete(result) = response.outcome else {
            return Err(malformed(
                "the server asked a question or started a task instead of returning the file",
            ));
        };
        let contents = result.contents.into_iter().find(|c| match c {
            ResourceContents::Text(text) => text.uri == uri,
            ResourceContents::Blob(blob) => blob.uri == uri,
        });
        match contents {
            Some(ResourceContents::Text(text)) => Ok(SkillContent {
                uri: text.uri,
                mime_type: text.mime_type,
                bytes: text.text.into_bytes(),
            }),
            Some(ResourceContents::Blob(blob)) => Ok(SkillContent {
                bytes: STANDARD
                    .decode(&blob.blob)
                    .map_err(|_| malformed("the blob is not base64"))?,
                uri: blob.uri,
                mime_type: blob.mime_type,
            }),
            None => Err(malformed("the read returned no contents for this URI")),
        }
    }
}

fn entry_from(value: &Value) -> Result<SkillEntry, ClientError> {
    SkillEntry::deserialize(value)
        .map_err(|error| ClientError::Malformed(format!("a skill entry: {error}")))
}

/// `file` as a URI: itself if it is one, else a path under `root`.
fn resolve(root: &str, file: &str) -> String {
    if file.contains("://") {
        file.to_owned()
    } else {
        format!("{root}/{}", file.trim_start_matches('/'))
    }
}

/// The size first (cheap, and a mismatch whether or not a digest is
/// computed), then the digest.
fn verify(listed: &SkillFile, content: &SkillContent) -> Result<(), SkillLoadError> {
    let mismatch = |problem: String| SkillLoadError::Mismatch {
        uri: listed.uri.clone(),
        problem,
    };
    let size = content.bytes.len() as u64;
    if let Some(expected) = listed.size
        && expected != size
    {
        return Err(mismatch(format!(
            "{size} bytes where the entry says {expected}"
        )));
    }
    let digest = format::digest(&content.bytes);
    if digest != listed.digest {
        return Err(mismatch(format!(
            "digest {digest} where the entry says {}",
            listed.digest
        )));
    }
    Ok(())
}

/// The SEP: "hosts MUST parse its YAML frontmatter and compare it
/// field-by-field against the entry's frontmatter".
fn compare_frontmatter(entry: &SkillEntry, skill_md: &SkillContent) -> Result<(), SkillLoadError> {
    let mismatch = |problem: String| SkillLoadError::Mismatch {
        uri: entry.uri.clone(),
        problem,
    };
    let fields = format::frontmatter_fields(&skill_md.bytes).map_err(mismatch)?;
    let differing = fields
        .keys()
        .chain(entry.frontmatter.keys())
        .find(|key| fields.get(*key) != entry.frontmatter.get(*key));
    match differing {
        Some(key) => Err(mismatch(format!(
            "the frontmatter's `{key}` is {} in the file and {} in the entry",
            shown(fields.get(key)),
            shown(entry.frontmatter.get(key))
        ))),
        None => Ok(()),
    }
}

fn shown(value: Option<&Value>) -> String {
    value.map_or_else(|| "absent".to_owned(), Value::to_string)
}

impl crate::testing::TestClient {
    /// `skills/list`, every page. Panics if the server refuses it.
    pub async fn list_skills(&mut self) -> Vec<SkillEntry> {
        let listed = self.client().list_skills().await;
        listed.unwrap_or_else(|error| panic!("skills/list failed: {error}"))
    }

    /// Loads the skill whose `SKILL.md` is at `uri` as a host would:
    /// `skills/get`, then its `SKILL.md`, verified against the entry.
    /// Panics if the server refuses or verification fails.
    pub async fn load_skill(&mut self, uri: &str) -> LoadedSkill {
        let client = self.client();
        let entry = client.get_skill(uri).await;
        let entry = entry.unwrap_or_else(|error| panic!("skills/get {uri} failed: {error}"));
        let loaded = client.load_skill(&entry).await;
        loaded.unwrap_or_else(|error| panic!("{error}"))
    }

    /// One file of a loaded skill (its URI, or its path in the skill),
    /// verified. Panics if it is refused or fails verification.
    pub async fn read_skill_file(&mut self, skill: &LoadedSkill, file: &str) -> SkillContent {
        let read = self.client().read_skill_file(skill, file).await;
        read.unwrap_or_else(|error| panic!("{error}"))
    }
}

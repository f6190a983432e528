//! The Skills extension (`io.modelcontextprotocol/skills`, SEP-2640):
//! Agent Skills served with the server they teach.
//!
//! A skill is a directory with a `SKILL.md` (YAML frontmatter with `name`
//! and `description`, then instructions) and any supporting files. Each
//! file is a resource, `skill://{skill-path}/{file}`; `skills/list` and
//! `skills/get` give each skill's entry (its frontmatter, and every file
//! with its SHA-256 digest and size), so that a host can verify what it
//! loads; `resources/directory/read` lists a skill's directories.
//!
//! Skills that ship with the binary are declared with [`skills!`], which
//! embeds a directory of skills and checks it at compile time: a skill
//! without `SKILL.md`, frontmatter that is not YAML or lacks `name` or
//! `description`, a directory not named after its skill, a name against
//! the naming rules, a file name a URI cannot carry, or a skill over the
//! SEP's limits (512 files, 16 MiB) is a compile error naming the file.
//!
//! ```
//! let skills = mcp_runtime::skills!("tests/skills");
//! let server = mcp_runtime::server!().with(&skills).build();
//! # let _ = server;
//! ```
//!
//! Skills that exist only while the server runs (loaded from a directory
//! named on the command line, or generated) are [`Skill`]s added to a
//! [`Skills`] at any time: `resources/list` follows, and subscribed
//! clients are told (`notifications/resources/list_changed`).
//!
//! [`skills!`]: crate::skills!

#[cfg(feature = "client")]
mod client;
mod load;
mod methods;
mod provider;
mod skill;

use std::collections::BTreeMap;
use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};

use arc_swap::ArcSwap;
use bytes::Bytes;

#[cfg(feature = "client")]
#[cfg_attr(docsrs, doc(cfg(feature = "client")))]
pub use self::client::{LoadedSkill, SkillContent, SkillEntry, SkillFile, SkillLoadError};
pub use self::skill::{InstructionsFuture, Skill, SkillError};
use crate::catalog::ProviderHandle;
use crate::extension::Extension;

use crate::protocol::{CacheHint, CacheScope};

/// The extension's identifier.
pub const EXTENSION_ID: &str = "io.modelcontextprotocol/skills";

/// A set of skills a server serves. Cheap to clone: clones share the set,
/// so a skill added through one is served by every server given another.
#[derive(Clone)]
pub struct Skills {
    shared: Arc<Shared>,
    options: Options,
}

#[derive(Default)]
struct Shared {
    set: ArcSwap<Set>,
    /// Edits, one at a time (the set is read without a lock).
    edit: Mutex<()>,
    /// The catalogs that serve the skills' files, to refresh on a change.
    handles: Mutex<Vec<ProviderHandle>>,
}

#[derive(Clone, Copy, Debug)]
struct Options {
    page_size: usize,
    cache: CacheHint,
}

/// The skills by URI, and every file by URI.
#[derive(Default)]
pub(crate) struct Set {
    pub(crate) skills: BTreeMap<String, Skill>,
    /// Each file, with the skill that holds it and its index there (a
    /// nested skill's files are its enclosing skill's too: either one).
    pub(crate) files: BTreeMap<String, (Skill, usize)>,
}

impl fmt::Debug for Skills {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let set = self.shared.set.load();
        f.debug_struct("Skills")
            .field("skills", &set.skills.keys().collect::<Vec<_>>())
            .field("page_size", &self.options.page_size)
            .finish_non_exhaustive()
    }
}

impl Default for Skills {
    fn default() -> Self {
        Skills::new()
    }
}

impl Skills {
    /// An empty set.
    pub fn new() -> Skills {
        Skills {
            shared: Arc::default(),
            options: Options {
                page_size: 50,
                cache: CacheHint::new(0, CacheScope::Private),
            },
        }
    }

    /// How many entries a page of `skills/list` (and of
    /// `resources/directory/read`) holds: 50 by default.
    #[must_use]
    pub fn page_size(mut self, page_size: usize) -> Self {
        self.options.page_size = page_size.max(1);
        self
    }

    /// The caching hint of `skills/list` and `skills/get` results (`ttlMs`
    /// and `cacheScope`): by default 0 and `private`, as for the server's
    /// lists.
    #[must_use]
    pub fn cache(mut self, hint: CacheHint) -> Self {
        self.options.cache = hint;
        self
    }

    /// Adds `skill`. Its URI must be new, and a file it shares with a
    /// skill already here (a nested skill's) must have the same content.
    pub fn add(&self, skill: Skill) -> Result<(), SkillError> {
        self.edit(|skills| {
            if skills
                .insert(skill.uri().to_owned(), skill.clone())
                .is_some()
            {
                return Err(SkillError {
                    file: skill.path().to_owned(),
                    problem: format!("a skill is served at {} already", skill.uri()),
                });
            }
            Ok(true)
        })
        .map(drop)
    }

    /// Removes the skill whose `SKILL.md` is at `uri`; `false` if there
    /// was none.
    pub fn remove(&self, uri: &str) -> bool {
        self.edit(|skills| Ok(skills.remove(uri).is_some()))
            .unwrap_or(false)
    }

    /// Replaces every skill with `skills` (a directory loaded again, say).
    pub fn replace(&self, skills: impl IntoIterator<Item = Skill>) -> Result<(), SkillError> {
        let fresh: BTreeMap<String, Skill> = skills
            .into_iter()
            .map(|skill| (skill.uri().to_owned(), skill))
            .collect();
        self.edit(move |skills| {
            *skills = fresh;
            Ok(true)
        })
        .map(drop)
    }

    /// The skill whose `SKILL.md` is at `uri`.
    pub fn get(&self, uri: &str) -> Option<Skill> {
        self.shared.set.load().skills.get(uri).cloned()
    }

    /// Every skill, by URI.
    pub fn list(&self) -> Vec<Skill> {
        self.shared.set.load().skills.values().cloned().collect()
    }

    /// The extension, serving `skills/list`, `skills/get` and
    /// `resources/directory/read` over these skills. Give the server
    /// the skills themselves (`.with(&skills)`) rather than this alone: it serves the
    /// skills' files too.
    pub fn extension(&self) -> Extension {
        methods::extension(self)
    }

    /// The set now.
    pub(crate) fn set(&self) -> arc_swap::Guard<Arc<Set>> {
        self.shared.set.load()
    }

    /// Edits the skills, then indexes their files again and refreshes the
    /// catalogs that list them.
    /// `change` says whether it changed anything.
    fn edit(
        &self,
        change: impl FnOnce(&mut BTreeMap<String, Skill>) -> Result<bool, SkillError>,
    ) -> Result<bool, SkillError> {
        let guard = self
            .shared
            .edit
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let mut skills = self.shared.set.load().skills.clone();
        if !change(&mut skills)? {
            return Ok(false);
        }
        let set = index(skills)?;
        self.shared.set.store(Arc::new(set));
        drop(guard);
        let handles = self
            .shared
            .handles
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        for handle in handles {
            if let Err(error) = handle.refresh() {
                tracing::error!(%error, "the skills' files could not be listed again");
            }
        }
        Ok(true)
    }
}

/// The set of `skills`, with every file indexed: a file two skills share
/// (a nested skill's) must be the same in both.
fn index(skills: BTreeMap<String, Skill>) -> Result<Set, SkillError> {
    let mut files: BTreeMap<String, (Skill, usize)> = BTreeMap::new();
    for skill in skills.values() {
        for (position, file) in skill.files().iter().enumerate() {
            if let Some((other, at)) = files.get(&file.uri) {
                if other.files()[*at].digest != file.digest {
                    return Err(SkillError {
                        file: file.uri.clone(),
                        problem: format!(
                            "{} and {} both hold this file, with different contents",
                            other.uri(),
                            skill.uri()
                        ),
                    });
                }
                continue;
            }
            files.insert(file.uri.clone(), (skill.clone(), position));
        }
    }
    Ok(Set { skills, files })
}

/// A file the `skills!` macro embedded.
#[doc(hidden)]
#[derive(Debug)]
pub struct StaticFile {
    /// Its path below the skills' root.
    pub path: &'static str,
    pub bytes: &'static [u8],
    /// Its digest, computed at compile time.
    pub digest: &'static str,
}

/// A skill the `skills!` macro embedded.
#[doc(hidden)]
#[derive(Debug)]
pub struct StaticSkill {
    pub path: &'static str,
    /// Its frontmatter as JSON text, rendered at compile time.
    pub frontmatter: &'static str,
    /// Its files, as indices into the embedded files, `SKILL.md` first.
    pub files: &'static [u16],
}

/// The skills the `skills!` macro embedded, checked at compile time.
#[doc(hidden)]
pub fn from_static(skills: &'static [StaticSkill], files: &'static [StaticFile]) -> Skills {
    let set = Skills::new();
    let made = skills.iter().map(|skill| {
        let frontmatter = serde_json::from_str(skill.frontmatter).unwrap_or_default();
        let members = skill.files.iter().map(|&index| {
            let file = &files[usize::from(index)];
            (
                file.path,
                Bytes::from_static(file.bytes),
                file.digest.to_owned(),
            )
        });
        Skill::new(skill.path.to_owned(), frontmatter, members)
    });
    if let Err(error) = set.replace(made) {
        // The macro checked the tree as a whole: unreachable, but loud.
        tracing::error!(%error, "the embedded skills are inconsistent");
    }
    set
}

//! Skills loaded from a directory while the server runs, through the
//! file-safety layer: nothing outside the directory is read, whatever its
//! links say, and only regular files are opened.

use std::io::Read;
use std::path::{Component, Path};

use bytes::Bytes;
use mcp_runtime_skill_format as format;

use super::Skills;
use super::skill::{Skill, SkillError};
use crate::files::{Directories, Entry};

/// How deep below the directory a skill file may be.
const MAX_DEPTH: usize = 16;

impl Skills {
    /// The skills in the directory `dir`: each directory below it with a
    /// `SKILL.md` is a skill, as for [`skills!`](crate::skills!), and is
    /// checked the same way (at run time, so a problem is an `Err` naming
    /// the file). Hidden files and directories (a name starting with `.`)
    /// are left out; symbolic links are not followed.
    ///
    /// Reads the file system: call it at startup, or from
    /// `tokio::task::spawn_blocking`, never on an async worker thread. To
    /// load a directory again while the server runs, [`replace`](Self::replace)
    /// the skills with the new ones' [`list`](Self::list).
    pub fn load_dir(dir: impl AsRef<Path>) -> Result<Skills, SkillError> {
        let dir = dir.as_ref();
        let failed = |problem: String| SkillError {
            file: dir.display().to_string(),
            problem,
        };
        let dirs = Directories::new([dir]).map_err(|error| failed(error.to_string()))?;
        let walk = dirs
            .walk(".", MAX_DEPTH)
            .map_err(|error| failed(error.to_string()))?;
        let mut files: Vec<(String, Bytes)> = Vec::new();
        for entry in walk {
            let entry = entry.map_err(|error| failed(error.to_string()))?;
            let Some(relative) = visible_file(&entry) else {
                continue;
            };
            let bytes = read(&entry, &relative)?;
            files.push((relative, bytes));
        }
        files.sort_unstable_by(|(a, _), (b, _)| a.cmp(b));
        let planned = format::plan(&files)?;
        let skills = Skills::new();
        let made = planned.into_iter().map(|skill| {
            let members = skill.files.iter().map(|&index| {
                let (file, bytes) = &files[index];
                (file.as_str(), bytes.clone(), format::digest(bytes))
            });
            Skill::new(skill.path, skill.frontmatter, members)
        });
        skills.replace(made)?;
        Ok(skills)
    }
}

/// The entry's path below the directory, `/`-separated, when it is a
/// regular file none of whose path's names is hidden.
fn visible_file(entry: &Entry) -> Option<String> {
    if !entry.is_file() {
        return None;
    }
    let mut parts = Vec::new();
    for component in entry.relative().components() {
        let Component::Normal(name) = component else {
            continue;
        };
        let name = name.to_str()?;
        if name.starts_with('.') {
            return None;
        }
        parts.push(name);
    }
    Some(parts.join("/"))
}

/// The file's bytes, refusing one larger than a whole skill may be.
fn read(entry: &Entry, relative: &str) -> Result<Bytes, SkillError> {
    let failed = |problem: String| SkillError {
        file: relative.to_owned(),
        problem,
    };
    if entry.len() > format::MAX_BYTES {
        return Err(failed(format!(
            "the file holds {} bytes; a skill may hold at most {} (16 MiB, SEP-2640)",
            entry.len(),
            format::MAX_BYTES
        )));
    }
    let file = entry.open().map_err(|error| failed(error.to_string()))?;
    let mut bytes = Vec::new();
    file.into_file()
        .take(format::MAX_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|error| failed(error.to_string()))?;
    Ok(Bytes::from(bytes))
}

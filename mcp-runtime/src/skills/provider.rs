//! The skills' files as resources: listed by `resources/list`, read by
//! `resources/read`, from memory.

use std::sync::PoisonError;

use mcp_runtime_skill_format as format;

use super::skill::{Skill, SkillFile};
use super::{Set, Skills};
use crate::catalog::{ProviderHandle, ResourceFuture, ResourceProvider};
use crate::context::Context;
use crate::protocol::{ReadResourceResult, Resource, ResourceContents};
use crate::resource::ReadError;

impl ResourceProvider for Skills {
    /// Every file; a `SKILL.md` named and described by its frontmatter.
    fn list(&self) -> Vec<Resource> {
        let set = self.set();
        set.files
            .iter()
            .map(|(uri, (skill, index))| describe_file(&set, uri, skill, *index))
            .collect()
    }

    fn read(&self, uri: &str, context: Context) -> ResourceFuture {
        let set = self.set();
        let read = match set.files.get(uri) {
            Some((skill, _)) if skill.is_generated() => return read_generated(skill, context),
            Some((skill, index)) => Ok(ReadResourceResult::new([contents(&skill.files()[*index])])),
            // Removed since it was listed.
            None => Err(ReadError::NotFound),
        };
        Box::pin(std::future::ready(read))
    }

    fn added(&self, handle: &ProviderHandle) {
        let mut handles = self
            .shared
            .handles
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        handles.push(handle.clone());
    }
}

/// The file at `uri`, the `index`th of `skill`, as `resources/list` (and
/// `resources/directory/read`) show it: a `SKILL.md` named and described
/// by its frontmatter; no size for a generated one.
pub(super) fn describe_file(set: &Set, uri: &str, skill: &Skill, index: usize) -> Resource {
    let file = &skill.files()[index];
    let resource = match set.skills.get(uri) {
        Some(manifest) => {
            Resource::new(file.uri.clone(), manifest.name()).description(manifest.description())
        }
        None => Resource::new(file.uri.clone(), file_name(uri)),
    };
    let resource = resource.mime_type(file.mime);
    if skill.is_generated() {
        resource
    } else {
        resource.size(file.bytes.len() as u64)
    }
}

/// A generated skill's `SKILL.md`, written now.
fn read_generated(skill: &Skill, context: Context) -> ResourceFuture {
    let uri = skill.uri().to_owned();
    let mime = skill.files()[0].mime;
    let generating = skill.generate(context);
    Box::pin(async move {
        let text = match generating {
            Some(generating) => generating.await?,
            None => return Err(ReadError::NotFound),
        };
        let contents = ResourceContents::text(uri, text).with_mime_type(mime);
        Ok(ReadResourceResult::new([contents]))
    })
}

/// The last segment of `uri`.
pub(super) fn file_name(uri: &str) -> &str {
    uri.rsplit('/').next().unwrap_or(uri)
}

/// The file's contents: text when it is text, else base64.
fn contents(file: &SkillFile) -> ResourceContents {
    let contents = match std::str::from_utf8(&file.bytes) {
        Ok(text) if format::is_text(file.mime, &file.bytes) => {
            ResourceContents::text(file.uri.clone(), text)
        }
        _ => ResourceContents::blob(file.uri.clone(), &file.bytes),
    };
    contents.with_mime_type(file.mime)
}

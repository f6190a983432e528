//! The skills' files as resources: listed by `resources/list`, read by
//! `resources/read`, from memory.

use std::sync::PoisonError;

use mcp_runtime_skill_format as format;

use super::Skills;
use super::skill::SkillFile;
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
            .map(|(uri, (skill, index))| {
                let file = &skill.files()[*index];
                match set.skills.get(uri) {
                    Some(manifest) => {
                        describe(file, manifest.name()).description(manifest.description())
                    }
                    None => describe(file, file_name(uri)),
                }
            })
            .collect()
    }

    fn read(&self, uri: &str, _context: Context) -> ResourceFuture {
        let set = self.set();
        let read = match set.files.get(uri) {
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

/// A file as `resources/list` (and `resources/directory/read`) show it.
pub(super) fn describe(file: &SkillFile, name: &str) -> Resource {
    Resource::new(file.uri.clone(), name)
        .mime_type(file.mime)
        .size(file.bytes.len() as u64)
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

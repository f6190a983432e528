//! Reading a file without ever loading more than [`MAX_READ_BYTES`] of it.

use std::io::Read as _;
use std::path::Path;

use mcp_runtime::files::{OpenedFile, PathError};
use mcp_runtime::{ReadError, ReadResourceResult, ResourceContents};
use serde_json::json;

/// The most of a file a read (or a content search) loads: a larger text
/// file is cut there, with a note; a larger binary file is refused.
pub const MAX_READ_BYTES: u64 = 1024 * 1024;

/// The `_meta` key of the note on a cut file.
const TRUNCATED: &str = "com.example.files/truncated";

/// The MIME type of `path`, from its extension.
pub(crate) fn mime_type(path: &Path) -> String {
    mime_guess::from_path(path)
        .first_or_octet_stream()
        .essence_str()
        .to_owned()
}

/// A file the client named that cannot be read, as the read's error: a
/// missing file is not found, a failure to read is the server's, anything
/// else (a path that leaves the directory, a FIFO, a hard link) is the
/// client's.
pub(crate) fn refused(error: PathError) -> ReadError {
    match error {
        PathError::NotFound(_) => ReadError::NotFound,
        PathError::Io(error) => ReadError::Failed(format!("cannot read the file: {error}")),
        other => ReadError::Invalid(other.to_string()),
    }
}

/// The first [`MAX_READ_BYTES`] of the opened `file`, read as `uri`:
/// text (UTF-8) whole or cut with a note, binary whole or refused.
///
/// Blocks on the file system: call it off the async threads.
pub(crate) fn limited(file: OpenedFile, uri: &str) -> Result<ReadResourceResult, ReadError> {
    let size = file.len();
    let mime = mime_type(file.path());
    let mut bytes = Vec::with_capacity(usize::try_from(size.min(MAX_READ_BYTES)).unwrap_or(0));
    file.take(MAX_READ_BYTES)
        .read_to_end(&mut bytes)
        .map_err(|error| ReadError::Failed(format!("cannot read {uri}: {error}")))?;
    let cut = size > MAX_READ_BYTES;
    let contents = match text(&bytes, cut) {
        Some(text) if !cut => ResourceContents::text(uri, text),
        Some(text) => {
            let note = json!({
                "shownBytes": text.len(),
                "sizeBytes": size,
                "note": format!("the file is {size} bytes; only its first {MAX_READ_BYTES} are sent"),
            });
            let mut meta = serde_json::Map::new();
            meta.insert(TRUNCATED.into(), note);
            ResourceContents::text(uri, text).with_meta(meta)
        }
        None if cut => {
            return Err(ReadError::Failed(format!(
                "{uri} is a binary file of {size} bytes, over the {MAX_READ_BYTES}-byte limit: it is not sent"
            )));
        }
        None => ResourceContents::blob(uri, &bytes),
    };
    Ok(ReadResourceResult::new([contents.with_mime_type(mime)]))
}

/// The bytes as text, if they are UTF-8 (a file cut in the middle of a
/// character is cut before it).
fn text(bytes: &[u8], cut: bool) -> Option<String> {
    match std::str::from_utf8(bytes) {
        Ok(text) => Some(text.to_owned()),
        Err(error) if cut && error.error_len().is_none() => {
            Some(String::from_utf8_lossy(&bytes[..error.valid_up_to()]).into_owned())
        }
        Err(_) => None,
    }
}

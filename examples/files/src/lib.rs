//! A local file server over one directory.
//!
//! - Every file is a resource (`file:///...`), listed by a runtime catalog
//!   provider (sorted and paginated with the rest), MIME types guessed from
//!   the extension, sizes and modification times as annotations.
//! - `file:///{+path}` reads any file under the directory by its path,
//!   one the listing has not caught up with included.
//! - `search` finds files by name and content, `tree` shows the layout,
//!   `write_file` writes a text file once the user confirms.
//! - Files created, changed or removed on disk are announced
//!   (`notifications/resources/list_changed`, `.../updated`).
//!
//! Every path a client sends goes through `mcp_runtime::files`, which
//! refuses anything that would leave the directory. Reads and content
//! searches never load more than 1 MiB of a file: larger text files are
//! cut with a note, larger binary files refused.

mod read;
mod tools;
mod watch;

use std::io;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use mcp_runtime::catalog::{ProviderHandle, ResourceFuture, ResourceProvider};
use mcp_runtime::files::{Directories, SafePath, file_uri};
use mcp_runtime::protocol::Resource;
use mcp_runtime::{Annotations, Context, resource};

pub use self::read::MAX_READ_BYTES;
pub use self::watch::watch;

/// What the model is told about this server.
pub const INSTRUCTIONS: &str = "Files of one directory. Every file is a resource \
(file:///...); read one by its URI. `search` finds files by name or content, \
`tree` shows the layout, `write_file` writes a text file after the user confirms. \
Paths are relative to the directory, or file:// URIs inside it.";

/// The most files the listing holds (a bigger tree is listed in part; the
/// template still reads any file).
pub const MAX_LISTED_FILES: usize = 10_000;

/// The directory served, and the provider that lists it.
#[derive(Debug)]
pub struct Files {
    dirs: Directories,
    root: PathBuf,
    provider: OnceLock<ProviderHandle>,
}

static FILES: OnceLock<Files> = OnceLock::new();

/// Serves `dir` (it must exist). Once per process.
pub fn open(dir: impl AsRef<Path>) -> io::Result<&'static Files> {
    let dirs = Directories::new([dir.as_ref()])?;
    let root = dirs.roots().next().expect("one directory").to_owned();
    let files = Files {
        dirs,
        root,
        provider: OnceLock::new(),
    };
    FILES
        .set(files)
        .map_err(|_| io::Error::other("a directory is served already"))?;
    Ok(FILES.get().expect("just set"))
}

/// The directory served, for the handlers.
fn files() -> Result<&'static Files, String> {
    FILES
        .get()
        .ok_or_else(|| "no directory is served".to_owned())
}

impl Files {
    /// The served directory, symbolic links resolved.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Records the catalog's handle of the file provider, so that writes
    /// refresh the listing at once.
    pub fn set_provider(&self, handle: ProviderHandle) {
        let _ = self.provider.set(handle);
    }

    /// A client's path or URI, inside the directory.
    fn resolve(&self, path: &str) -> Result<SafePath, String> {
        self.dirs.resolve(path).map_err(|error| error.to_string())
    }

    /// The path relative to the directory, `/`-separated.
    fn relative(&self, path: &Path) -> String {
        path.strip_prefix(&self.root)
            .unwrap_or(path)
            .to_string_lossy()
            .into_owned()
    }

    /// The listing changed (a write): list again and tell subscribers.
    fn changed(&self, path: &Path) {
        if let Some(handle) = self.provider.get() {
            if let Err(error) = handle.refresh() {
                eprintln!("files: cannot list {}: {error}", self.root.display());
            }
            handle.updated(file_uri(path));
        }
    }
}

/// Lists every regular file under the directory (symbolic links are not
/// followed, so nothing outside is listed) and reads them.
#[derive(Debug, Clone, Copy)]
pub struct FileProvider {
    files: &'static Files,
}

impl FileProvider {
    /// The provider of `files`.
    pub fn new(files: &'static Files) -> Self {
        FileProvider { files }
    }
}

impl ResourceProvider for FileProvider {
    fn list(&self) -> Vec<Resource> {
        walkdir::WalkDir::new(&self.files.root)
            .follow_links(false)
            .into_iter()
            .filter_map(Result::ok)
            .filter(|entry| entry.file_type().is_file())
            .take(MAX_LISTED_FILES)
            .map(|entry| describe(self.files, entry.path(), entry.metadata().ok()))
            .collect()
    }

    fn read(&self, uri: &str, _context: Context) -> ResourceFuture {
        let read = self
            .files
            .dirs
            .resolve_existing(uri)
            .map_err(read::refused)
            .and_then(|path| read::limited(path.as_path(), uri));
        Box::pin(async move { read })
    }
}

/// A file as `resources/list` shows it.
fn describe(files: &Files, path: &Path, metadata: Option<std::fs::Metadata>) -> Resource {
    let relative = files.relative(path);
    let mut resource = Resource::new(file_uri(path), relative.clone())
        .title(relative)
        .mime_type(read::mime_type(path));
    if let Some(metadata) = metadata {
        resource = resource.size(metadata.len());
        if let Ok(modified) = metadata.modified() {
            resource = resource.annotations(Annotations::new().last_modified_at(modified));
        }
    }
    resource
}

/// A file under the served directory, by its path: any file, whether or
/// not the listing has caught up with it. `path` is what follows
/// `file:///`, so `file:///srv/notes/a.md` reads `/srv/notes/a.md`.
#[resource("file:///{+path}", name = "file")]
fn file_by_path(path: String) -> Result<mcp_runtime::ReadResourceResult, mcp_runtime::ReadError> {
    let files = files().map_err(mcp_runtime::ReadError::Failed)?;
    let uri = format!("file:///{path}");
    let path = files
        .dirs
        .resolve_existing(&format!("/{path}"))
        .map_err(read::refused)?;
    read::limited(path.as_path(), &uri)
}

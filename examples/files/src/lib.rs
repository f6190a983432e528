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
//! refuses anything that would leave the directory and opens files beneath
//! the directory's handle (`Directories::open`, `write`, `walk`): a link
//! swapped in between a check and an open cannot lead out, a hard link to
//! a file outside is refused, a FIFO or a device is refused without
//! waiting on it, and a write replaces the file (a temporary file renamed
//! over it) instead of writing through it. All file system work runs on
//! the blocking pool (`blocking` handlers, `run_blocking`), never on the
//! threads that answer requests. Reads and content searches never load
//! more than 1 MiB of a file: larger text files are cut with a note,
//! larger binary files refused.
//!
//! The directory is the server's application state, a [`Files`] that
//! `main.rs` opens from the command line and gives the server
//! (`.state(files)`); handlers take it as `#[ctx] files: State<Files>`.

mod read;
mod tools;
mod watch;

use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use mcp_runtime::catalog::{ProviderHandle, ResourceFuture, ResourceProvider};
use mcp_runtime::files::{Directories, Entry, SafePath, file_uri};
use mcp_runtime::protocol::Resource;
use mcp_runtime::{Annotations, Context, State, resource, run_blocking};

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

/// How deep the listing and `search` look: a walk holds one open directory
/// per level, so a tree made deep on purpose cannot run the server out of
/// file descriptors (the template still reads a file at any depth).
pub const MAX_WALK_DEPTH: usize = 16;

/// The directory served, and the provider that lists it: the server's
/// state. A handle, cheap to clone (each request that takes it clones it);
/// its clones share the provider [`set_provider`](Self::set_provider)
/// records.
#[derive(Debug, Clone)]
pub struct Files(Arc<Served>);

#[derive(Debug)]
struct Served {
    dirs: Directories,
    root: PathBuf,
    provider: OnceLock<ProviderHandle>,
}

/// Opens `dir` (it must exist) to serve: give the server the result with
/// `.state(files)`.
pub fn open(dir: impl AsRef<Path>) -> io::Result<Files> {
    let dirs = Directories::new([dir.as_ref()])?;
    let root = dirs.roots().next().expect("one directory").to_owned();
    Ok(Files(Arc::new(Served {
        dirs,
        root,
        provider: OnceLock::new(),
    })))
}

impl Files {
    /// The served directory, symbolic links resolved.
    pub fn root(&self) -> &Path {
        &self.0.root
    }

    /// Records the catalog's handle of the file provider, so that writes
    /// refresh the listing at once (the first handle recorded stays).
    pub fn set_provider(&self, handle: ProviderHandle) {
        let _ = self.0.provider.set(handle);
    }

    /// The directory, to resolve the paths clients send.
    fn dirs(&self) -> &Directories {
        &self.0.dirs
    }

    /// A client's path or URI, inside the directory.
    fn resolve(&self, path: &str) -> Result<SafePath, String> {
        self.dirs().resolve(path).map_err(|error| error.to_string())
    }

    /// The path relative to the directory, `/`-separated.
    fn relative(&self, path: &Path) -> String {
        path.strip_prefix(self.root())
            .unwrap_or(path)
            .to_string_lossy()
            .into_owned()
    }

    /// The listing changed (a write): list again and tell subscribers.
    fn changed(&self, path: &Path) {
        if let Some(handle) = self.0.provider.get() {
            if let Err(error) = handle.refresh() {
                eprintln!("files: cannot list {}: {error}", self.root().display());
            }
            handle.updated(file_uri(path));
        }
    }
}

/// Lists every regular file under the directory (symbolic links are not
/// followed, so nothing outside is listed) and reads them.
#[derive(Debug, Clone)]
pub struct FileProvider {
    files: Files,
}

impl FileProvider {
    /// The provider of `files`.
    pub fn new(files: Files) -> Self {
        FileProvider { files }
    }
}

impl ResourceProvider for FileProvider {
    fn list(&self) -> Vec<Resource> {
        let Ok(walk) = self.files.dirs().walk(".", MAX_WALK_DEPTH) else {
            return Vec::new();
        };
        walk.filter_map(Result::ok)
            .filter(Entry::is_file)
            .take(MAX_LISTED_FILES)
            .map(|entry| describe(&entry))
            .collect()
    }

    /// Reads on the blocking pool: opening touches the file system.
    fn read(&self, uri: &str, _context: Context) -> ResourceFuture {
        let (files, uri) = (self.files.clone(), uri.to_owned());
        Box::pin(run_blocking(move || {
            let file = files.dirs().open(&uri).map_err(read::refused)?;
            read::limited(file, &uri)
        }))
    }
}

/// A file as `resources/list` shows it.
fn describe(entry: &Entry) -> Resource {
    let relative = entry.relative().to_string_lossy().into_owned();
    let mut resource = Resource::new(entry.uri(), relative.clone())
        .title(relative)
        .mime_type(read::mime_type(entry.path()))
        .size(entry.len());
    if let Some(modified) = entry.modified() {
        resource = resource.annotations(Annotations::new().last_modified_at(modified));
    }
    resource
}

/// A file under the served directory, by its path: any file, whether or
/// not the listing has caught up with it. `path` is what follows
/// `file:///`, so `file:///srv/notes/a.md` reads `/srv/notes/a.md`.
// `blocking`: the file system is read on the blocking pool.
#[resource("file:///{+path}", name = "file", blocking)]
fn file_by_path(
    path: String,
    #[ctx] files: State<Files>,
) -> Result<mcp_runtime::ReadResourceResult, mcp_runtime::ReadError> {
    let uri = format!("file:///{path}");
    let file = files
        .dirs()
        .open(&format!("/{path}"))
        .map_err(read::refused)?;
    read::limited(file, &uri)
}

//! Opening and writing files beneath a directory handle: the client's path
//! is resolved by the kernel (or `cap-std`'s walk) relative to the open
//! directory, so nothing swapped in between a check and the open can lead
//! out of it.

use std::ffi::OsStr;
use std::fs::{File, Metadata};
use std::io::{self, Read, Write as _};
use std::path::{Path, PathBuf};

use cap_std::fs::{Dir, OpenOptions};

use super::{Directories, PathError, file_uri};

/// A regular file inside the [`Directories`], open for reading: what
/// [`Directories::open`] and [`Entry::open`](super::Entry::open) hand back.
#[derive(Debug)]
pub struct OpenedFile {
    file: File,
    metadata: Metadata,
    path: PathBuf,
}

impl OpenedFile {
    /// The path the file was opened by (inside its directory, as the client
    /// named it: symbolic links on it are not resolved).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The `file://` URI of [`path`](Self::path).
    pub fn uri(&self) -> String {
        file_uri(&self.path)
    }

    /// The opened file's metadata (`fstat`, taken when it was opened).
    pub fn metadata(&self) -> &Metadata {
        &self.metadata
    }

    /// Its size in bytes when it was opened.
    pub fn len(&self) -> u64 {
        self.metadata.len()
    }

    /// Whether it was empty when it was opened.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The open file.
    pub fn into_file(self) -> File {
        self.file
    }
}

impl Read for OpenedFile {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.file.read(buf)
    }
}

/// What [`Directories::write`] did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Written {
    /// The file written, as the client named it.
    pub path: PathBuf,
    /// Whether it was created (rather than replaced).
    pub created: bool,
}

impl Directories {
    /// Opens the regular file `input` names (a path relative to the first
    /// directory, an absolute path, or a `file://` URI) for reading,
    /// resolved beneath its directory's handle. Refuses what
    /// [`resolve`](Self::resolve) refuses, a link that leads out however
    /// the tree changes meanwhile, anything but a regular file (without
    /// waiting on a FIFO), and a file with other hard links unless they are
    /// [allowed](Self::allow_hard_links).
    ///
    /// Blocks on the file system: call it off the async threads.
    pub fn open(&self, input: &str) -> Result<OpenedFile, PathError> {
        let (root, relative) = self.locate(input)?;
        let shown = root.path_of(&relative);
        open_in(&root.dir, &relative, shown, self.hard_links)
    }

    /// Writes `contents` to the file `input` names, creating it and its
    /// missing directories (all beneath the directory's handle).
    ///
    /// The contents go to a temporary file in the target's directory,
    /// flushed to disk and then renamed over the target: the write never
    /// goes through an existing (hard or symbolic) link, and readers see
    /// the old file or the new one, never a mix. A replaced file keeps its
    /// permissions. Refuses a target that is not a regular file, and one
    /// with other hard links unless they are
    /// [allowed](Self::allow_hard_links) (the rename would silently
    /// separate it from them).
    ///
    /// Blocks on the file system: call it off the async threads.
    pub fn write(&self, input: &str, contents: &[u8]) -> Result<Written, PathError> {
        let (root, relative) = self.locate(input)?;
        let shown = root.path_of(&relative);
        let (Some(parent), Some(name)) = (relative.parent(), relative.file_name()) else {
            return Err(PathError::NotRegular(shown));
        };
        let parent_dir = open_parent(&root.dir, parent, &shown)?;
        let existing = match parent_dir.symlink_metadata(name) {
            Ok(metadata) => Some(metadata),
            Err(error) if error.kind() == io::ErrorKind::NotFound => None,
            Err(error) => return Err(refusal(error, &shown)),
        };
        if let Some(metadata) = &existing {
            if !metadata.is_file() {
                return Err(PathError::NotRegular(shown));
            }
            let links = link_count(metadata);
            if links > 1 && !self.hard_links {
                return Err(PathError::HardLinked(shown, links));
            }
        }
        let created = existing.is_none();
        let permissions = existing.map(|metadata| metadata.permissions());
        replace(&parent_dir, name, contents, permissions).map_err(PathError::Io)?;
        Ok(Written {
            path: shown,
            created,
        })
    }
}

/// Opens `relative` beneath `dir` for reading, as a regular file with one
/// link (or any number, with `hard_links`) or not at all; `shown` names it
/// in errors and in the result.
pub(super) fn open_in(
    dir: &Dir,
    relative: &Path,
    shown: PathBuf,
    hard_links: bool,
) -> Result<OpenedFile, PathError> {
    let mut options = OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use cap_std::fs::OpenOptionsExt as _;
        // A FIFO without a writer opens at once instead of waiting for one.
        options.custom_flags(libc::O_NONBLOCK);
    }
    let file = match dir.open_with(relative, &options) {
        Ok(file) => file.into_std(),
        Err(error) => return Err(refusal(error, &shown)),
    };
    let metadata = file.metadata().map_err(PathError::Io)?;
    if !metadata.is_file() {
        return Err(PathError::NotRegular(shown));
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt as _;
        if metadata.nlink() > 1 && !hard_links {
            return Err(PathError::HardLinked(shown, metadata.nlink()));
        }
        super::clear_nonblocking(&file).map_err(PathError::Io)?;
    }
    #[cfg(not(unix))]
    let _ = hard_links;
    Ok(OpenedFile {
        file,
        metadata,
        path: shown,
    })
}

/// The directory `parent` beneath `dir`, created if missing.
fn open_parent(dir: &Dir, parent: &Path, shown: &Path) -> Result<Dir, PathError> {
    if parent.as_os_str().is_empty() {
        return dir.try_clone().map_err(PathError::Io);
    }
    // Opened first: a link on the way is refused for what it is, before
    // `mkdir` would meet it as something in the way.
    match dir.open_dir(parent) {
        Err(error) if error.kind() == io::ErrorKind::NotFound => dir
            .create_dir_all(parent)
            .and_then(|()| dir.open_dir(parent))
            .map_err(|error| refusal(error, shown)),
        opened => opened.map_err(|error| refusal(error, shown)),
    }
}

/// Writes `contents` to a new temporary file in `dir` and renames it over
/// `name`, with `permissions` (those of the file it replaces) if given.
fn replace(
    dir: &Dir,
    name: &OsStr,
    contents: &[u8],
    permissions: Option<cap_std::fs::Permissions>,
) -> io::Result<()> {
    let mut temp = cap_tempfile::TempFile::new(dir)?;
    temp.write_all(contents)?;
    if let Some(permissions) = permissions {
        temp.as_file().set_permissions(permissions)?;
    }
    temp.as_file().sync_all()?;
    // Dropped on an error before this, the temporary file is removed.
    temp.replace(name)
}

/// How many hard links the file has (1 where the platform cannot say).
fn link_count(metadata: &cap_std::fs::Metadata) -> u64 {
    #[cfg(unix)]
    {
        use cap_std::fs::MetadataExt as _;
        metadata.nlink()
    }
    #[cfg(not(unix))]
    {
        let _ = metadata;
        1
    }
}

/// An error of resolving or opening `shown` beneath a directory handle, as
/// the refusal it is.
pub(super) fn refusal(error: io::Error, shown: &Path) -> PathError {
    let shown = shown.to_owned();
    #[cfg(unix)]
    match error.raw_os_error() {
        // O_NONBLOCK's answer for a FIFO opened for writing without a
        // reader, or a device without its hardware; a link loop.
        Some(libc::ENXIO | libc::ELOOP) => return PathError::NotRegular(shown),
        // A file where a directory should be: nothing beyond it exists.
        Some(libc::ENOTDIR) => return PathError::NotFound(shown),
        // `openat2`'s RESOLVE_BENEATH refusal.
        Some(libc::EXDEV) => return PathError::SymlinkEscape(shown),
        _ => {}
    }
    match error.kind() {
        io::ErrorKind::NotFound => PathError::NotFound(shown),
        // `cap-std`'s own escape refusal carries no OS error code.
        io::ErrorKind::PermissionDenied if error.raw_os_error().is_none() => {
            PathError::SymlinkEscape(shown)
        }
        _ => PathError::Io(error),
    }
}

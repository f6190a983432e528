//! Walking a directory tree through directory handles: each directory is
//! opened beneath its parent's handle without following a link, and each
//! file beneath its own directory's, so a walk neither leaves the tree nor
//! loops, however the tree changes while it runs.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::SystemTime;
use std::{io, vec};

use cap_fs_ext::DirExt as _;
use cap_std::fs::{Dir, Metadata};

use super::open::{open_in, refusal};
use super::{Directories, OpenedFile, PathError, file_uri};

/// The entries under a directory, depth first, each directory's entries in
/// file-name order, each directory before what it holds: what
/// [`Directories::walk`] returns. Symbolic links are listed, never
/// followed. An entry that vanishes while the walk runs is skipped; a
/// directory that cannot be read is an `Err` item, and the walk goes on.
#[derive(Debug)]
pub struct Walk {
    /// The directory the walk's relative paths start from.
    base: PathBuf,
    max_depth: usize,
    hard_links: bool,
    stack: Vec<Level>,
    /// A directory that could not be read, reported by the next item.
    failed: Option<io::Error>,
}

/// One directory being walked.
#[derive(Debug)]
struct Level {
    dir: Arc<Dir>,
    /// Its path relative to the walk's start.
    relative: PathBuf,
    names: vec::IntoIter<OsString>,
}

/// One entry of a [`Walk`]: a file, a directory, a symbolic link or
/// anything else, with its metadata (not following a link).
#[derive(Debug)]
pub struct Entry {
    parent: Arc<Dir>,
    name: OsString,
    relative: PathBuf,
    path: PathBuf,
    depth: usize,
    metadata: Metadata,
    hard_links: bool,
}

impl Directories {
    /// Walks the directory `input` names (`"."` for the first directory),
    /// down to `max_depth` levels below it (1: its own entries).
    ///
    /// Blocks on the file system: call it off the async threads, and bound
    /// what you take from it (`.take(n)`). The walk holds one open
    /// directory per level it is inside: bound `max_depth` too, or a tree
    /// made deep on purpose can use up the process's file descriptors.
    pub fn walk(&self, input: &str, max_depth: usize) -> Result<Walk, PathError> {
        let (root, relative) = self.locate(input)?;
        let base = root.path_of(&relative);
        let dir = match relative == Path::new(".") {
            true => root.dir.try_clone().map_err(PathError::Io)?,
            false => root
                .dir
                .open_dir(&relative)
                .map_err(|error| not_a_directory(error, &base))?,
        };
        let mut walk = Walk {
            base,
            max_depth,
            hard_links: self.hard_links,
            stack: Vec::new(),
            failed: None,
        };
        walk.enter(Arc::new(dir), PathBuf::new());
        Ok(walk)
    }
}

/// `open_dir`'s error for `base`: `ENOTDIR` (a file where a directory
/// should be, at the end or on the way) as the refusal it is.
fn not_a_directory(error: io::Error, base: &Path) -> PathError {
    #[cfg(unix)]
    if error.raw_os_error() == Some(libc::ENOTDIR) {
        return PathError::NotADirectory(base.to_owned());
    }
    refusal(error, base)
}

impl Walk {
    /// Starts on `dir`'s entries, unless it is already `max_depth` deep.
    fn enter(&mut self, dir: Arc<Dir>, relative: PathBuf) {
        if self.stack.len() >= self.max_depth {
            return;
        }
        let names = dir.entries().and_then(|entries| {
            entries
                .map(|entry| entry.map(|entry| entry.file_name()))
                .collect::<io::Result<Vec<_>>>()
        });
        match names {
            Ok(mut names) => {
                names.sort();
                self.stack.push(Level {
                    dir,
                    relative,
                    names: names.into_iter(),
                });
            }
            Err(error) => self.failed = Some(error),
        }
    }
}

impl Iterator for Walk {
    type Item = io::Result<Entry>;

    fn next(&mut self) -> Option<io::Result<Entry>> {
        loop {
            if let Some(error) = self.failed.take() {
                return Some(Err(error));
            }
            let level = self.stack.last_mut()?;
            let Some(name) = level.names.next() else {
                self.stack.pop();
                continue;
            };
            // Gone since the directory was read: skipped.
            let Ok(metadata) = level.dir.symlink_metadata(&name) else {
                continue;
            };
            let (parent, relative) = (level.dir.clone(), level.relative.join(&name));
            if metadata.is_dir() {
                // Not following a link swapped in since the `lstat`.
                match parent.open_dir_nofollow(&name) {
                    Ok(dir) => self.enter(Arc::new(dir), relative.clone()),
                    Err(error) => self.failed = Some(error),
                }
            }
            return Some(Ok(Entry {
                path: self.base.join(&relative),
                depth: relative.components().count(),
                parent,
                name,
                relative,
                metadata,
                hard_links: self.hard_links,
            }));
        }
    }
}

impl Entry {
    /// Its path relative to the walk's start.
    pub fn relative(&self) -> &Path {
        &self.relative
    }

    /// Its full path (under the directory, as given to the walk).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Its `file://` URI.
    pub fn uri(&self) -> String {
        file_uri(&self.path)
    }

    /// How deep it is: 1 for an entry of the walk's start.
    pub fn depth(&self) -> usize {
        self.depth
    }

    /// Whether it is a directory (not a link to one).
    pub fn is_dir(&self) -> bool {
        self.metadata.is_dir()
    }

    /// Whether it is a regular file (not a link to one).
    pub fn is_file(&self) -> bool {
        self.metadata.is_file()
    }

    /// Whether it is a symbolic link.
    pub fn is_symlink(&self) -> bool {
        self.metadata.is_symlink()
    }

    /// Its size in bytes (a link's own size, for a link).
    pub fn len(&self) -> u64 {
        self.metadata.len()
    }

    /// Whether its size is 0.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// When it was last modified, where the file system says.
    pub fn modified(&self) -> Option<SystemTime> {
        self.metadata.modified().ok().map(|time| time.into_std())
    }

    /// Opens it for reading, through the handle of the directory it was
    /// listed in, with [`Directories::open`]'s checks: a regular file with
    /// one link (unless they are allowed), whatever replaced the entry
    /// since it was listed.
    pub fn open(&self) -> Result<OpenedFile, PathError> {
        open_in(
            &self.parent,
            Path::new(&self.name),
            self.path.clone(),
            self.hard_links,
        )
    }
}

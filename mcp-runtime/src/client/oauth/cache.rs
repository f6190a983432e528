//! The token cache file: JSON holding access and refresh tokens, its
//! owner's only.
//!
//! On Unix:
//! - a cache path that is a symbolic link, not a regular file, owned by
//!   another user, or readable or writable by group or others (mode
//!   `& 0o077 != 0`) is refused, for reading and for replacing, with an
//!   error (and a `tracing` warning) naming the path and the reason. A
//!   `0644` cache is refused loudly rather than silently replaced: its
//!   tokens may already have been read, and its owner should know;
//! - a file that does not parse as a token cache is an error, and is
//!   never overwritten; a missing or empty file is an empty cache;
//! - a save writes a new file (mode `0600`, `O_CREAT | O_EXCL`, so never
//!   through an existing file or link) beside the cache, syncs it and
//!   renames it over the cache: a crash leaves the old cache or the new
//!   one, never a truncated one;
//! - read-modify-write runs under an exclusive `flock` on `<cache>.lock`
//!   (created `0600`), so that concurrent runs keep each other's entries.
//!
//! Errors and warnings name the path and the reason, never the file's
//! content.

use std::fmt::Display;
use std::fs::{self, File, Metadata, OpenOptions};
use std::io::{self, Read as _, Write as _};
use std::path::{Path, PathBuf};

use super::Cache;
use crate::client::transport::TransportError;

/// The cache at `path`: empty if there is no file; an error if the file
/// is refused (see the module) or is not a token cache.
pub(super) fn load(path: &Path) -> Result<Cache, TransportError> {
    Ok(read_existing(path)?.unwrap_or_default())
}

/// Replaces the cache at `path` with `cache`, under the lock. (The
/// session only ever adds to the cache, with [`update`].)
#[cfg(test)]
pub(super) fn save(path: &Path, cache: &Cache) -> Result<(), TransportError> {
    Locked::acquire(path)?.save(cache)
}

/// Reads the cache at `path`, applies `change`, and writes it back, all
/// under the lock: concurrent runs do not lose each other's entries.
pub(super) fn update(path: &Path, change: impl FnOnce(&mut Cache)) -> Result<(), TransportError> {
    let locked = Locked::acquire(path)?;
    let mut cache = locked.load()?;
    change(&mut cache);
    locked.save(&cache)
}

/// The cache at a path, while this process holds its lock.
#[derive(Debug)]
pub(super) struct Locked<'a> {
    path: &'a Path,
    _lock: platform::Lock,
}

impl<'a> Locked<'a> {
    /// Waits for the exclusive lock of the cache at `path`.
    pub(super) fn acquire(path: &'a Path) -> Result<Self, TransportError> {
        let lock_path = sibling(path, ".lock");
        let mut options = OpenOptions::new();
        options.read(true).write(true).create(true);
        owner_only(&mut options);
        let Some(file) = open_checked(&lock_path, &mut options, Checks::OWNER)? else {
            return Err(refused(
                &lock_path,
                "cannot be created: its directory does not exist",
            ));
        };
        let lock = platform::lock_exclusive(file)
            .map_err(|error| refused(&lock_path, format_args!("cannot be locked: {error}")))?;
        Ok(Locked { path, _lock: lock })
    }

    pub(super) fn load(&self) -> Result<Cache, TransportError> {
        load(self.path)
    }

    /// Replaces the cache with `cache`; refuses to replace a file that
    /// is not a token cache, or one that is refused for reading.
    pub(super) fn save(&self, cache: &Cache) -> Result<(), TransportError> {
        read_existing(self.path)?;
        let bytes = serde_json::to_vec_pretty(cache)
            .map_err(|error| refused(self.path, format_args!("cannot be encoded: {error}")))?;
        replace(self.path, &bytes)
    }
}

/// The error for `path`, logged as a warning: both name the path and the
/// reason only.
fn refused(path: &Path, reason: impl Display) -> TransportError {
    tracing::warn!(path = %path.display(), %reason, "token cache unusable");
    TransportError::new(format!("token cache {}: {reason}", path.display()))
}

/// The parsed cache at `path`, `None` if there is no file.
fn read_existing(path: &Path) -> Result<Option<Cache>, TransportError> {
    let mut options = OpenOptions::new();
    options.read(true);
    let Some(mut file) = open_checked(path, &mut options, Checks::ALL)? else {
        return Ok(None);
    };
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes)
        .map_err(|error| refused(path, format_args!("cannot be read: {error}")))?;
    if bytes.is_empty() {
        // A new file (`mktemp`'s, say) has nothing to lose: an empty
        // cache, that a save may replace.
        return Ok(Some(Cache::default()));
    }
    serde_json::from_slice(&bytes)
        .map(Some)
        .map_err(|error| refused(path, not_a_cache(&error)))
}

/// Why a file is not a token cache, without quoting it: serde's own
/// message may quote a value, and a value may be a token.
fn not_a_cache(error: &serde_json::Error) -> String {
    let problem = match error.classify() {
        serde_json::error::Category::Io => "cannot be read",
        serde_json::error::Category::Syntax => "is not JSON",
        serde_json::error::Category::Data => "is JSON of another shape",
        serde_json::error::Category::Eof => "ends early",
    };
    format!(
        "is not a token cache: it {problem} (line {}, column {}); it is left as it is: move it away or choose another path",
        error.line(),
        error.column()
    )
}

/// What [`open_checked`] requires of an existing file.
#[derive(Clone, Copy)]
struct Checks {
    /// Not readable or writable by group or others.
    private: bool,
}

impl Checks {
    const ALL: Checks = Checks { private: true };
    /// The lock file holds nothing: its owner matters (another user
    /// could hold it forever), its mode does not.
    const OWNER: Checks = Checks { private: false };
}

/// Opens `path` with `options` if it is a regular file of this user
/// (and private, if `checks` says so), never through a symbolic link;
/// `None` if there is no such file and `options` do not create one.
fn open_checked(
    path: &Path,
    options: &mut OpenOptions,
    checks: Checks,
) -> Result<Option<File>, TransportError> {
    let before = match fs::symlink_metadata(path) {
        Ok(metadata) => Some(metadata),
        Err(error) if error.kind() == io::ErrorKind::NotFound => None,
        Err(error) => return Err(refused(path, format_args!("cannot be examined: {error}"))),
    };
    if let Some(before) = &before {
        check_kind(path, before)?;
    }
    let file = match platform::no_follow(options).open(path) {
        Ok(file) => file,
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(error) => return Err(refused(path, format_args!("cannot be opened: {error}"))),
    };
    let opened = file
        .metadata()
        .map_err(|error| refused(path, format_args!("cannot be examined: {error}")))?;
    check_kind(path, &opened)?;
    if before.is_some_and(|before| !platform::same_file(&before, &opened)) {
        return Err(refused(path, "was replaced while being opened"));
    }
    platform::check_owner(path, &opened)?;
    if checks.private {
        platform::check_private(path, &opened)?;
    }
    Ok(Some(file))
}

fn check_kind(path: &Path, metadata: &Metadata) -> Result<(), TransportError> {
    if metadata.file_type().is_symlink() {
        return Err(refused(
            path,
            "is a symbolic link: the cache must be a regular file",
        ));
    }
    if !metadata.is_file() {
        return Err(refused(path, "is not a regular file"));
    }
    Ok(())
}

/// Writes `bytes` to a new owner-only file beside `path`, syncs it, and
/// renames it over `path`: the old cache is never written to.
fn replace(path: &Path, bytes: &[u8]) -> Result<(), TransportError> {
    let (temporary, mut file) = create_temporary(path)?;
    let written = file
        .write_all(bytes)
        .and_then(|()| file.sync_all())
        .and_then(|()| fs::rename(&temporary, path));
    if let Err(error) = written {
        // Best effort: what is left is an owner-only file that no one
        // reads.
        let _ = fs::remove_file(&temporary);
        return Err(refused(path, format_args!("cannot be written: {error}")));
    }
    platform::sync_directory(&directory_of(path));
    Ok(())
}

/// A new, empty, owner-only file beside `path`, with a random name.
fn create_temporary(path: &Path) -> Result<(PathBuf, File), TransportError> {
    let Some(name) = path.file_name() else {
        return Err(refused(path, "names no file"));
    };
    let mut hidden = std::ffi::OsString::from(".");
    hidden.push(name);
    hidden.push(format!(".{}.tmp", super::grant::random_text()));
    let temporary = directory_of(path).join(hidden);
    let mut options = OpenOptions::new();
    // `create_new` is `O_CREAT | O_EXCL`: it fails on any existing file
    // and never follows a link.
    options.write(true).create_new(true);
    owner_only(&mut options);
    let file = platform::no_follow(&mut options)
        .open(&temporary)
        .map_err(|error| refused(path, format_args!("cannot be written: {error}")))?;
    Ok((temporary, file))
}

/// `path` with `suffix` appended to its file name.
fn sibling(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(suffix);
    PathBuf::from(name)
}

fn directory_of(path: &Path) -> PathBuf {
    match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent.to_owned(),
        _ => PathBuf::from("."),
    }
}

fn owner_only(options: &mut OpenOptions) {
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(options, 0o600);
    // Elsewhere a new file has the directory's default access control.
    #[cfg(not(unix))]
    let _ = options;
}

pub(super) mod platform {
    //! What each platform offers. glibc Linux, where `libc` is already a
    //! dependency of this crate, has every guarantee. Other Unix systems
    //! learn the effective user from a file they create, have no
    //! `O_NOFOLLOW` (the identity of the file opened is checked against
    //! the link-free `lstat` instead) and lock within the process only.
    //! Elsewhere (Windows) there are no modes or owners to check: links
    //! and non-files are refused, saves are atomic renames, and locks
    //! are within the process only.

    use std::fs::{File, Metadata, OpenOptions};
    use std::io;
    use std::path::Path;

    use crate::client::transport::TransportError;

    /// The exclusive lock, held until dropped.
    #[derive(Debug)]
    pub(in super::super) struct Lock {
        /// Closing the file releases its `flock`.
        _file: File,
        #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
        _in_process: std::sync::MutexGuard<'static, ()>,
    }

    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    #[expect(unsafe_code, reason = "FFI calls: flock, geteuid")]
    mod ffi {
        use std::os::fd::AsRawFd as _;

        pub(super) fn flock_exclusive(file: &std::fs::File) -> std::io::Result<()> {
            loop {
                // SAFETY: the descriptor is open for as long as `file`
                // is borrowed; flock reads no memory of ours.
                if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) } == 0 {
                    return Ok(());
                }
                let error = std::io::Error::last_os_error();
                if error.kind() != std::io::ErrorKind::Interrupted {
                    return Err(error);
                }
            }
        }

        pub(super) fn geteuid() -> u32 {
            // SAFETY: no arguments, no memory, and it always succeeds.
            unsafe { libc::geteuid() }
        }
    }

    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    pub(super) fn lock_exclusive(file: File) -> io::Result<Lock> {
        ffi::flock_exclusive(&file)?;
        Ok(Lock { _file: file })
    }

    /// Without `flock`, the best available: this process's threads
    /// wait for each other; other processes are not kept out.
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    pub(super) fn lock_exclusive(file: File) -> io::Result<Lock> {
        static IN_PROCESS: std::sync::Mutex<()> = std::sync::Mutex::new(());
        let guard = IN_PROCESS
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        Ok(Lock {
            _file: file,
            _in_process: guard,
        })
    }

    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    pub(super) fn no_follow(options: &mut OpenOptions) -> &mut OpenOptions {
        std::os::unix::fs::OpenOptionsExt::custom_flags(options, libc::O_NOFOLLOW)
    }

    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    pub(super) fn no_follow(options: &mut OpenOptions) -> &mut OpenOptions {
        options
    }

    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    pub(in super::super) fn effective_uid() -> io::Result<u32> {
        Ok(ffi::geteuid())
    }

    #[cfg(all(unix, not(all(target_os = "linux", target_env = "gnu"))))]
    pub(in super::super) fn effective_uid() -> io::Result<u32> {
        probed_uid()
    }

    /// The owner of a file this process creates, which POSIX makes its
    /// effective user: for Unix systems where this crate has no `libc`.
    #[cfg(all(unix, any(test, not(all(target_os = "linux", target_env = "gnu")))))]
    pub(in super::super) fn probed_uid() -> io::Result<u32> {
        use std::os::unix::fs::MetadataExt as _;
        let probe = std::env::temp_dir().join(format!(
            ".mcp-runtime-uid-probe.{}",
            super::super::grant::random_text()
        ));
        let mut options = OpenOptions::new();
        options.write(true).create_new(true);
        super::owner_only(&mut options);
        let uid = options.open(&probe).and_then(|file| file.metadata());
        let _ = std::fs::remove_file(&probe);
        Ok(uid?.uid())
    }

    #[cfg(unix)]
    pub(super) fn check_owner(path: &Path, metadata: &Metadata) -> Result<(), TransportError> {
        use std::os::unix::fs::MetadataExt as _;
        let uid = effective_uid().map_err(|error| {
            super::refused(path, format_args!("cannot tell who owns it: {error}"))
        })?;
        if metadata.uid() != uid {
            return Err(super::refused(
                path,
                format_args!("is owned by another user (uid {})", metadata.uid()),
            ));
        }
        Ok(())
    }

    #[cfg(unix)]
    pub(super) fn check_private(path: &Path, metadata: &Metadata) -> Result<(), TransportError> {
        use std::os::unix::fs::MetadataExt as _;
        let mode = metadata.mode() & 0o777;
        if mode & 0o077 != 0 {
            return Err(super::refused(
                path,
                format_args!(
                    "can be read or written by other users (mode {mode:04o}): its tokens may have been read; remove it, or restrict it to its owner (chmod 600)"
                ),
            ));
        }
        Ok(())
    }

    #[cfg(unix)]
    pub(super) fn same_file(before: &Metadata, opened: &Metadata) -> bool {
        use std::os::unix::fs::MetadataExt as _;
        (before.dev(), before.ino()) == (opened.dev(), opened.ino())
    }

    /// Makes the rename durable. Best effort: the new cache is in place
    /// either way, only a power loss could still undo the rename.
    #[cfg(unix)]
    pub(super) fn sync_directory(directory: &Path) {
        if let Err(error) = File::open(directory).and_then(|d| d.sync_all()) {
            tracing::debug!(%error, directory = %directory.display(), "cannot sync the token cache's directory");
        }
    }

    #[cfg(not(unix))]
    pub(super) fn check_owner(_: &Path, _: &Metadata) -> Result<(), TransportError> {
        Ok(())
    }

    #[cfg(not(unix))]
    pub(super) fn check_private(_: &Path, _: &Metadata) -> Result<(), TransportError> {
        Ok(())
    }

    /// Without a stable file identity in std, the best available: the
    /// path was not a link just before it was opened.
    #[cfg(not(unix))]
    pub(super) fn same_file(_: &Metadata, _: &Metadata) -> bool {
        true
    }

    /// Directories cannot be opened as files here.
    #[cfg(not(unix))]
    pub(super) fn sync_directory(_: &Path) {}
}

//! Local file safety: turning a client-supplied path or `file://` URI into
//! a path inside the directories the server was given.
//!
//! The spec's resources page: "Servers **MUST** sanitize file paths to
//! prevent directory traversal attacks when serving `file://` resources",
//! and "Servers **MUST** validate all resource URIs". A path or URI from a
//! client (or from the model that wrote the client's request) is
//! attacker-controlled input. [`Directories::resolve`] refuses, each with
//! its own [`PathError`]:
//!
//! - `..` anywhere (`../x`, `a/../../x`, `%2e%2e` in a URI);
//! - NUL bytes, and backslashes (not a separator here, but one on Windows:
//!   `..\..\x`);
//! - Windows drive (`C:\x`, `c:/x`, `file:///C:/x`) and UNC forms
//!   (`\\server\share`, `//server/share`, `file://server/share`);
//! - absolute paths outside the directories;
//! - symbolic links that lead out of them (checked on the real file
//!   system: every existing part of the path is resolved), and dangling
//!   ones, which a write would follow;
//! - paths over 4,096 bytes or with a name over 255.
//!
//! ```no_run
//! use mcp_runtime::files::Directories;
//!
//! let dirs = Directories::new(["/srv/notes"])?;
//! let path = dirs.resolve("2025/january.md")?; // or "file:///srv/notes/2025/january.md"
//! let text = std::fs::read_to_string(path.as_path())?;
//! assert!(dirs.resolve("../../etc/passwd").is_err());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Open files, not checked paths
//!
//! A checked path can change between the check and its use: a process
//! that can write inside the directories can swap a directory on it for a
//! symbolic link that leads out, or link a file from outside in with a
//! hard link. So the API that touches files takes the client's input and
//! hands back what it opened, never a path to open later:
//!
//! - [`Directories::open`] opens a regular file for reading;
//! - [`Directories::write`] replaces (or creates) a file's contents;
//! - [`Directories::walk`] lists a directory tree, each [`Entry`] opened
//!   through its own directory's handle.
//!
//! Each resolves the path beneath a handle of its directory that cannot be
//! escaped (the `cap-std` crate: `openat2` with `RESOLVE_BENEATH |
//! RESOLVE_NO_MAGICLINKS` on Linux 5.6 and later, and elsewhere a walk of
//! the path one component at a time with `O_NOFOLLOW`, which is as strict
//! and somewhat slower). Symbolic links that stay inside are followed;
//! one that leads out, one with an absolute target (even one that points
//! back inside) and `..` past the directory are refused as
//! [`PathError::SymlinkEscape`], however the tree changes while the path
//! is resolved.
//!
//! - Only regular files open. A FIFO, a device or a socket is refused
//!   ([`PathError::NotRegular`]) without waiting on it: the open cannot
//!   block (`O_NONBLOCK`), and the *opened* descriptor is what is checked
//!   (`fstat`). Opening a FIFO would otherwise hold the thread until
//!   someone opened its other end.
//! - A file with more than one hard link is refused
//!   ([`PathError::HardLinked`]): a hard link inside the directories can
//!   name any file outside them that its maker could reach. Serve trees
//!   that use hard links on purpose with
//!   [`allow_hard_links`](Directories::allow_hard_links).
//! - A write goes to a temporary file in the target's directory, renamed
//!   over the target once complete: it never writes through an existing
//!   link, and a reader never sees half a file.
//!
//! All of it blocks on the file system: call it off the async threads,
//! from `#[tool(blocking)]` handlers or inside
//! [`run_blocking`](crate::run_blocking).
//!
//! ```no_run
//! use std::io::Read as _;
//! use mcp_runtime::files::Directories;
//!
//! let dirs = Directories::new(["/srv/notes"])?;
//! let mut text = String::new();
//! dirs.open("2025/january.md")?.read_to_string(&mut text)?;
//! dirs.write("2025/february.md", b"# February\n")?;
//! for entry in dirs.walk(".", 2)? {
//!     let entry = entry?;
//!     println!("{} ({} bytes)", entry.relative().display(), entry.len());
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! [`Directories::resolve`] and [`open_regular`] remain for a path that is
//! only named (a URI to show, a question to ask), and for files the server
//! chose itself.

mod open;
mod walk;

use std::fmt;
use std::fs::{File, OpenOptions};
use std::io;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use cap_std::fs::Dir;

use percent_encoding::{AsciiSet, CONTROLS, percent_decode_str, utf8_percent_encode};

pub use self::open::{OpenedFile, Written};
pub use self::walk::{Entry, Walk};

/// The longest path accepted, in bytes (Linux's `PATH_MAX`).
pub const MAX_PATH_BYTES: usize = 4096;
/// The longest file name accepted, in bytes (Linux's `NAME_MAX`).
pub const MAX_NAME_BYTES: usize = 255;

/// The directories a server was given, canonicalized once and held open.
#[derive(Clone, Debug)]
pub struct Directories {
    roots: Vec<Root>,
    /// Whether files with more than one hard link may be opened.
    hard_links: bool,
}

#[derive(Clone, Debug)]
struct Root {
    /// As given (made absolute), so that paths written against it match.
    given: PathBuf,
    /// With every symbolic link resolved: what paths must end up under.
    canonical: PathBuf,
    /// The directory, open: what every file is opened beneath.
    dir: Arc<Dir>,
}

/// A path inside one of the [`Directories`], every existing part of it
/// resolved (no symbolic link left in it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SafePath {
    path: PathBuf,
    root: usize,
}

/// Why a client's path was refused.
#[derive(Debug)]
#[non_exhaustive]
pub enum PathError {
    /// The path is empty.
    Empty,
    /// It contains a NUL byte.
    Nul,
    /// It is longer than [`MAX_PATH_BYTES`], or a name in it is longer
    /// than [`MAX_NAME_BYTES`].
    TooLong,
    /// It contains a `..` component.
    ParentDirectory,
    /// It contains a backslash.
    Backslash,
    /// It names a Windows drive (`C:`).
    WindowsDrive,
    /// It names a network share (`\\server\share`, `//server/share`,
    /// `file://server/...`).
    Unc,
    /// A URI that is not a `file:` URI, or whose escapes are not UTF-8.
    InvalidUri(String),
    /// An absolute path outside every directory.
    Outside(PathBuf),
    /// A symbolic link on the path leads outside every directory (or
    /// nowhere).
    SymlinkEscape(PathBuf),
    /// Nothing exists at the path (from [`Directories::resolve_existing`]).
    NotFound(PathBuf),
    /// What the path names is not a regular file (a directory, a FIFO, a
    /// device, a socket).
    NotRegular(PathBuf),
    /// What a walk was to start from is not a directory.
    NotADirectory(PathBuf),
    /// The file has other hard links (how many in all): it may be a file
    /// from outside the directories, linked in. See
    /// [`Directories::allow_hard_links`].
    HardLinked(PathBuf, u64),
    /// The file system could not be read.
    Io(io::Error),
}

impl fmt::Display for PathError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PathError::Empty => f.write_str("the path is empty"),
            PathError::Nul => f.write_str("the path contains a NUL byte"),
            PathError::TooLong => write!(
                f,
                "the path is too long (at most {MAX_PATH_BYTES} bytes, and {MAX_NAME_BYTES} per name)"
            ),
            PathError::ParentDirectory => {
                f.write_str("the path contains `..`; give a path inside the served directories")
            }
            PathError::Backslash => {
                f.write_str("the path contains a backslash; separate names with `/`")
            }
            PathError::WindowsDrive => f.write_str("the path names a Windows drive"),
            PathError::Unc => f.write_str("the path names a network share"),
            PathError::InvalidUri(problem) => write!(f, "invalid file URI: {problem}"),
            PathError::Outside(path) => {
                write!(f, "{} is outside the served directories", path.display())
            }
            PathError::SymlinkEscape(path) => write!(
                f,
                "{} goes through a symbolic link that leads outside the served directories",
                path.display()
            ),
            PathError::NotFound(path) => write!(f, "{} does not exist", path.display()),
            PathError::NotRegular(path) => write!(f, "{} is not a regular file", path.display()),
            PathError::NotADirectory(path) => write!(f, "{} is not a directory", path.display()),
            PathError::HardLinked(path, links) => write!(
                f,
                "{} has {links} hard links: it may be a file from outside the served directories",
                path.display()
            ),
            PathError::Io(error) => write!(f, "the path cannot be checked: {error}"),
        }
    }
}

impl std::error::Error for PathError {}

impl Directories {
    /// The directories `dirs`, each of which must exist. Relative client
    /// paths resolve against the first.
    pub fn new<P: AsRef<Path>>(dirs: impl IntoIterator<Item = P>) -> io::Result<Directories> {
        let mut roots = Vec::new();
        for dir in dirs {
            let given = std::path::absolute(dir.as_ref())?;
            let canonical = given.canonicalize()?;
            if !canonical.is_dir() {
                return Err(io::Error::new(
                    io::ErrorKind::NotADirectory,
                    format!("{} is not a directory", given.display()),
                ));
            }
            let dir = Dir::open_ambient_dir(&canonical, cap_std::ambient_authority())?;
            roots.push(Root {
                given,
                canonical,
                dir: Arc::new(dir),
            });
        }
        if roots.is_empty() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "give at least one directory",
            ));
        }
        Ok(Directories {
            roots,
            hard_links: false,
        })
    }

    /// Whether [`open`](Self::open), [`write`](Self::write) and a walk's
    /// [`Entry::open`] accept a file with more than one hard link. By
    /// default they refuse it ([`PathError::HardLinked`]): anyone who can
    /// write inside the directories can hard-link in any file they can
    /// reach, and nothing on the link says where it came from. Allow them
    /// for trees that use hard links on purpose and that no untrusted
    /// local user writes to.
    pub fn allow_hard_links(mut self, allow: bool) -> Self {
        self.hard_links = allow;
        self
    }

    /// The directories, with symbolic links resolved.
    pub fn roots(&self) -> impl Iterator<Item = &Path> {
        self.roots.iter().map(|root| root.canonical.as_path())
    }

    /// `input` (a path relative to the first directory, an absolute path,
    /// or a `file://` URI) as a path inside the directories. It need not
    /// exist yet (a file about to be written), but every part of it that
    /// exists is resolved and must stay inside.
    pub fn resolve(&self, input: &str) -> Result<SafePath, PathError> {
        let path = client_path(input)?;
        let (root, relative) = self.place(&path)?;
        let lexical = self.roots[root].path_of(&relative);
        let resolved = resolve_existing_prefix(&lexical)?;
        let inside = |p: &Path| p.starts_with(&self.roots[root].canonical);
        if !inside(&resolved) {
            // The lexical path was inside: a link took it out.
            return Err(PathError::SymlinkEscape(lexical));
        }
        Ok(SafePath {
            path: resolved,
            root,
        })
    }

    /// [`resolve`](Self::resolve), for a path that must exist.
    pub fn resolve_existing(&self, input: &str) -> Result<SafePath, PathError> {
        let path = self.resolve(input)?;
        match std::fs::symlink_metadata(&path.path) {
            Ok(_) => Ok(path),
            Err(error) if error.kind() == io::ErrorKind::NotFound => {
                Err(PathError::NotFound(path.path))
            }
            Err(error) => Err(PathError::Io(error)),
        }
    }

    /// The `file://` URI of `path`.
    pub fn uri(&self, path: &SafePath) -> String {
        file_uri(&path.path)
    }

    /// Which directory an absolute or relative path falls in, lexically,
    /// and the path relative to it (`.` for the directory itself).
    fn place(&self, path: &Path) -> Result<(usize, PathBuf), PathError> {
        if path.is_relative() {
            return Ok((0, path.to_owned()));
        }
        for (index, root) in self.roots.iter().enumerate() {
            for base in [&root.canonical, &root.given] {
                if let Ok(rest) = path.strip_prefix(base) {
                    let rest = match rest.as_os_str().is_empty() {
                        true => PathBuf::from("."),
                        false => rest.to_owned(),
                    };
                    return Ok((index, rest));
                }
            }
        }
        Err(PathError::Outside(path.to_owned()))
    }

    /// The directory `input` falls in and the path relative to it, checked
    /// lexically only: what the handle-relative operations start from.
    fn locate(&self, input: &str) -> Result<(&Root, PathBuf), PathError> {
        let path = client_path(input)?;
        let (root, relative) = self.place(&path)?;
        Ok((&self.roots[root], relative))
    }
}

impl Root {
    /// The full path of `relative` (a path [`Directories::place`] gave).
    fn path_of(&self, relative: &Path) -> PathBuf {
        match relative == Path::new(".") {
            true => self.canonical.clone(),
            false => self.canonical.join(relative),
        }
    }
}

impl SafePath {
    /// The path, to open or create.
    pub fn as_path(&self) -> &Path {
        &self.path
    }

    /// The path relative to its directory (empty for the directory itself).
    pub fn relative(&self, directories: &Directories) -> PathBuf {
        let root = &directories.roots[self.root].canonical;
        self.path
            .strip_prefix(root)
            .map(Path::to_owned)
            .unwrap_or_default()
    }

    /// The path, owned.
    pub fn into_path_buf(self) -> PathBuf {
        self.path
    }
}

impl AsRef<Path> for SafePath {
    fn as_ref(&self) -> &Path {
        &self.path
    }
}

/// Opens `path` with `options`, as a regular file or not at all: the safe
/// open for a file a client named.
///
/// The open itself cannot block (`O_NONBLOCK`: a FIFO without a reader is
/// refused rather than waited on) nor follow a final symbolic link
/// (`O_NOFOLLOW`); then the *opened* descriptor is checked (`fstat`), so
/// that a file swapped for something else after a check is caught, and
/// its `O_NONBLOCK` cleared (it means nothing for a regular file, but the
/// file is then a plain blocking file, whatever it is handed to). Anything
/// but a regular file is an error for which [`is_not_regular`] is true
/// ("not a regular file").
///
/// Open for writing without `truncate`, and truncate with
/// [`File::set_len`] once this returns: the open happens before the check.
///
/// The call still touches the file system: make it off the async threads
/// (`#[tool(blocking)]`, [`run_blocking`](crate::run_blocking)).
pub fn open_regular(path: impl AsRef<Path>, options: &OpenOptions) -> io::Result<File> {
    let mut options = options.clone();
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        options.custom_flags(libc::O_NONBLOCK | libc::O_NOFOLLOW);
    }
    let file = options.open(path).map_err(special_file_refused)?;
    if !file.metadata()?.is_file() {
        return Err(not_regular());
    }
    #[cfg(unix)]
    clear_nonblocking(&file)?;
    Ok(file)
}

/// Whether `error` is [`open_regular`]'s refusal of a file that is not a
/// regular file.
pub fn is_not_regular(error: &io::Error) -> bool {
    error
        .get_ref()
        .is_some_and(|inner| inner.is::<NotRegular>())
}

/// The error of a file that is not a regular file.
#[derive(Debug)]
struct NotRegular;

impl fmt::Display for NotRegular {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("not a regular file")
    }
}

impl std::error::Error for NotRegular {}

fn not_regular() -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, NotRegular)
}

/// An open that failed because of what the path names, as a refusal:
/// `ENXIO` is a FIFO without a reader opened for writing without blocking
/// (or a device without its hardware), `ELOOP` a symbolic link refused by
/// `O_NOFOLLOW`.
fn special_file_refused(error: io::Error) -> io::Error {
    #[cfg(unix)]
    if matches!(error.raw_os_error(), Some(libc::ENXIO | libc::ELOOP)) {
        return not_regular();
    }
    error
}

/// Clears `O_NONBLOCK`, set only so that the open could not block.
#[cfg(unix)]
#[expect(unsafe_code, reason = "two fcntl calls on a descriptor `file` owns")]
fn clear_nonblocking(file: &File) -> io::Result<()> {
    use std::os::fd::AsRawFd as _;
    let fd = file.as_raw_fd();
    // SAFETY: `fd` is open while `file` is borrowed; F_GETFL and F_SETFL
    // read and set the descriptor's status flags, and touch no memory.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    if flags < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: as above.
    if unsafe { libc::fcntl(fd, libc::F_SETFL, flags & !libc::O_NONBLOCK) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// The `file://` URI of an absolute path (`file:///srv/a%20b.txt`).
pub fn file_uri(path: &Path) -> String {
    /// What a URI path may not hold unescaped (RFC 3986 `pchar`, `/` kept).
    const PATH: &AsciiSet = &CONTROLS
        .add(b' ')
        .add(b'"')
        .add(b'#')
        .add(b'%')
        .add(b'<')
        .add(b'>')
        .add(b'?')
        .add(b'[')
        .add(b'\\')
        .add(b']')
        .add(b'^')
        .add(b'`')
        .add(b'{')
        .add(b'|')
        .add(b'}');
    let text = path.to_string_lossy();
    format!("file://{}", utf8_percent_encode(&text, PATH))
}

/// The path a client's input names, checked for what no path from a
/// client may hold, before the file system is touched.
fn client_path(input: &str) -> Result<PathBuf, PathError> {
    let text = match input.strip_prefix("file:") {
        Some(rest) => from_file_uri(rest)?,
        None if input.contains("://") => {
            return Err(PathError::InvalidUri(
                "only `file:` URIs name local files".into(),
            ));
        }
        None => input.to_owned(),
    };
    if text.is_empty() {
        return Err(PathError::Empty);
    }
    if text.contains('\0') {
        return Err(PathError::Nul);
    }
    if text.starts_with("\\\\") || text.starts_with("//") {
        return Err(PathError::Unc);
    }
    if text.contains('\\') {
        return Err(PathError::Backslash);
    }
    if is_drive(text.strip_prefix('/').unwrap_or(&text)) {
        return Err(PathError::WindowsDrive);
    }
    if text.len() > MAX_PATH_BYTES {
        return Err(PathError::TooLong);
    }
    let mut path = PathBuf::new();
    for component in Path::new(&text).components() {
        match component {
            Component::ParentDir => return Err(PathError::ParentDirectory),
            Component::CurDir => {}
            Component::Normal(name) if name.len() > MAX_NAME_BYTES => {
                return Err(PathError::TooLong);
            }
            other => path.push(other),
        }
    }
    if path.as_os_str().is_empty() {
        path.push(".");
    }
    Ok(path)
}

/// `C:`, `c:/...`: a letter and a colon.
fn is_drive(text: &str) -> bool {
    let bytes = text.as_bytes();
    bytes.len() >= 2
        && bytes[0].is_ascii_alphabetic()
        && bytes[1] == b':'
        && (bytes.len() == 2 || bytes[2] == b'/' || bytes[2] == b'\\')
}

/// The decoded path of a `file:` URI (what follows `file:`): `//` with an
/// empty or `localhost` authority, then an absolute path.
fn from_file_uri(rest: &str) -> Result<String, PathError> {
    let Some(after) = rest.strip_prefix("//") else {
        return Err(PathError::InvalidUri(
            "write it as file:///absolute/path".into(),
        ));
    };
    let (authority, path) = after.split_at(after.find('/').unwrap_or(after.len()));
    if !(authority.is_empty() || authority.eq_ignore_ascii_case("localhost")) {
        return Err(PathError::Unc);
    }
    if path.contains(['?', '#']) {
        return Err(PathError::InvalidUri(
            "a file URI has no query or fragment".into(),
        ));
    }
    let decoded = percent_decode_str(path)
        .decode_utf8()
        .map_err(|_| PathError::InvalidUri("its escapes are not UTF-8".into()))?;
    if decoded.is_empty() {
        return Err(PathError::Empty);
    }
    Ok(decoded.into_owned())
}

/// `path` with every symbolic link in its existing part resolved; the
/// parts that do not exist yet are appended as they are (plain names: `..`
/// was refused). A dangling link is an escape: where it would lead cannot
/// be checked, and a write would follow it.
fn resolve_existing_prefix(path: &Path) -> Result<PathBuf, PathError> {
    let mut existing = path.to_owned();
    let mut missing = Vec::new();
    loop {
        match existing.canonicalize() {
            Ok(resolved) => {
                let mut full = resolved;
                full.extend(missing.iter().rev());
                return Ok(full);
            }
            Err(error) if error.kind() == io::ErrorKind::NotFound => {
                if std::fs::symlink_metadata(&existing).is_ok() {
                    return Err(PathError::SymlinkEscape(path.to_owned()));
                }
                let Some(name) = existing.file_name().map(ToOwned::to_owned) else {
                    return Err(PathError::NotFound(path.to_owned()));
                };
                missing.push(name);
                existing.pop();
            }
            // A file where a directory should be, and the like: nothing
            // beyond it can exist or be created.
            Err(error) if error.kind() == io::ErrorKind::NotADirectory => {
                return Err(PathError::NotFound(path.to_owned()));
            }
            Err(error) => return Err(PathError::Io(error)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lexical_refusals() {
        let cases = [
            ("", "the path is empty"),
            ("a\0b", "NUL"),
            ("../x", "`..`"),
            ("a/../../x", "`..`"),
            ("a\\b", "backslash"),
            ("..\\..\\x", "backslash"),
            ("C:\\Windows", "backslash"),
            ("c:/x", "Windows drive"),
            ("C:", "Windows drive"),
            ("\\\\server\\share", "network share"),
            ("//server/share", "network share"),
            ("file://server/share/x", "network share"),
            ("file:///C:/x", "Windows drive"),
            ("file:///a/%2e%2e/%2e%2e/etc", "`..`"),
            ("file:///a%00b", "NUL"),
            ("file:///a%FFb", "UTF-8"),
            ("file:a/b", "file:///"),
            ("https://example.com/x", "only `file:`"),
            ("file:///a?x=1", "query"),
        ];
        for (input, expected) in cases {
            let error = client_path(input).unwrap_err().to_string();
            assert!(error.contains(expected), "{input:?}: {error}");
        }
        let long_name = "n".repeat(MAX_NAME_BYTES + 1);
        assert!(matches!(client_path(&long_name), Err(PathError::TooLong)));
        let long_path = "a/".repeat(MAX_PATH_BYTES / 2 + 1);
        assert!(matches!(client_path(&long_path), Err(PathError::TooLong)));
    }

    #[test]
    fn only_regular_files_open() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a.txt");
        std::fs::write(&file, "a").unwrap();
        let read = OpenOptions::new().read(true).clone();
        let mut opened = open_regular(&file, &read).unwrap();
        let mut text = String::new();
        io::Read::read_to_string(&mut opened, &mut text).unwrap();
        assert_eq!(text, "a");
        let error = open_regular(dir.path(), &read).unwrap_err();
        assert!(is_not_regular(&error), "{error}");
        assert_eq!(error.to_string(), "not a regular file");
        #[cfg(unix)]
        {
            let link = dir.path().join("link");
            std::os::unix::fs::symlink(&file, &link).unwrap();
            assert!(is_not_regular(&open_regular(&link, &read).unwrap_err()));
            let fifo = dir.path().join("fifo");
            let made = std::process::Command::new("mkfifo").arg(&fifo).status();
            if made.is_ok_and(|status| status.success()) {
                // Neither end waits for the other.
                assert!(is_not_regular(&open_regular(&fifo, &read).unwrap_err()));
                let write = OpenOptions::new().write(true).clone();
                assert!(is_not_regular(&open_regular(&fifo, &write).unwrap_err()));
            }
        }
        let missing = open_regular(dir.path().join("missing"), &read).unwrap_err();
        assert_eq!(missing.kind(), io::ErrorKind::NotFound);
    }

    #[test]
    fn file_uris_are_encoded_and_decoded() {
        assert_eq!(
            file_uri(Path::new("/srv/a b/#1%.txt")),
            "file:///srv/a%20b/%231%25.txt"
        );
        assert_eq!(
            client_path("file:///srv/a%20b/%231%25.txt").unwrap(),
            Path::new("/srv/a b/#1%.txt")
        );
        assert_eq!(
            client_path("file://localhost/srv/x").unwrap(),
            Path::new("/srv/x")
        );
        assert_eq!(client_path("./a/./b").unwrap(), Path::new("a/b"));
    }
}

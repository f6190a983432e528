//! This process's stdin and stdout, as the stdio transport reads and writes
//! them.
//!
//! tokio's `stdin()` and `stdout()` hand every read and every flush to its
//! blocking thread pool and back: two thread switches per batch of
//! messages, on a server usually pinned to few cores. When stdin or stdout
//! is a pipe or a socket (what every client that spawns a server gives
//! it), it is read and written on the runtime's own thread instead, driven
//! by epoll like a TCP connection. Anything else (a terminal, a regular
//! file) keeps tokio's blocking versions, since it cannot be polled.
//!
//! Polling needs the descriptor in non-blocking mode, a flag of the open
//! file that every process sharing it sees; so it is set back to blocking
//! once the transport ends ([`Restore`]). A descriptor that is the same
//! pipe or socket as stderr (`2>&1`, or one socket for all three) keeps
//! tokio's version: logging writes to stderr with blocking calls, and must
//! never see `EWOULDBLOCK`.

use tokio::io::{AsyncRead, AsyncWrite};

/// The process's stdin and stdout, and what to put back when done.
pub(crate) struct ProcessStdio {
    pub(crate) input: Box<dyn AsyncRead + Unpin>,
    pub(crate) output: Box<dyn AsyncWrite + Unpin>,
    pub(crate) restore: Restore,
}

/// Descriptors to set back to blocking mode once the transport is done.
#[derive(Default)]
pub(crate) struct Restore {
    #[cfg(unix)]
    blocking: Vec<unix::Polled>,
}

impl ProcessStdio {
    /// Takes stdin and stdout. Must run inside a runtime with its IO driver
    /// (`enable_io`), as `run()`'s own runtime has.
    pub(crate) fn take() -> ProcessStdio {
        #[cfg(unix)]
        {
            unix::take()
        }
        #[cfg(not(unix))]
        ProcessStdio {
            input: Box::new(tokio::io::stdin()),
            output: Box::new(tokio::io::stdout()),
            restore: Restore::default(),
        }
    }
}

impl Restore {
    /// Sets the descriptors polled back to blocking mode.
    pub(crate) fn blocking(self) {
        #[cfg(unix)]
        for polled in self.blocking {
            if let Err(error) = polled.set_blocking() {
                tracing::debug!(%error, "could not set stdio back to blocking mode");
            }
        }
    }
}

#[cfg(unix)]
mod unix {
    use std::fs::File;
    use std::io;
    use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
    use std::os::unix::fs::{FileTypeExt as _, MetadataExt as _};
    use std::os::unix::net::UnixStream as StdStream;

    use tokio::io::{AsyncRead, AsyncWrite};
    use tokio::net::UnixStream;
    use tokio::net::unix::pipe;

    use super::{ProcessStdio, Restore};

    /// A descriptor put in non-blocking mode, and how it was polled.
    pub(super) enum Polled {
        Fifo(File),
        Socket(File),
    }

    impl Polled {
        pub(super) fn set_blocking(self) -> io::Result<()> {
            match self {
                // Registering a second descriptor of the same pipe with the
                // reactor is harmless, and `into_blocking_fd` clears the
                // flag on the open file both share.
                Polled::Fifo(file) => pipe::Receiver::from_file_unchecked(file)?
                    .into_blocking_fd()
                    .map(drop),
                Polled::Socket(file) => StdStream::from(OwnedFd::from(file)).set_nonblocking(false),
            }
        }
    }

    pub(super) fn take() -> ProcessStdio {
        let mut restore = Restore::default();
        let input: Box<dyn AsyncRead + Unpin> = match polled(io::stdin().as_fd(), &mut restore) {
            Some(Stream::Fifo(file)) => match pipe::Receiver::from_file(file) {
                Ok(receiver) => Box::new(receiver),
                Err(_) => Box::new(tokio::io::stdin()),
            },
            Some(Stream::Socket(socket)) => Box::new(socket),
            None => Box::new(tokio::io::stdin()),
        };
        let output: Box<dyn AsyncWrite + Unpin> = match polled(io::stdout().as_fd(), &mut restore) {
            Some(Stream::Fifo(file)) => match pipe::Sender::from_file(file) {
                Ok(sender) => Box::new(sender),
                Err(_) => Box::new(tokio::io::stdout()),
            },
            Some(Stream::Socket(socket)) => Box::new(socket),
            None => Box::new(tokio::io::stdout()),
        };
        ProcessStdio {
            input,
            output,
            restore,
        }
    }

    enum Stream {
        /// A pipe, not yet in non-blocking mode (tokio's pipe types set it).
        Fifo(File),
        Socket(UnixStream),
    }

    /// `fd` as a stream the reactor can poll, if it is a pipe or a socket
    /// that stderr does not share; a second descriptor of it goes into
    /// `restore`.
    fn polled(fd: BorrowedFd<'_>, restore: &mut Restore) -> Option<Stream> {
        if same_file(fd, io::stderr().as_fd()) {
            return None;
        }
        let file = File::from(fd.try_clone_to_owned().ok()?);
        let kind = file.metadata().ok()?.file_type();
        let spare = File::from(fd.try_clone_to_owned().ok()?);
        if kind.is_fifo() {
            restore.blocking.push(Polled::Fifo(spare));
            return Some(Stream::Fifo(file));
        }
        if kind.is_socket() {
            // A stream socket of any family reads and writes alike.
            let socket = StdStream::from(OwnedFd::from(file));
            socket.set_nonblocking(true).ok()?;
            restore.blocking.push(Polled::Socket(spare));
            return UnixStream::from_std(socket).ok().map(Stream::Socket);
        }
        None
    }

    /// Whether two descriptors are the same pipe, socket or file.
    fn same_file(a: BorrowedFd<'_>, b: BorrowedFd<'_>) -> bool {
        let identity = |fd: BorrowedFd<'_>| {
            let file = File::from(fd.try_clone_to_owned().ok()?);
            let metadata = file.metadata().ok()?;
            Some((metadata.dev(), metadata.ino()))
        };
        matches!((identity(a), identity(b)), (Some(a), Some(b)) if a == b)
    }
}

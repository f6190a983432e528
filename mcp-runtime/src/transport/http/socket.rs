//! A connection's socket as hyper sees it: an answer's head and body leave
//! in one `write`, copied through a buffer the thread shares.
//!
//! hyper either copies every body into the connection's own write buffer
//! (`writev(false)`), which then keeps the capacity of the largest answer
//! it ever sent for as long as the connection lives (a 21 KB list page
//! costs each keep-alive connection 21 KB; a 1 MB resource, 1 MB), or
//! hands the parts to `writev`, which the kernel serves more slowly than
//! one contiguous `write` for the small answers that are most of the
//! traffic (benches/NOTES.md, section 7). Queuing the parts in hyper and
//! joining them here keeps the single `write` and pays for the copy with
//! one buffer per thread instead of one per connection.

use std::cell::RefCell;
use std::io::{self, IoSlice};
use std::pin::Pin;
use std::task::{Context, Poll};

use hyper::rt::{Read, ReadBufCursor, Write};
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;

/// Parts up to this many bytes in all are joined and sent with one
/// `write`; larger answers go out as a `writev` of their parts, with no
/// copy: past a few KiB the copy costs more than the second segment
/// (`tools/list` of a 21 KB page, 16 connections: 0.91x of the floor
/// joined, 0.95x not; benches/NOTES.md, section 17).
const JOIN_LIMIT: usize = 4 * 1024;

thread_local! {
    /// The joined parts, reused by every connection this thread serves;
    /// it never holds more than [`JOIN_LIMIT`] bytes.
    static JOINED: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// A TCP connection for hyper, whose vectored writes are joined.
pub(super) struct Socket(TokioIo<TcpStream>);

impl Socket {
    pub(super) fn new(stream: TcpStream) -> Socket {
        Socket(TokioIo::new(stream))
    }
}

impl Read for Socket {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: ReadBufCursor<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().0).poll_read(cx, buf)
    }
}

impl Write for Socket {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().0).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let io = Pin::new(&mut self.get_mut().0);
        let total: usize = bufs.iter().map(|buf| buf.len()).sum();
        match bufs {
            [] => Poll::Ready(Ok(0)),
            [only] => io.poll_write(cx, only),
            _ if total > JOIN_LIMIT => io.poll_write_vectored(cx, bufs),
            // A write that the socket takes only in part (or not at all)
            // is retried by hyper with what is left, joined again: nothing
            // of this connection's stays in the shared buffer.
            _ => JOINED.with_borrow_mut(|joined| {
                joined.clear();
                for buf in bufs {
                    joined.extend_from_slice(buf);
                }
                io.poll_write(cx, joined)
            }),
        }
    }

    fn is_write_vectored(&self) -> bool {
        true
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().0).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().0).poll_shutdown(cx)
    }
}

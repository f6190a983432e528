//! Response bodies: one JSON object, or a stream of SSE events fed by the
//! task that runs the request.

use std::convert::Infallible;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};
use tokio::sync::mpsc;

/// The body of every response the MCP endpoint sends.
#[derive(Debug)]
pub enum McpBody {
    /// A complete body (possibly empty).
    Full(Option<Bytes>),
    /// Server-sent events, each already framed.
    Stream(mpsc::Receiver<Bytes>),
}

impl McpBody {
    pub(crate) fn empty() -> McpBody {
        McpBody::Full(None)
    }

    pub(crate) fn full(bytes: impl Into<Bytes>) -> McpBody {
        McpBody::Full(Some(bytes.into()))
    }
}

impl Body for McpBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        match self.get_mut() {
            McpBody::Full(bytes) => Poll::Ready(bytes.take().map(|b| Ok(Frame::data(b)))),
            McpBody::Stream(events) => events.poll_recv(cx).map(|e| e.map(|b| Ok(Frame::data(b)))),
        }
    }

    fn is_end_stream(&self) -> bool {
        matches!(self, McpBody::Full(None))
    }

    fn size_hint(&self) -> SizeHint {
        match self {
            McpBody::Full(Some(bytes)) => SizeHint::with_exact(bytes.len() as u64),
            McpBody::Full(None) => SizeHint::with_exact(0),
            McpBody::Stream(_) => SizeHint::default(),
        }
    }
}

/// One SSE event carrying a JSON-RPC message.
pub(crate) fn event(message: &[u8]) -> Bytes {
    let mut out = Vec::with_capacity(message.len() + 8);
    out.extend_from_slice(b"data: ");
    out.extend_from_slice(message);
    out.extend_from_slice(b"\n\n");
    Bytes::from(out)
}

/// An SSE comment, ignored by clients, that keeps idle streams open.
pub(crate) const KEEP_ALIVE: Bytes = Bytes::from_static(b":\n\n");

//! Response bodies: one JSON object, or a stream of SSE events fed by the
//! task that runs the request.

use std::convert::Infallible;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};
use tokio::sync::mpsc;

use crate::protocol::RequestId;
use crate::protocol::jsonrpc::{RESULT_END, result_frame, result_head};
use crate::security::clients::ClientRequest;

/// The body of every response the MCP endpoint sends: one JSON object, or
/// a stream of server-sent events. An `http_body::Body`; what it holds is
/// the transport's business.
#[derive(Debug)]
pub struct McpBody(Kind);

#[derive(Debug)]
enum Kind {
    /// A complete body (possibly empty).
    Full(Option<Bytes>),
    /// Server-sent events, each already framed; with the client's request
    /// count when the stream came through the tower service (over our own
    /// connections, the connection's response wrapper holds it).
    Stream(mpsc::Receiver<Bytes>, Option<ClientRequest>),
    /// One JSON object sent in pieces, so that a result shared by many
    /// responses is written out without being copied into each.
    Pieces(Pieces),
}

/// The pieces of [`Kind::Pieces`]: the frame's head, the shared result,
/// then the frame's end. Each is sent once, in order (an empty piece is
/// one already sent: neither is ever empty to begin with).
#[derive(Debug)]
struct Pieces {
    head: Bytes,
    result: Bytes,
    ended: bool,
}

impl Pieces {
    fn next(&mut self) -> Option<Bytes> {
        if !self.head.is_empty() {
            Some(std::mem::take(&mut self.head))
        } else if !self.result.is_empty() {
            Some(std::mem::take(&mut self.result))
        } else if !self.ended {
            self.ended = true;
            Some(Bytes::from_static(RESULT_END))
        } else {
            None
        }
    }

    fn remaining(&self) -> u64 {
        let end = if self.ended { 0 } else { RESULT_END.len() };
        (self.head.len() + self.result.len() + end) as u64
    }
}

/// Empty: the body of a CORS preflight's answer.
impl Default for McpBody {
    fn default() -> McpBody {
        McpBody::empty()
    }
}

impl McpBody {
    pub(crate) fn empty() -> McpBody {
        McpBody(Kind::Full(None))
    }

    pub(crate) fn full(bytes: impl Into<Bytes>) -> McpBody {
        McpBody(Kind::Full(Some(bytes.into())))
    }

    /// Server-sent events, as the task that runs the request sends them.
    pub(crate) fn stream(events: mpsc::Receiver<Bytes>) -> McpBody {
        McpBody(Kind::Stream(events, None))
    }

    /// Keeps `request` counted against its client until a stream ends (a
    /// complete body ends with its response: the count ends then too).
    pub(crate) fn holding(mut self, request: ClientRequest) -> McpBody {
        if let Kind::Stream(_, held) = &mut self.0 {
            *held = Some(request);
        }
        self
    }

    /// A JSON-RPC response carrying `result`, which stays shared when it is
    /// large. A small one is copied into one frame: that costs less than
    /// hyper's handling of two more body pieces (a 431-byte discover answer
    /// took 150 more instructions in pieces; a 12 KB list page, thousands
    /// fewer).
    pub(crate) fn result(id: &RequestId, result: Bytes) -> McpBody {
        const SHARED_FROM: usize = 2048;
        if result.len() < SHARED_FROM {
            return McpBody::full(result_frame(id, &result));
        }
        McpBody(Kind::Pieces(Pieces {
            head: Bytes::from(result_head(id, 0)),
            result,
            ended: false,
        }))
    }
}

impl Body for McpBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        match &mut self.get_mut().0 {
            Kind::Full(bytes) => Poll::Ready(bytes.take().map(|b| Ok(Frame::data(b)))),
            Kind::Stream(events, _) => events.poll_recv(cx).map(|e| e.map(|b| Ok(Frame::data(b)))),
            Kind::Pieces(pieces) => Poll::Ready(pieces.next().map(|b| Ok(Frame::data(b)))),
        }
    }

    fn is_end_stream(&self) -> bool {
        match &self.0 {
            Kind::Full(bytes) => bytes.is_none(),
            Kind::Stream(..) => false,
            Kind::Pieces(pieces) => pieces.remaining() == 0,
        }
    }

    fn size_hint(&self) -> SizeHint {
        match &self.0 {
            Kind::Full(Some(bytes)) => SizeHint::with_exact(bytes.len() as u64),
            Kind::Full(None) => SizeHint::with_exact(0),
            Kind::Stream(..) => SizeHint::default(),
            Kind::Pieces(pieces) => SizeHint::with_exact(pieces.remaining()),
        }
    }
}

#[cfg(test)]
mod tests {
    use http_body_util::BodyExt as _;

    use super::*;

    #[tokio::test]
    async fn a_result_small_or_in_pieces_is_the_frame_with_its_exact_length() {
        let id = RequestId::String("a\"b".into());
        let small = Bytes::from_static(br#"{"resultType":"complete"}"#);
        let large = Bytes::from(format!(r#"{{"text":"{}"}}"#, "x".repeat(3000)));
        for (result, in_pieces) in [(small, false), (large, true)] {
            let body = McpBody::result(&id, result.clone());
            assert_eq!(matches!(body.0, Kind::Pieces(_)), in_pieces);
            let frame = result_frame(&id, &result);
            assert_eq!(body.size_hint().exact(), Some(frame.len() as u64));
            assert!(!body.is_end_stream());
            let sent = body.collect().await.unwrap().to_bytes();
            assert_eq!(sent, frame);
            assert!(sent.starts_with(br#"{"jsonrpc":"2.0","id":"a\"b","result":{""#));
            assert!(sent.ends_with(b"}}"));
        }
    }
}

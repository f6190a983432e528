//! Answering a session's request (JSON, or SSE once anything must reach
//! the client first), and the legacy transport's responses.

use std::sync::Arc;

use bytes::Bytes;
use http::header::{CACHE_CONTROL, CONTENT_TYPE};
use http::{HeaderValue, Response, StatusCode};
use serde_json::Value;
use tokio::sync::OwnedSemaphorePermit;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::{HttpResponse, Local, Running, locked};
use crate::McpBody;
use crate::dispatch::Reply;
use crate::legacy::adapter::Call;
use crate::legacy::bridge::{ANSWER_TIMEOUT, Peer};
use crate::legacy::session_id::SessionToken;
use crate::protocol::{ErrorObject, RequestId};
use crate::transport::http::HttpRequest;
use crate::transport::http::pipeline::Shared;

/// Runs a session's request; answers with JSON, or switches to SSE as soon
/// as anything must reach the client first (a notification, or a request
/// of the bridge).
#[allow(clippy::too_many_arguments)]
pub(super) async fn answer(
    shared: Arc<Shared>,
    token: SessionToken,
    local: Arc<Local>,
    id: RequestId,
    method: String,
    params: Option<Value>,
    sse: bool,
    http: Arc<HttpRequest>,
    permit: OwnedSemaphorePermit,
) -> HttpResponse {
    let (outbox, mut frames) = mpsc::unbounded_channel();
    let deadline = shared.options.request_timeout;
    let timed_out = {
        let id = id.clone();
        move || {
            Reply::error(
                Some(&id),
                &ErrorObject::new(
                    crate::protocol::error_code::REQUEST_TIMEOUT,
                    format!(
                        "The request did not finish within {} ms",
                        deadline.as_millis()
                    ),
                ),
            )
        }
    };
    let cancelled = CancellationToken::new();
    let key = (token.nonce.clone(), id.clone());
    locked(&shared.legacy.running).insert(key.clone(), cancelled.clone());
    let owner = shared.clone();
    let mut running = Box::pin(async move {
        let legacy = &owner.legacy;
        let _running = Running {
            table: &legacy.running,
            key,
        };
        let call = Call {
            dispatcher: &owner.server.dispatcher,
            offer: &legacy.offer,
            negotiated: &token.negotiated,
            live: &local.live,
            peer: Peer {
                outbox,
                pending: &legacy.pending,
                session: &token.nonce,
                can_ask: sse,
                timeout: ANSWER_TIMEOUT.min(deadline),
                stop: owner.shutdown.clone(),
            },
            shutdown: &owner.shutdown,
            http: Some(http),
        };
        call.answer(&id, &method, params).await
    });
    let deadline = tokio::time::Instant::now() + deadline;
    let first = loop {
        tokio::select! {
            biased;
            finished = &mut running => {
                let queued: Vec<Bytes> = std::iter::from_fn(|| frames.try_recv().ok()).collect();
                if sse && !queued.is_empty() {
                    let mut events = Vec::new();
                    for frame in queued.iter().chain([&finished.frame]) {
                        events.extend_from_slice(&event(frame));
                    }
                    return sse_response(McpBody::full(events));
                }
                return json_reply(&finished);
            }
            frame = frames.recv() => match frame {
                Some(frame) if sse => break frame,
                // Without SSE, notifications have nowhere to go.
                _ => {}
            },
            () = tokio::time::sleep_until(deadline) => return json_reply(&timed_out()),
            // Cancelled before anything was sent: nothing more will be.
            () = cancelled.cancelled() => return status(StatusCode::ACCEPTED),
        }
    };
    let (events, stream) = mpsc::channel(64);
    tokio::task::spawn_local(async move {
        let _permit = permit;
        let _ = events.send(event(&first)).await;
        loop {
            tokio::select! {
                finished = &mut running => {
                    while let Ok(frame) = frames.try_recv() {
                        let _ = events.send(event(&frame)).await;
                    }
                    let _ = events.send(event(&finished.frame)).await;
                    break;
                }
                Some(frame) = frames.recv() => {
                    if events.send(event(&frame)).await.is_err() {
                        break;
                    }
                }
                // The client closed the stream, or cancelled the request:
                // dropping `running` stops the handler.
                () = events.closed() => break,
                () = cancelled.cancelled() => break,
                () = tokio::time::sleep_until(deadline) => {
                    let _ = events.send(event(&timed_out().frame)).await;
                    break;
                }
            }
        }
    });
    crate::transport::http::pipeline::sse(stream)
}

/// One SSE event carrying a JSON-RPC message.
pub(super) fn event(message: &[u8]) -> Bytes {
    let mut out = Vec::with_capacity(message.len() + 8);
    out.extend_from_slice(b"data: ");
    out.extend_from_slice(message);
    out.extend_from_slice(b"\n\n");
    Bytes::from(out)
}

pub(super) fn sse_response(body: McpBody) -> HttpResponse {
    let mut response = Response::new(body);
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}

/// A JSON-RPC answer: HTTP 200 whatever it says, as legacy clients expect
/// (they read JSON-RPC errors from the body, not from the status).
pub(super) fn json_reply(reply: &Reply) -> HttpResponse {
    let mut response = Response::new(McpBody::full(reply.frame.clone()));
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}

pub(super) fn json_error(
    code: StatusCode,
    id: Option<&RequestId>,
    error: &ErrorObject,
) -> HttpResponse {
    let mut response = json_reply(&Reply::error(id, error));
    *response.status_mut() = code;
    response
}

pub(super) fn session_not_found() -> HttpResponse {
    json_error(
        StatusCode::NOT_FOUND,
        None,
        &ErrorObject::new(
            -32001,
            "Session not found: it expired or was ended; initialize a new one",
        ),
    )
}

pub(super) fn missing_session() -> HttpResponse {
    json_error(
        StatusCode::BAD_REQUEST,
        None,
        &ErrorObject::invalid_request(
            "Bad Request: no Mcp-Session-Id; send initialize first and then the session id it returns",
        ),
    )
}

/// 429 with `Retry-After`: the one transport status a session request gets
/// for a JSON-RPC error, since the client must back off, not read a result.
pub(super) fn rate_limited(id: &RequestId, wait: std::time::Duration) -> HttpResponse {
    let seconds = wait.as_secs() + u64::from(wait.subsec_nanos() > 0);
    let error = ErrorObject::new(
        crate::protocol::error_code::RATE_LIMITED,
        format!("Rate limit exceeded; retry in {seconds} s"),
    );
    let mut response = json_error(StatusCode::TOO_MANY_REQUESTS, Some(id), &error);
    response
        .headers_mut()
        .insert(http::header::RETRY_AFTER, HeaderValue::from(seconds.max(1)));
    response
}

pub(super) fn status(code: StatusCode) -> HttpResponse {
    let mut response = Response::new(McpBody::empty());
    *response.status_mut() = code;
    response
}

pub(super) fn plain(code: StatusCode, text: &'static str) -> HttpResponse {
    let mut response = Response::new(McpBody::full(Bytes::from_static(text.as_bytes())));
    *response.status_mut() = code;
    response
}

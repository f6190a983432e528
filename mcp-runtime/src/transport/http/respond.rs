//! The HTTP responses of the MCP endpoint, for both eras: JSON answers and
//! their status, SSE streams with their headers and events, and the
//! transport's own refusals (403, 413, 429, 503, timeouts).

use std::time::Duration;

use bytes::Bytes;
use http::header::{CACHE_CONTROL, CONTENT_TYPE, RETRY_AFTER};
use http::{HeaderValue, Response, StatusCode};
use tokio::sync::mpsc;

use super::body::McpBody;
use crate::dispatch::Reply;
use crate::metrics::{Metrics, Refusal};
use crate::protocol::{ErrorObject, RequestId, error_code};

/// Every response the endpoint sends.
pub(crate) type HttpResponse = Response<McpBody>;

/// How a JSON-RPC answer's outcome becomes an HTTP status: as the
/// 2026-07-28 transport lays out ([`Statuses::MODERN`]: errors get 4xx and
/// 5xx), or 200 whatever the outcome, for an era whose clients read errors
/// from the body (the legacy adapter's own setting).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Statuses {
    /// Every answer is a 200; its refusals are not counted as HTTP ones.
    pub(crate) errors_as_200: bool,
}

impl Statuses {
    /// The 2026-07-28 transport's statuses.
    pub(crate) const MODERN: Statuses = Statuses {
        errors_as_200: false,
    };

    /// The status of an answer with error `code` (`None`: a result).
    pub(crate) fn of(self, code: Option<i32>) -> StatusCode {
        match code {
            Some(code) if !self.errors_as_200 => modern_status(code),
            _ => StatusCode::OK,
        }
    }
}

/// The status of an error answer.
fn modern_status(code: i32) -> StatusCode {
    match code {
        error_code::METHOD_NOT_FOUND => StatusCode::NOT_FOUND,
        error_code::INTERNAL_ERROR => StatusCode::INTERNAL_SERVER_ERROR,
        error_code::RATE_LIMITED => StatusCode::TOO_MANY_REQUESTS,
        error_code::SERVER_BUSY => StatusCode::SERVICE_UNAVAILABLE,
        error_code::REQUEST_TIMEOUT => StatusCode::GATEWAY_TIMEOUT,
        error_code::FORBIDDEN => StatusCode::FORBIDDEN,
        _ => StatusCode::BAD_REQUEST,
    }
}

/// Counts into the server's `metrics` the refusal that an answer with
/// error `code` is, if it is one and `statuses` make it an HTTP refusal
/// (the modern era's 429, 503 and 504; a legacy answer is a 200). Called
/// where a JSON-RPC answer becomes a response, beside [`reply`], by code
/// that holds the endpoint's counters: the responses themselves stay free
/// of them.
pub(crate) fn count(metrics: &Metrics, statuses: Statuses, code: Option<i32>) {
    if statuses.errors_as_200 {
        return;
    }
    let refusal = match code {
        Some(error_code::RATE_LIMITED) => Refusal::RateLimited,
        Some(error_code::SERVER_BUSY) => Refusal::Busy,
        Some(error_code::REQUEST_TIMEOUT) => Refusal::Timeout,
        _ => return,
    };
    metrics.refused(refusal);
}

/// [`reply`], counting the refusal it is into `metrics`.
pub(crate) fn counted(answer: Reply, statuses: Statuses, metrics: &Metrics) -> HttpResponse {
    count(metrics, statuses, answer.error_code);
    reply(answer, statuses)
}

/// A JSON-RPC answer as one JSON body.
pub(crate) fn reply(reply: Reply, statuses: Statuses) -> HttpResponse {
    let status = statuses.of(reply.error_code);
    let mut response = json(status, McpBody::full(reply.frame));
    // Busy (a shared store that is reconnecting, say): worth a retry soon.
    if status == StatusCode::SERVICE_UNAVAILABLE {
        response
            .headers_mut()
            .insert(RETRY_AFTER, HeaderValue::from_static("1"));
    }
    response
}

/// A JSON body with `status`.
pub(crate) fn json(status: StatusCode, body: McpBody) -> HttpResponse {
    let mut response = Response::new(body);
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}

/// A JSON-RPC error with an HTTP status of its own.
pub(crate) fn error(
    status: StatusCode,
    id: Option<&RequestId>,
    error: &ErrorObject,
) -> HttpResponse {
    let mut response = reply(Reply::error(id, error), Statuses::MODERN);
    *response.status_mut() = status;
    response
}

/// A short text for a refusal that is not JSON-RPC's business.
pub(crate) fn plain(status: StatusCode, text: &'static str) -> HttpResponse {
    let mut response = Response::new(McpBody::full(Bytes::from_static(text.as_bytes())));
    *response.status_mut() = status;
    response.headers_mut().insert(
        CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}

/// No body.
pub(crate) fn empty(status: StatusCode) -> HttpResponse {
    let mut response = Response::new(McpBody::empty());
    *response.status_mut() = status;
    response
}

/// 403 with a JSON-RPC error that has no id, as the spec allows.
pub(crate) fn forbidden(what: &str) -> HttpResponse {
    let message = format!("{what} (DNS rebinding protection)");
    error(
        StatusCode::FORBIDDEN,
        None,
        &ErrorObject::invalid_request(message),
    )
}

/// 413: the body is larger than the limit.
pub(crate) fn too_large(limit: usize, metrics: &Metrics) -> HttpResponse {
    metrics.refused(Refusal::TooLarge);
    let message = format!("the body exceeds the {limit}-byte limit");
    error(
        StatusCode::PAYLOAD_TOO_LARGE,
        None,
        &ErrorObject::invalid_request(message),
    )
}

/// 503 with `Retry-After`: too much is running.
pub(crate) fn busy(metrics: &Metrics) -> HttpResponse {
    metrics.refused(Refusal::Busy);
    let error = ErrorObject::new(
        error_code::SERVER_BUSY,
        "Too many requests in flight; retry shortly",
    );
    // `reply` gives a 503 its `Retry-After`.
    reply(Reply::error(None, &error), Statuses::MODERN)
}

/// 429 with `Retry-After`: the client has as many requests in progress as
/// one client may (the body, if any, was not read, so the id is unknown).
pub(crate) fn client_busy(metrics: &Metrics) -> HttpResponse {
    metrics.refused(Refusal::RateLimited);
    let error = ErrorObject::new(
        error_code::RATE_LIMITED,
        "Too many requests from this client in progress; retry when one has finished",
    );
    let mut response = reply(Reply::error(None, &error), Statuses::MODERN);
    response
        .headers_mut()
        .insert(RETRY_AFTER, HeaderValue::from_static("1"));
    response
}

/// What a connection past its client's cap is sent before it is closed,
/// whatever it asked: it is written before anything is read.
pub(crate) const TOO_MANY_CONNECTIONS: &[u8] = b"HTTP/1.1 429 Too Many Requests\r\n\
content-type: text/plain; charset=utf-8\r\n\
retry-after: 1\r\n\
connection: close\r\n\
content-length: 45\r\n\
\r\n\
too many connections open from this address\r\n";

/// 429 with `Retry-After`, in both eras: the client must back off, not
/// read a result.
pub(crate) fn rate_limited(id: &RequestId, wait: Duration, metrics: &Metrics) -> HttpResponse {
    metrics.refused(Refusal::RateLimited);
    let seconds = wait.as_secs() + u64::from(wait.subsec_nanos() > 0);
    let error = ErrorObject::new(
        error_code::RATE_LIMITED,
        format!("Rate limit exceeded; retry in {seconds} s"),
    );
    let mut response = reply(Reply::error(Some(id), &error), Statuses::MODERN);
    response
        .headers_mut()
        .insert(RETRY_AFTER, HeaderValue::from(seconds.max(1)));
    response
}

/// A stream of events, as the task that runs the request sends them.
pub(crate) fn sse(events: mpsc::Receiver<Bytes>) -> HttpResponse {
    sse_headers(Response::new(McpBody::stream(events)))
}

/// A finished stream: `events` already framed, then the answer.
pub(crate) fn sse_complete(events: &[Bytes], last: &Reply, statuses: Statuses) -> HttpResponse {
    let mut body = Vec::new();
    for message in events.iter().chain([&last.frame]) {
        body.extend_from_slice(&event(message));
    }
    let mut response = sse_headers(Response::new(McpBody::full(body)));
    *response.status_mut() = statuses.of(last.error_code);
    response
}

fn sse_headers(mut response: HttpResponse) -> HttpResponse {
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    // Proxies such as nginx would otherwise hold events back.
    headers.insert("x-accel-buffering", HeaderValue::from_static("no"));
    response
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

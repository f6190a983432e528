//! One POST to the MCP endpoint, from bytes on the wire to a response: every
//! HTTP-level limit and check is applied here, in order, before the
//! dispatcher sees the request.
//!
//! Order: protected resource metadata (when authorization is on), path
//! (404), `Host`/`Origin` (403), token in the query (400), method (405),
//! `Content-Type` (415), `Accept` (406), concurrency cap (503), body size
//! and read time (413/408), JSON-RPC envelope (400), authorization: token
//! (401/400/503) and scopes (403), `_meta` (400), mirrored headers
//! (400/-32020), rate limit on `tools/call` (429), then the dispatcher with
//! a time limit. Authorization comes after the envelope because what a
//! request needs depends on its method and on the tool, prompt or resource
//! it names; it comes before everything else about the request, so an
//! anonymous caller learns nothing more than that a token is needed.
//!
//! With the `legacy` feature, two hooks hand legacy-era traffic to
//! `crate::legacy::http`: GET and DELETE that name a session (before the
//! 405, after authorization), and POSTs that are legacy by the era rules
//! (once the body is read, before the envelope is parsed; the adapter
//! authorizes each message with [`authorize`]).

use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use bytestring::ByteString;
use futures_util::FutureExt as _;
use http::header::{ALLOW, AUTHORIZATION, CACHE_CONTROL, CONTENT_TYPE, RETRY_AFTER};
use http::{HeaderValue, Method as HttpMethod, Request, Response, StatusCode};
use http_body::Body;
use http_body_util::{BodyExt as _, Collected, Limited};
use tokio::sync::{OwnedSemaphorePermit, Semaphore, mpsc};

use super::HttpOptions;
use super::accept::{self, Accepts};
use super::body::{self, McpBody};
use super::headers;
use super::request::{self, HideUnpermitted, HttpRequest};
use crate::auth::gate::{Denied, Gate};
use crate::context::{NoteQueue, Outbox};
use crate::dispatch::envelope::{self, Incoming};
use crate::dispatch::{Dispatcher, Immediate, Prepared, Reply};
use crate::protocol::method::{Method, MethodName};
use crate::protocol::{ErrorObject, RequestId, error_code};
use crate::security::RateLimiter;
use crate::server::Server;

/// What every connection of one HTTP server shares.
pub(crate) struct Shared {
    pub(crate) server: Server,
    pub(crate) options: HttpOptions,
    pub(crate) in_flight: Arc<Semaphore>,
    pub(crate) subscriptions: Arc<Semaphore>,
    pub(crate) limiter: Option<Arc<dyn RateLimiter>>,
    pub(crate) shutdown: tokio_util::sync::CancellationToken,
    /// Authorization, when configured.
    gate: Option<Arc<Gate>>,
    /// Whether to check the path (not when mounted in someone's router).
    check_path: bool,
    /// Legacy era (feature `legacy`): sessions of initialize-handshake
    /// clients.
    #[cfg(feature = "legacy")]
    pub(crate) legacy: crate::legacy::http::LegacyHttp,
}

impl Shared {
    /// Fails when the authorization configuration is unusable.
    pub(crate) fn new(server: Server, options: HttpOptions) -> std::io::Result<Shared> {
        let gate = match &options.authorization {
            Some(authorization) => Some(Arc::new(
                authorization
                    .build(server.dispatcher.declared_scopes())
                    .map_err(|problem| {
                        std::io::Error::new(std::io::ErrorKind::InvalidInput, problem)
                    })?,
            )),
            None => None,
        };
        Ok(Shared {
            gate,
            in_flight: Arc::new(Semaphore::new(options.max_in_flight)),
            subscriptions: Arc::new(Semaphore::new(options.max_subscriptions)),
            limiter: options.rate_limiter.clone(),
            options,
            shutdown: tokio_util::sync::CancellationToken::new(),
            check_path: true,
            #[cfg(feature = "legacy")]
            legacy: crate::legacy::http::LegacyHttp::new(&server),
            server,
        })
    }

    /// For a service mounted in a router, which routes by path itself.
    pub(crate) fn embedded(server: Server, options: HttpOptions) -> std::io::Result<Shared> {
        Ok(Shared {
            check_path: false,
            ..Shared::new(server, options)?
        })
    }

    fn dispatcher(&self) -> &Arc<Dispatcher> {
        &self.server.dispatcher
    }
}

type HttpResponse = Response<McpBody>;
pub(crate) type BoxError = Box<dyn std::error::Error + Send + Sync>;

pub(crate) async fn handle<B>(
    shared: Arc<Shared>,
    request: Request<B>,
    peer: Option<SocketAddr>,
) -> HttpResponse
where
    B: Body<Data = Bytes>,
    B::Error: Into<BoxError>,
{
    let (mut parts, request_body) = request.into_parts();
    if let Some(gate) = &shared.gate
        && let Some(response) =
            gate.metadata_response(&parts.method, parts.uri.path(), McpBody::full)
    {
        return response;
    }
    if shared.check_path && parts.uri.path() != shared.options.path {
        return plain(StatusCode::NOT_FOUND, "not found");
    }
    let policy = &shared.options.origins;
    // Everything read from the headers before authorization (which edits
    // them), in one pass.
    let seen = headers::Endpoint::scan(&parts.headers);
    let host = seen
        .host()
        .or_else(|| parts.uri.authority().map(|a| a.as_str()));
    if !policy.host_allowed(host) {
        tracing::warn!(
            ?host,
            ?peer,
            "refused a request for a host that is not allowed"
        );
        return forbidden("Host not allowed");
    }
    if !policy.origin_allowed(seen.origin()) {
        tracing::warn!(origin = ?seen.origin(), ?peer, "refused a request from an origin that is not allowed");
        return forbidden("Origin not allowed");
    }
    let is_json = accept::is_json(seen.content_type());
    let accepts = accept::accepts(seen.accept());
    let declared = seen.content_length().and_then(|l| l.parse::<u64>().ok());
    #[cfg(feature = "legacy")]
    let era = crate::legacy::http::EraMarks::read(seen.protocol_version(), seen.session_id());
    if let Some(gate) = &shared.gate
        && let Err(refusal) = gate.check_query(&parts.uri)
    {
        return gate.refuse(&refusal, &[], McpBody::full);
    }
    // Legacy era: a session's GET stream and DELETE, for an authorized
    // caller.
    #[cfg(feature = "legacy")]
    if parts.method != HttpMethod::POST && crate::legacy::http::names_session(&parts) {
        if let Err(response) = authorize(&shared, &mut parts, None).await {
            return response;
        }
        if let Some(response) = crate::legacy::http::other_method(&shared, &parts) {
            return response;
        }
    }
    if parts.method != HttpMethod::POST {
        let mut response = plain(
            StatusCode::METHOD_NOT_ALLOWED,
            "the MCP endpoint accepts POST only",
        );
        response
            .headers_mut()
            .insert(ALLOW, HeaderValue::from_static("POST"));
        return response;
    }
    if !is_json {
        return plain(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "send JSON-RPC as Content-Type: application/json",
        );
    }
    if !accepts.json && !accepts.sse {
        return plain(
            StatusCode::NOT_ACCEPTABLE,
            "accept application/json or text/event-stream",
        );
    }
    let Ok(permit) = shared.in_flight.clone().try_acquire_owned() else {
        return busy();
    };
    let limit = shared.options.max_body_bytes;
    if declared.is_some_and(|length| length > limit as u64) {
        return too_large(limit);
    }
    // Most bodies arrive with their head: only a body still on its way
    // needs a clock reading and a timer (boxed, like every rare path
    // below: this future is moved into hyper's task for every request, so
    // what it holds across its awaits is copied each time).
    let bytes = match read_body(request_body, limit, shared.options.body_timeout).await {
        Err(_) => {
            return plain(
                StatusCode::REQUEST_TIMEOUT,
                "the request body took too long to arrive",
            );
        }
        Ok(Err(error)) if error.is::<http_body_util::LengthLimitError>() => {
            return too_large(limit);
        }
        Ok(Err(error)) => {
            tracing::debug!(%error, ?peer, "request body failed");
            return plain(
                StatusCode::BAD_REQUEST,
                "the request body could not be read",
            );
        }
        Ok(Ok(collected)) => collected.to_bytes(),
    };
    // Kept as received (no copy): the request's text shares the body's
    // buffer.
    let Ok(text) = ByteString::try_from(bytes) else {
        return reply(&Reply::error(
            None,
            &ErrorObject::parse_error("the body is not valid UTF-8"),
        ));
    };
    // Legacy era: sessions, `initialize`, and the client's answers.
    #[cfg(feature = "legacy")]
    if crate::legacy::http::claims(era, &text) {
        // Boxed: kept out of the state of every modern request's future.
        return Box::pin(crate::legacy::http::post(
            &shared,
            parts,
            text,
            accepts.sse,
            permit,
            peer,
        ))
        .await;
    }
    let request = match envelope::parse(text) {
        Err(rejection) => return reply(&Reply::from(rejection)),
        // Nothing to cancel by notification on HTTP: closing the stream is
        // how a client cancels.
        Ok(Incoming::Notification(_)) => {
            if let Err(response) = authorize(&shared, &mut parts, None).await {
                return response;
            }
            return empty(StatusCode::ACCEPTED);
        }
        Ok(Incoming::Request(request)) => request,
    };
    if let Err(response) = authorize(&shared, &mut parts, Some(&request)).await {
        return response;
    }
    let prepared = match shared.dispatcher().prepare(request) {
        Ok(prepared) => prepared,
        Err(rejected) => return reply(&rejected),
    };
    let id = prepared.request.id.clone();
    let dispatcher = shared.dispatcher().clone();
    if let Err(error) = headers::check(&prepared, &parts.headers, |name| {
        dispatcher.tool_header_params(name)
    }) {
        return reply(&Reply::error(Some(&id), &error));
    }
    let list_filter = request::list_filter(&parts.extensions);
    match dispatcher.immediate(&prepared, list_filter) {
        Some(Immediate::Result(result)) => {
            return json(StatusCode::OK, McpBody::result(&id, result));
        }
        Some(Immediate::Error(answer)) => return reply(&answer),
        None => {}
    }
    let limits = match &prepared.request.method {
        MethodName::Known(Method::SubscriptionsListen) => {
            if !accepts.sse {
                return plain(
                    StatusCode::NOT_ACCEPTABLE,
                    "subscriptions/listen answers with a stream: accept text/event-stream",
                );
            }
            // A subscription is counted against its own cap, not against
            // requests in flight, and has no time limit.
            drop(permit);
            let Ok(permit) = shared.subscriptions.clone().try_acquire_owned() else {
                return busy();
            };
            Limits {
                permit,
                deadline: None,
                keep_alive: Some(shared.options.keep_alive),
            }
        }
        method => {
            let limiter = shared
                .limiter
                .as_ref()
                .filter(|_| *method == MethodName::Known(Method::ToolsCall));
            if let Some((limiter, peer)) = limiter.zip(peer) {
                let key = IpText::new(peer.ip());
                if let Err(wait) = limiter.check(key.as_str()) {
                    return rate_limited(&id, wait);
                }
            }
            Limits {
                permit,
                deadline: Some(shared.options.request_timeout),
                keep_alive: None,
            }
        }
    };
    let mut prepared = prepared;
    prepared.http = Some(Arc::new(HttpRequest::new(parts, peer)));
    match run(&shared, prepared, accepts, limits) {
        Running::Finished(response) => response,
        Running::Streaming(stream) => stream.await,
    }
}

/// The body, up to `limit` bytes; `Err` when it took longer than `timeout`.
async fn read_body<B>(
    body: B,
    limit: usize,
    timeout: Duration,
) -> Result<Result<Collected<Bytes>, BoxError>, tokio::time::error::Elapsed>
where
    B: Body<Data = Bytes>,
    B::Error: Into<BoxError>,
{
    let mut collect = std::pin::pin!(Limited::new(body, limit).collect());
    match collect.as_mut().now_or_never() {
        Some(collected) => Ok(collected),
        None => Box::pin(tokio::time::timeout(timeout, collect)).await,
    }
}

/// The answer to a request authorization did not admit.
/// Authorization, when configured: admits the caller of `request` (or of
/// a message that names nothing, such as a notification), or answers with
/// the challenge. An admitted caller's principal goes into the request's
/// extensions and the token leaves its headers: handlers get the
/// principal, never the token, so they cannot pass it on.
pub(crate) async fn authorize(
    shared: &Shared,
    parts: &mut http::request::Parts,
    request: Option<&envelope::Request>,
) -> Result<(), HttpResponse> {
    let Some(gate) = &shared.gate else {
        return Ok(());
    };
    let method = match request.map(|r| &r.method) {
        Some(MethodName::Known(method)) => Some(*method),
        _ => None,
    };
    let required = request.map_or_else(Vec::new, |r| shared.dispatcher().required_scopes(r));
    match gate.admit(&parts.headers, method, &required).await {
        Ok(Some(principal)) => {
            parts.headers.remove(AUTHORIZATION);
            parts.extensions.insert(principal);
            if gate.hide_unpermitted() {
                parts.extensions.insert(HideUnpermitted);
            }
            Ok(())
        }
        Ok(None) => Ok(()),
        Err(denied) => Err(deny(gate, &denied, &required)),
    }
}

fn deny(gate: &Gate, denied: &Denied, required: &[&str]) -> HttpResponse {
    match denied {
        Denied::Refused(refusal) => gate.refuse(refusal, required, McpBody::full),
        Denied::Unavailable => {
            let mut response = plain(
                StatusCode::SERVICE_UNAVAILABLE,
                "the access token cannot be verified now; retry shortly",
            );
            response
                .headers_mut()
                .insert(RETRY_AFTER, HeaderValue::from_static("5"));
            response
        }
    }
}

/// An IP address as text, formatted on the stack: the rate limiter's key
/// for every tool call, without an allocation.
struct IpText {
    bytes: [u8; 46],
    len: usize,
}

impl IpText {
    fn new(ip: std::net::IpAddr) -> IpText {
        let mut text = IpText {
            bytes: [0; 46],
            len: 0,
        };
        // The longest IPv6 text is 45 bytes, so this cannot fail.
        let _ = std::fmt::Write::write_fmt(&mut text, format_args!("{ip}"));
        text
    }

    fn as_str(&self) -> &str {
        std::str::from_utf8(&self.bytes[..self.len]).unwrap_or_default()
    }
}

impl std::fmt::Write for IpText {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        let end = self.len + s.len();
        self.bytes
            .get_mut(self.len..end)
            .ok_or(std::fmt::Error)?
            .copy_from_slice(s.as_bytes());
        self.len = end;
        Ok(())
    }
}

/// What bounds one request while it runs.
struct Limits {
    /// Held until the request (or its stream) ends.
    permit: OwnedSemaphorePermit,
    deadline: Option<Duration>,
    /// Interval of SSE keep-alive comments on quiet streams.
    keep_alive: Option<Duration>,
}

/// A request that [`run`] started.
enum Running<S> {
    /// It finished on its first poll, as most do.
    Finished(HttpResponse),
    /// It is still running: awaiting this answers it (boxed, so that the
    /// pipeline's future does not carry its state).
    Streaming(Pin<Box<S>>),
}

/// Runs the request; answers with JSON, or switches to SSE as soon as the
/// handler sends a notification (when the client accepts SSE).
fn run(
    shared: &Arc<Shared>,
    prepared: Prepared,
    accepts: Accepts,
    limits: Limits,
) -> Running<impl Future<Output = HttpResponse> + 'static> {
    let id = prepared.request.id.clone();
    let notifications = Arc::new(NoteQueue::default());
    let outbox = Outbox::Queue(notifications.clone());
    let mut running = Box::pin(
        shared
            .dispatcher()
            .run(prepared, outbox, shared.shutdown.clone()),
    );
    // Most handlers finish on their first poll: they are answered without
    // reading the clock for a deadline.
    if let Some(finished) = running.as_mut().now_or_never() {
        return Running::Finished(finished_at_once(&notifications, accepts, &finished));
    }
    Running::Streaming(Box::pin(async move {
        let Limits {
            permit,
            deadline,
            keep_alive,
        } = limits;
        let timeout = deadline.unwrap_or(Duration::MAX);
        let deadline = deadline.map(|limit| tokio::time::Instant::now() + limit);
        let first = tokio::select! {
            // The result first: notifications queued with it go out in the
            // same response.
            biased;
            finished = &mut running => return finished_at_once(&notifications, accepts, &finished),
            note = notifications.next(), if accepts.sse => note,
            () = sleep_until(deadline) => return reply(&timed_out(&id, timeout)),
        };
        let mut deadline = Box::pin(sleep_until(deadline));
        let (events, stream) = mpsc::channel(64);
        tokio::task::spawn_local(async move {
            let _permit = permit;
            let mut keep_alive = keep_alive.map(|every| {
                let mut ticks =
                    tokio::time::interval_at(tokio::time::Instant::now() + every, every);
                ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
                ticks
            });
            let _ = events.send(body::event(&first)).await;
            loop {
                tokio::select! {
                    finished = &mut running => {
                        for note in notifications.drain() {
                            let _ = events.send(body::event(&note)).await;
                        }
                        let _ = events.send(body::event(&finished.frame)).await;
                        break;
                    }
                    note = notifications.next() => {
                        if events.send(body::event(&note)).await.is_err() {
                            break;
                        }
                    }
                    // The client closed the stream: that cancels the request,
                    // and dropping `running` cancels the handler.
                    () = events.closed() => break,
                    () = &mut deadline => {
                        let _ = events.send(body::event(&timed_out(&id, timeout).frame)).await;
                        break;
                    }
                    _ = tick(&mut keep_alive) => {
                        if events.send(body::KEEP_ALIVE).await.is_err() {
                            break;
                        }
                    }
                }
            }
        });
        sse(stream)
    }))
}

/// The response to a request that finished before any notification was
/// streamed. Notifications sent just before the result are already queued:
/// they go out first, on a stream, if one is allowed.
fn finished_at_once(notifications: &NoteQueue, accepts: Accepts, finished: &Reply) -> HttpResponse {
    let queued = notifications.drain();
    if accepts.sse && !queued.is_empty() {
        return sse_complete(&queued, finished);
    }
    reply(finished)
}

/// A finished SSE response: queued notifications, then the result.
fn sse_complete(notes: &[Bytes], finished: &Reply) -> HttpResponse {
    let mut events = Vec::new();
    for note in notes.iter().chain([&finished.frame]) {
        events.extend_from_slice(&body::event(note));
    }
    let mut response = sse_headers(Response::new(McpBody::full(events)));
    *response.status_mut() = status_for(finished.error_code);
    response
}

async fn sleep_until(deadline: Option<tokio::time::Instant>) {
    match deadline {
        Some(deadline) => tokio::time::sleep_until(deadline).await,
        None => std::future::pending().await,
    }
}

async fn tick(ticks: &mut Option<tokio::time::Interval>) {
    match ticks {
        Some(ticks) => {
            ticks.tick().await;
        }
        None => std::future::pending().await,
    }
}

pub(crate) fn sse(stream: mpsc::Receiver<Bytes>) -> HttpResponse {
    sse_headers(Response::new(McpBody::Stream(stream)))
}

fn sse_headers(mut response: HttpResponse) -> HttpResponse {
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    headers.insert("x-accel-buffering", HeaderValue::from_static("no"));
    response
}

/// The HTTP status for a JSON-RPC answer, as the transport spec lays out.
fn status_for(code: Option<i32>) -> StatusCode {
    match code {
        None => StatusCode::OK,
        Some(error_code::METHOD_NOT_FOUND) => StatusCode::NOT_FOUND,
        Some(error_code::INTERNAL_ERROR) => StatusCode::INTERNAL_SERVER_ERROR,
        Some(error_code::RATE_LIMITED) => StatusCode::TOO_MANY_REQUESTS,
        Some(error_code::SERVER_BUSY) => StatusCode::SERVICE_UNAVAILABLE,
        Some(error_code::REQUEST_TIMEOUT) => StatusCode::GATEWAY_TIMEOUT,
        Some(_) => StatusCode::BAD_REQUEST,
    }
}

pub(crate) fn reply(reply: &Reply) -> HttpResponse {
    json(
        status_for(reply.error_code),
        McpBody::full(reply.frame.clone()),
    )
}

fn json(status: StatusCode, body: McpBody) -> HttpResponse {
    let mut response = Response::new(body);
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}

fn plain(status: StatusCode, text: &'static str) -> HttpResponse {
    let mut response = Response::new(McpBody::full(Bytes::from_static(text.as_bytes())));
    *response.status_mut() = status;
    response.headers_mut().insert(
        CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}

fn empty(status: StatusCode) -> HttpResponse {
    let mut response = Response::new(McpBody::empty());
    *response.status_mut() = status;
    response
}

/// 403 with a JSON-RPC error that has no id, as the spec allows.
fn forbidden(what: &str) -> HttpResponse {
    let error = ErrorObject::invalid_request(format!("{what} (DNS rebinding protection)"));
    let mut response = reply(&Reply::error(None, &error));
    *response.status_mut() = StatusCode::FORBIDDEN;
    response
}

fn too_large(limit: usize) -> HttpResponse {
    let error = ErrorObject::invalid_request(format!("the body exceeds the {limit}-byte limit"));
    let mut response = reply(&Reply::error(None, &error));
    *response.status_mut() = StatusCode::PAYLOAD_TOO_LARGE;
    response
}

fn busy() -> HttpResponse {
    let error = ErrorObject::new(
        error_code::SERVER_BUSY,
        "Too many requests in flight; retry shortly",
    );
    let mut response = reply(&Reply::error(None, &error));
    response
        .headers_mut()
        .insert(RETRY_AFTER, HeaderValue::from_static("1"));
    response
}

fn rate_limited(id: &RequestId, wait: Duration) -> HttpResponse {
    let seconds = wait.as_secs() + u64::from(wait.subsec_nanos() > 0);
    let error = ErrorObject::new(
        error_code::RATE_LIMITED,
        format!("Rate limit exceeded; retry in {seconds} s"),
    );
    let mut response = reply(&Reply::error(Some(id), &error));
    response
        .headers_mut()
        .insert(RETRY_AFTER, HeaderValue::from(seconds.max(1)));
    response
}

fn timed_out(id: &RequestId, limit: Duration) -> Reply {
    Reply::error(
        Some(id),
        &ErrorObject::new(
            error_code::REQUEST_TIMEOUT,
            format!("The request did not finish within {} ms", limit.as_millis()),
        ),
    )
}

//! One request to the MCP endpoint, from bytes on the wire to a response:
//! every HTTP-level limit and check is applied here, in order, before the
//! dispatcher sees the request.
//!
//! Before it, the caller has counted the request against its client's cap
//! on requests in progress (429). Order: protected resource metadata (when
//! authorization is on), path (404), `Host`/`Origin` (400/403), token in
//! the query (400), method (405, after the hook's say), transfer and
//! content codings (501/415), `Content-Type` (415), `Accept` (406), body
//! size, time and pace (413/408), concurrency cap (503), the hook's say on
//! the body, JSON-RPC envelope (400), authorization: token
//! (401/400/503) and scopes (403), then the dispatcher: `_meta` (400),
//! mirrored headers (400/-32020), what is answered at once, then admission
//! (rate limit on `tools/call`, 429; streams, 406/503) and the handler with
//! a time limit. Authorization comes after the envelope because what a
//! request needs depends on its method and on the tool, prompt or resource
//! it names; it comes before everything else about the request, so an
//! anonymous caller learns nothing more than that a token is needed.

#![expect(
    clippy::result_large_err,
    reason = "an early answer is the response itself, handed to hyper by value: boxing it would add an allocation to every refusal"
)]

use std::convert::Infallible;
use std::future::{Future, poll_fn};
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::Poll;
use std::time::{Duration, Instant};

use super::slot::Slot;
use bytes::{Bytes, BytesMut};
use bytestring::ByteString;
use futures_util::FutureExt as _;
use http::header::{ACCEPT_ENCODING, ALLOW};
use http::request::Parts;
use http::{HeaderValue, Method as HttpMethod, Request, StatusCode};
use http_body::Body;
use tower_service::Service;

use super::BODY_GRACE;
use super::accept::Accepts;
use super::body::McpBody;
use super::cors::CrossOriginBody;
use super::endpoint::{Endpoint, PendingRate};
use super::headers::{self, EndpointHeaders};
use super::hook::{EraHeaders, Post};
use super::queue::NoteQueue;
use super::respond::{self, HttpResponse, Statuses};
use super::stream::{Responding, Streaming, respond};
use crate::context::Outbox;
use crate::diagnostics::{REFUSALS, Shown};
use crate::dispatch::envelope::{self, Incoming};
use crate::dispatch::{Admission, Answer, Dispatched, Prepared, Reply, Target};
use crate::metrics::{Metrics, Refusal};
use crate::protocol::ErrorObject;
use crate::protocol::method::Method;
use crate::security::origin::HostRefusal;

pub(crate) type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// Answers one request: the steps in the module docs, each of which may
/// answer early. A request with an `Origin` (a web page's) goes through
/// CORS (`cors`), which runs these steps inside it.
///
/// A combinator, not an `async fn`: an async wrapper keeps its own copy
/// of the request next to the inner future's, and this future is moved
/// into hyper's task for every request (each byte of it is copied).
pub(crate) fn handle<B>(
    endpoint: Arc<Endpoint>,
    request: Request<B>,
    peer: Option<SocketAddr>,
) -> impl Future<Output = HttpResponse>
where
    B: Body<Data = Bytes> + Unpin + 'static,
    B::Error: Into<BoxError>,
{
    let (parts, body) = request.into_parts();
    serve(endpoint, parts, body, peer, Cors::Apply).map(either_answer)
}

/// The steps for a request CORS has taken in hand.
pub(super) fn serve_same_origin(
    endpoint: Arc<Endpoint>,
    request: Request<CrossOriginBody>,
    peer: Option<SocketAddr>,
) -> impl Future<Output = HttpResponse> {
    let (parts, body) = request.into_parts();
    serve(endpoint, parts, body, peer, Cors::Applied).map(either_answer)
}

/// An early answer and a late one are both the response.
fn either_answer(answer: Result<HttpResponse, HttpResponse>) -> HttpResponse {
    match answer {
        Ok(response) | Err(response) => response,
    }
}

/// Whether a request with an `Origin` still has to go through CORS.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Cors {
    Apply,
    Applied,
}

/// A request with an `Origin`, answered through CORS (boxed: kept out of
/// the state of every same-origin request's future).
fn cross_origin<B>(
    endpoint: Arc<Endpoint>,
    request: Request<B>,
    peer: Option<SocketAddr>,
) -> Pin<Box<dyn Future<Output = HttpResponse>>>
where
    B: Body<Data = Bytes> + Unpin + 'static,
    B::Error: Into<BoxError>,
{
    let request = request.map(CrossOriginBody::new);
    Box::pin(answer(endpoint, request, peer))
}

/// Answers a request that carries an `Origin`: a preflight from an allowed
/// origin at once, anything else through the pipeline (`serve`, called
/// back without CORS) with the layer's headers added.
async fn answer(
    endpoint: Arc<Endpoint>,
    request: Request<CrossOriginBody>,
    peer: Option<SocketAddr>,
) -> HttpResponse {
    if request.method() == HttpMethod::OPTIONS {
        let (parts, body) = request.into_parts();
        if let Err(refusal) = check_preflight(&endpoint, &parts, peer) {
            return refusal;
        }
        return through_layer(endpoint, Request::from_parts(parts, body), peer).await;
    }
    through_layer(endpoint, request, peer).await
}

async fn through_layer(
    endpoint: Arc<Endpoint>,
    request: Request<CrossOriginBody>,
    peer: Option<SocketAddr>,
) -> HttpResponse {
    let mut service = endpoint.cors.around(Pipeline {
        endpoint: endpoint.clone(),
        peer,
    });
    let ready = poll_fn(|cx| service.poll_ready(cx)).await;
    let answered = match ready {
        Ok(()) => service.call(request).await,
        Err(never) => match never {},
    };
    match answered {
        Ok(response) => response,
        Err(never) => match never {},
    }
}

/// The pipeline as the service the layer wraps.
struct Pipeline {
    endpoint: Arc<Endpoint>,
    peer: Option<SocketAddr>,
}

impl Service<Request<CrossOriginBody>> for Pipeline {
    type Response = HttpResponse;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<HttpResponse, Infallible>>>>;

    fn poll_ready(&mut self, _cx: &mut std::task::Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<CrossOriginBody>) -> Self::Future {
        let (endpoint, peer) = (self.endpoint.clone(), self.peer);
        Box::pin(async move { Ok(serve_same_origin(endpoint, request, peer).await) })
    }
}

/// What refuses a CORS preflight: the checks of the request it announces
/// that need no body (path, `Host`, `Origin`).
pub(super) fn check_preflight(
    endpoint: &Endpoint,
    parts: &Parts,
    peer: Option<SocketAddr>,
) -> Result<(), HttpResponse> {
    route(endpoint, parts)?;
    let seen = EndpointHeaders::scan(&parts.headers);
    check_authority(endpoint, &seen, parts, peer)
}

/// The steps; `Err` is an early answer. Everything up to the handler is
/// synchronous for most requests: what may wait (a body still arriving, a
/// shared limiter's verdict, a handler that does not finish at once) is
/// boxed, so that this future stays small.
///
/// An `async` block, not an `async fn`: an `async fn` keeps its arguments
/// twice in its state (as received, and moved into its body), and the
/// request's head is 224 bytes that hyper's task copies with the rest.
#[expect(
    clippy::manual_async_fn,
    reason = "an async fn would hold the request's head twice"
)]
fn serve<B>(
    endpoint: Arc<Endpoint>,
    parts: Parts,
    body: B,
    peer: Option<SocketAddr>,
    cors: Cors,
) -> impl Future<Output = Result<HttpResponse, HttpResponse>>
where
    B: Body<Data = Bytes> + Unpin + 'static,
    B::Error: Into<BoxError>,
{
    async move {
        let endpoint = &endpoint;
        let (accepts, declared, era) = match check_head(endpoint, &parts, peer, cors)? {
            Head::Post {
                accepts,
                declared,
                era,
            } => (accepts, declared, era),
            Head::CrossOrigin => {
                let answer = cross_origin(endpoint.clone(), Request::from_parts(parts, body), peer);
                return Ok(answer.await);
            }
            Head::OtherMethod => return Err(Box::pin(other_method(endpoint, parts, peer)).await),
        };
        let text = read_body(endpoint, body, declared, peer).await?;
        let legacy = endpoint
            .hook
            .as_ref()
            .is_some_and(|hook| hook.claims_post(era, &text));
        // What follows the body is synchronous but for what may wait, which
        // comes back boxed: awaited here, only that box is in this future.
        let later = match after_body(endpoint, parts, text, peer, accepts, legacy)? {
            Next::Answered(response) => return Ok(response),
            Next::Later(later) => later,
        };
        Ok(later.await)
    }
}

/// What [`after_body`] came to.
enum Next<'a> {
    Answered(HttpResponse),
    /// What answers once it has waited: the hook's, authorization, or a
    /// handler that did not finish at once.
    Later(Pin<Box<dyn Future<Output = HttpResponse> + 'a>>),
}

/// The steps after the body: the concurrency cap, the hook's say, the
/// envelope, authorization, then the dispatcher.
fn after_body<'a>(
    endpoint: &'a Arc<Endpoint>,
    parts: Parts,
    text: ByteString,
    peer: Option<SocketAddr>,
    accepts: Accepts,
    legacy: bool,
) -> Result<Next<'a>, HttpResponse> {
    // Taken once the body is in: a client slow to send its body holds only
    // its own share (the per-client cap), not a slot of everyone's.
    let permit = endpoint.in_flight_permit(peer)?;
    if legacy && let Some(hook) = &endpoint.hook {
        let post = Post {
            parts,
            body: text,
            sse: accepts.sse,
            permit,
            peer,
        };
        return Ok(Next::Later(hook.post(endpoint, post)));
    }
    let received = Instant::now();
    let incoming = match envelope::parse(text) {
        Err(rejection) => return Err(modern(Reply::from(rejection), endpoint.metrics())),
        Ok(incoming) => incoming,
    };
    if endpoint.gate.is_some() {
        // Authorization may wait (keys to fetch, a token to introspect).
        let authorized = authorized(endpoint, incoming, parts, peer, accepts, permit);
        return Ok(Next::Later(Box::pin(authorized.map(either_answer))));
    }
    Ok(match incoming {
        Incoming::Request(request) => {
            match dispatch(endpoint, request, parts, peer, accepts, permit) {
                Dispatching::Answered(response) => Next::Answered(response),
                Dispatching::Later(answering) => Next::Later(answering),
            }
        }
        Incoming::Notification(notification) => {
            Next::Answered(notified(endpoint, &notification, parts, peer, received))
        }
    })
}

/// A notification that may pass, shown to the observers and accepted.
/// Nothing is cancelled by notification on HTTP: closing the stream is how
/// a client cancels.
fn notified(
    endpoint: &Endpoint,
    notification: &envelope::Notification,
    parts: Parts,
    peer: Option<SocketAddr>,
    received: Instant,
) -> HttpResponse {
    let dispatcher = endpoint.dispatcher();
    if dispatcher.observes_notifications() {
        let source = Endpoint::attach(Endpoint::source(&parts), parts, peer);
        dispatcher.notified(notification, &source, received);
    }
    respond::empty(StatusCode::ACCEPTED)
}

/// The rest of [`serve`] for an endpoint with authorization: the token and
/// scopes are checked first.
async fn authorized(
    endpoint: &Arc<Endpoint>,
    incoming: Incoming,
    mut parts: Parts,
    peer: Option<SocketAddr>,
    accepts: Accepts,
    permit: Slot,
) -> Result<HttpResponse, HttpResponse> {
    let received = Instant::now();
    let request = match incoming {
        Incoming::Request(request) => request,
        Incoming::Notification(notification) => {
            endpoint.authorize(&mut parts, None).await?;
            return Ok(notified(endpoint, &notification, parts, peer, received));
        }
    };
    endpoint.authorize(&mut parts, Some(&request)).await?;
    Ok(
        match dispatch(endpoint, request, parts, peer, accepts, permit) {
            Dispatching::Answered(response) => response,
            Dispatching::Later(answering) => answering.await,
        },
    )
}

/// What the request's head says of it, once its checks passed.
enum Head<'a> {
    /// A POST to answer here.
    Post {
        accepts: Accepts,
        /// `Content-Length`, if it is one.
        declared: Option<u64>,
        era: EraHeaders<'a>,
    },
    /// A request with an `Origin`, for CORS to take in hand.
    CrossOrigin,
    /// Another method than POST.
    OtherMethod,
}

/// The checks that need only the head: the steps up to the body. Not
/// `async`, so that the headers it scans are no part of the request's
/// future.
fn check_head<'a>(
    endpoint: &Endpoint,
    parts: &'a Parts,
    peer: Option<SocketAddr>,
    cors: Cors,
) -> Result<Head<'a>, HttpResponse> {
    // Public documents, for anyone (any Host, any Origin: CORS `*`).
    if let Some(document) = endpoint.published.as_ref().and_then(|p| p.answer(parts)) {
        return Err(document);
    }
    let seen = EndpointHeaders::scan(&parts.headers);
    if cors == Cors::Apply && seen.origin().is_some() {
        return Ok(Head::CrossOrigin);
    }
    route(endpoint, parts)?;
    check_authority(endpoint, &seen, parts, peer)?;
    if parts.method != HttpMethod::POST {
        return Ok(Head::OtherMethod);
    }
    Ok(Head::Post {
        accepts: check_content(&seen)?,
        declared: seen.content_length().and_then(|l| l.parse::<u64>().ok()),
        era: seen.era(),
    })
}

/// A modern answer, its refusal (if it is one) counted.
fn modern(reply: Reply, metrics: &Metrics) -> HttpResponse {
    respond::counted(reply, Statuses::MODERN, metrics)
}

/// The health probes, the protected resource metadata (when authorization
/// is on), and the endpoint's path.
fn route(endpoint: &Endpoint, parts: &Parts) -> Result<(), HttpResponse> {
    if let Some(probe) = probe(endpoint, parts) {
        return Err(probe);
    }
    if let Some(gate) = &endpoint.gate
        && let Some(response) =
            gate.metadata_response(&parts.method, parts.uri.path(), McpBody::full)
    {
        return Err(response);
    }
    if endpoint.check_path && parts.uri.path() != endpoint.options.path {
        return Err(respond::plain(StatusCode::NOT_FOUND, "not found"));
    }
    Ok(())
}

/// The answer of a health probe (`HttpOptions::probes`), if `parts` is a
/// `GET` or `HEAD` of one: before every other check, which an orchestrator
/// calling by address could not pass.
fn probe(endpoint: &Endpoint, parts: &Parts) -> Option<HttpResponse> {
    let (liveness, readiness) = endpoint.options.probes.as_ref()?;
    if parts.method != HttpMethod::GET && parts.method != HttpMethod::HEAD {
        return None;
    }
    let path = parts.uri.path();
    let (status, text) = if path == liveness {
        (StatusCode::OK, "ok")
    } else if path != readiness {
        return None;
    } else if endpoint.is_draining() || !endpoint.dispatcher().backend_ready() {
        (StatusCode::SERVICE_UNAVAILABLE, "not ready")
    } else {
        (StatusCode::OK, "ready")
    };
    let mut response = respond::plain(status, text);
    response.headers_mut().insert(
        http::header::CACHE_CONTROL,
        HeaderValue::from_static("no-store"),
    );
    Some(response)
}

/// DNS rebinding protection (`Host` and `Origin` allow-lists), and no
/// token in the query. A missing, repeated or malformed `Host` is a 400
/// (RFC 9112 §3.2); an absolute-form target's authority stands in for the
/// `Host` value (§3.2.2), so `POST http://evil.example/mcp` cannot pass as
/// loopback. A repeated or malformed `Origin` is refused like a foreign one.
fn check_authority(
    endpoint: &Endpoint,
    seen: &EndpointHeaders<'_>,
    parts: &Parts,
    peer: Option<SocketAddr>,
) -> Result<(), HttpResponse> {
    let policy = &endpoint.options.origins;
    let host = match parts.uri.authority() {
        Some(target) if seen.host().is_some() => Some(target.as_str()),
        _ => seen.host(),
    };
    let checked = match seen.host_repeated() {
        true => Err(HostRefusal::Malformed),
        false => policy.check_host(host),
    };
    if let Err(refusal) = checked {
        endpoint.metrics().refused(Refusal::Host);
        REFUSALS.host.note(|suppressed| {
            tracing::warn!(host = %Shown(host), ?peer, suppressed, "refused a request whose Host is missing, repeated, malformed or not allowed");
        });
        return Err(match refusal {
            HostRefusal::Malformed => respond::plain(
                StatusCode::BAD_REQUEST,
                "the request needs exactly one valid Host header",
            ),
            HostRefusal::NotAllowed => respond::forbidden("Host not allowed"),
        });
    }
    if seen.origin_repeated() || !policy.origin_allowed(seen.origin()) {
        endpoint.metrics().refused(Refusal::Origin);
        REFUSALS.origin.note(|suppressed| {
            tracing::warn!(origin = %Shown(seen.origin()), ?peer, suppressed, "refused a request from an origin that is not allowed");
        });
        return Err(respond::forbidden("Origin not allowed"));
    }
    if let Some(gate) = &endpoint.gate
        && let Err(refusal) = gate.check_query(&parts.uri)
    {
        return Err(gate.refuse(&refusal, &[], McpBody::full));
    }
    Ok(())
}

/// A request other than a POST: the hook's (for an authorized caller), or
/// 405.
async fn other_method(
    endpoint: &Arc<Endpoint>,
    mut parts: Parts,
    peer: Option<SocketAddr>,
) -> HttpResponse {
    if let Some(hook) = &endpoint.hook
        && hook.claims_other(&parts)
    {
        if let Err(response) = endpoint.authorize(&mut parts, None).await {
            return response;
        }
        if let Some(response) = hook.other(endpoint, &parts, peer).await {
            return response;
        }
    }
    let mut response = respond::plain(
        StatusCode::METHOD_NOT_ALLOWED,
        "the MCP endpoint accepts POST only",
    );
    response
        .headers_mut()
        .insert(ALLOW, HeaderValue::from_static("POST"));
    response
}

/// `Content-Type` must be JSON, the body plain (no transfer coding but
/// chunked, no content coding), and `Accept` must take JSON or SSE.
fn check_content(seen: &EndpointHeaders<'_>) -> Result<Accepts, HttpResponse> {
    if seen.foreign_transfer_coding() {
        // RFC 9112 §6.1: a transfer coding the server does not implement.
        return Err(respond::plain(
            StatusCode::NOT_IMPLEMENTED,
            "the only transfer coding accepted is chunked",
        ));
    }
    if seen.content_coded() {
        // RFC 9110 §15.5.16 and §12.5.3: 415, saying what is accepted.
        let mut response = respond::plain(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "send the body without a content coding (Content-Encoding: identity)",
        );
        response
            .headers_mut()
            .insert(ACCEPT_ENCODING, HeaderValue::from_static("identity"));
        return Err(response);
    }
    if !seen.content_is_json() {
        return Err(respond::plain(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "send JSON-RPC as Content-Type: application/json",
        ));
    }
    let accepts = seen.accepts();
    if !accepts.json && !accepts.sse {
        return Err(respond::plain(
            StatusCode::NOT_ACCEPTABLE,
            "accept application/json or text/event-stream",
        ));
    }
    Ok(accepts)
}

/// The body as text, within the size limit and the read time. Most
/// bodies arrive with their head: they are gathered in this future's first
/// poll, with no clock reading and no timer; one still on its way is
/// waited for in a boxed future that holds it to its pace (the request's
/// future is moved into hyper's task for every request, so what it holds
/// across its awaits is copied each time).
fn read_body<B>(
    endpoint: &Endpoint,
    mut body: B,
    declared: Option<u64>,
    peer: Option<SocketAddr>,
) -> impl Future<Output = Result<ByteString, HttpResponse>>
where
    B: Body<Data = Bytes> + Unpin,
    B::Error: Into<BoxError>,
{
    let limit = endpoint.options.max_body_bytes;
    let metrics = endpoint.metrics();
    let pace = Pace {
        timeout: endpoint.options.body_timeout,
        min_rate: endpoint.options.min_body_rate,
    };
    async move {
        if declared.is_some_and(|length| length > limit as u64) {
            return Err(respond::too_large(limit, metrics));
        }
        let mut gathered = Gathered::default();
        let at_once = poll_fn(|cx| Poll::Ready(gather(&mut body, cx, &mut gathered, limit))).await;
        let outcome = match at_once {
            Poll::Ready(outcome) => outcome.map(|()| gathered),
            Poll::Pending => {
                Box::pin(paced(body, gathered, limit, pace))
                    .await
                    .map_err(|TooSlow| {
                        respond::plain(
                            StatusCode::REQUEST_TIMEOUT,
                            "the request body took too long to arrive, or came too slowly",
                        )
                    })?
            }
        };
        body_text(outcome, limit, peer, metrics)
    }
}

/// The gathered body as text, or the answer to a body that failed.
fn body_text(
    outcome: Result<Gathered, BodyFailure>,
    limit: usize,
    peer: Option<SocketAddr>,
    metrics: &Metrics,
) -> Result<ByteString, HttpResponse> {
    let bytes = match outcome {
        Ok(gathered) => gathered.into_bytes(),
        Err(BodyFailure::TooLarge) => return Err(respond::too_large(limit, metrics)),
        Err(BodyFailure::Failed(error)) => {
            tracing::debug!(%error, ?peer, "request body failed");
            return Err(respond::plain(
                StatusCode::BAD_REQUEST,
                "the request body could not be read",
            ));
        }
    };
    // Kept as received (no copy): the request's text shares the body's
    // buffer.
    ByteString::try_from(bytes).map_err(|_| {
        modern(
            Reply::error(
                None,
                &ErrorObject::parse_error("the body is not valid UTF-8"),
            ),
            metrics,
        )
    })
}

/// A body's data so far: most bodies are one frame, kept as received.
#[derive(Default)]
struct Gathered {
    first: Option<Bytes>,
    /// The frames after the first, joined (with the first).
    joined: Option<BytesMut>,
    len: usize,
}

impl Gathered {
    fn push(&mut self, data: Bytes) {
        self.len += data.len();
        if let Some(joined) = &mut self.joined {
            joined.extend_from_slice(&data);
        } else if let Some(first) = self.first.take() {
            let mut joined = BytesMut::with_capacity(self.len);
            joined.extend_from_slice(&first);
            joined.extend_from_slice(&data);
            self.joined = Some(joined);
        } else {
            self.first = Some(data);
        }
    }

    fn into_bytes(self) -> Bytes {
        match (self.joined, self.first) {
            (Some(joined), _) => joined.freeze(),
            (None, first) => first.unwrap_or_default(),
        }
    }
}

/// Why a body could not be read.
enum BodyFailure {
    /// Over the size limit (413).
    TooLarge,
    /// The connection failed, or the body was malformed (400).
    Failed(BoxError),
}

/// Pulls `body`'s frames into `gathered` until the body ends (`Ready`) or
/// has none ready yet (`Pending`, with `cx` woken when it has). Trailers
/// are ignored.
fn gather<B>(
    body: &mut B,
    cx: &mut std::task::Context<'_>,
    gathered: &mut Gathered,
    limit: usize,
) -> Poll<Result<(), BodyFailure>>
where
    B: Body<Data = Bytes> + Unpin,
    B::Error: Into<BoxError>,
{
    loop {
        let frame = match std::task::ready!(Pin::new(&mut *body).poll_frame(cx)) {
            None => return Poll::Ready(Ok(())),
            Some(Err(error)) => return Poll::Ready(Err(BodyFailure::Failed(error.into()))),
            Some(Ok(frame)) => frame,
        };
        if let Ok(data) = frame.into_data() {
            if gathered.len + data.len() > limit {
                return Poll::Ready(Err(BodyFailure::TooLarge));
            }
            gathered.push(data);
        }
    }
}

/// How long a body may take: `timeout` at most, and no slower than
/// `min_rate` bytes a second on average after [`BODY_GRACE`].
#[derive(Clone, Copy)]
struct Pace {
    timeout: Duration,
    min_rate: u64,
}

impl Pace {
    /// When a body that began at `start` and has `received` bytes so far
    /// must be complete by.
    fn deadline(self, start: Instant, received: usize) -> Instant {
        let mut allowed = self.timeout;
        if self.min_rate > 0 {
            let earned = Duration::from_secs_f64(received as f64 / self.min_rate as f64);
            allowed = allowed.min(BODY_GRACE.saturating_add(earned));
        }
        start + allowed
    }
}

/// A body that came too slowly.
struct TooSlow;

/// Gathers the rest of a body that did not arrive with its head, while the
/// bytes received keep up with `pace`: the timer is set for the earliest
/// deadline (no bytes since), and each time it fires the deadline the
/// bytes received so far earn is checked.
async fn paced<B>(
    mut body: B,
    mut gathered: Gathered,
    limit: usize,
    pace: Pace,
) -> Result<Result<Gathered, BodyFailure>, TooSlow>
where
    B: Body<Data = Bytes> + Unpin,
    B::Error: Into<BoxError>,
{
    let start = Instant::now();
    let mut timer = std::pin::pin!(tokio::time::sleep_until(pace.deadline(start, 0).into()));
    let outcome = poll_fn(|cx| {
        loop {
            if let Poll::Ready(outcome) = gather(&mut body, cx, &mut gathered, limit) {
                return Poll::Ready(Ok(outcome));
            }
            std::task::ready!(timer.as_mut().poll(cx));
            let deadline = pace.deadline(start, gathered.len);
            if Instant::now() >= deadline {
                return Poll::Ready(Err(TooSlow));
            }
            timer.as_mut().reset(deadline.into());
        }
    })
    .await;
    Ok(outcome?.map(|()| gathered))
}

/// What [`dispatch`] came to: the response, or the future that answers.
enum Dispatching {
    Answered(HttpResponse),
    Later(Pin<Box<dyn Future<Output = HttpResponse>>>),
}

/// The dispatcher's part, with this transport's checks and admission, and
/// the answer: JSON, or SSE once the handler streams. Not `async`: most
/// requests are answered by the time it returns, and only those that wait
/// (for a shared limiter, or a handler that has not finished) pay for a
/// future, boxed.
fn dispatch(
    endpoint: &Arc<Endpoint>,
    request: envelope::Request,
    parts: Parts,
    peer: Option<SocketAddr>,
    accepts: Accepts,
    permit: Slot,
) -> Dispatching {
    let source = Endpoint::source(&parts);
    let mut admission = HttpAdmission {
        endpoint,
        parts: Some(parts),
        peer,
        accepts,
        permit: Some(permit),
    };
    let dispatcher = endpoint.dispatcher();
    let dispatched = dispatcher.dispatch(request, source, endpoint.shutdown(), &mut admission);
    let running = match dispatched {
        Dispatched::Answered(Answer::Shared { id, result }) => {
            let response = respond::json(StatusCode::OK, McpBody::result(&id, result));
            return Dispatching::Answered(response);
        }
        Dispatched::Answered(Answer::Reply(reply)) => {
            return Dispatching::Answered(modern(reply, endpoint.metrics()));
        }
        Dispatched::Refused(response) => return Dispatching::Answered(response),
        Dispatched::Layered { id, future } => {
            // An answer known at once, through the request layers: under
            // the request timeout, as a handler is.
            let limit = endpoint.options.request_timeout;
            let metrics = endpoint.metrics().clone();
            return Dispatching::Later(Box::pin(async move {
                let reply = tokio::time::timeout(limit, future).await;
                modern(
                    reply.unwrap_or_else(|_| Reply::timed_out(&id, limit)),
                    &metrics,
                )
            }));
        }
        Dispatched::Running {
            id,
            future,
            admitted: (queue, streaming, rate),
        } => (id, future, queue, streaming, rate),
    };
    let (id, future, queue, streaming, rate) = running;
    let Some(pending) = rate else {
        return match respond(id, future, queue, streaming, endpoint.metrics()) {
            Responding::Finished(response) => Dispatching::Answered(response),
            Responding::Running(running) => Dispatching::Later(running),
        };
    };
    // A shared limiter's verdict comes before the handler's first poll: a
    // refused call never starts.
    let metrics = endpoint.metrics().clone();
    Dispatching::Later(Box::pin(async move {
        if let Err(refusal) = pending.await {
            return refusal;
        }
        match respond(id, future, queue, streaming, &metrics) {
            Responding::Finished(response) => response,
            Responding::Running(running) => running.await,
        }
    }))
}

/// The HTTP transport's say in dispatch: the mirrored headers, then what a
/// running request may hold (a slot, a time limit, a stream).
struct HttpAdmission<'a> {
    endpoint: &'a Endpoint,
    /// Attached to the request's source once it is admitted to run.
    parts: Option<Parts>,
    peer: Option<SocketAddr>,
    accepts: Accepts,
    permit: Option<Slot>,
}

impl Admission for HttpAdmission<'_> {
    type Refusal = HttpResponse;
    type Admitted = (Arc<NoteQueue>, Streaming, Option<PendingRate>);

    fn check(&mut self, request: &Prepared) -> Result<(), ErrorObject> {
        let Some(parts) = &self.parts else {
            return Ok(());
        };
        let dispatcher = self.endpoint.dispatcher();
        headers::check(request, &parts.headers, dispatcher)
    }

    fn time_limit(&self) -> Option<Duration> {
        Some(self.endpoint.options.request_timeout)
    }

    fn attach(&mut self, request: &mut Prepared) {
        if let Some(parts) = self.parts.take() {
            let source = std::mem::take(&mut request.source);
            request.source = Endpoint::attach(source, parts, self.peer);
        }
    }

    fn admit(
        &mut self,
        request: &mut Prepared,
        target: &Target,
    ) -> Result<(Outbox, Self::Admitted), HttpResponse> {
        let options = &self.endpoint.options;
        let listen = matches!(target, Target::Core(Method::SubscriptionsListen));
        let mut rate = None;
        let (permit, deadline, keep_alive) = if listen {
            if !self.accepts.sse {
                return Err(respond::plain(
                    StatusCode::NOT_ACCEPTABLE,
                    "subscriptions/listen answers with a stream: accept text/event-stream",
                ));
            }
            // A subscription is counted against its own cap, not against
            // requests in flight, and has no time limit.
            self.permit = None;
            let permit = self.endpoint.stream_permit(self.peer)?;
            (permit, None, Some(options.keep_alive))
        } else {
            if matches!(target, Target::Core(Method::ToolsCall)) {
                rate = self.endpoint.check_rate(self.peer, &request.request.id)?;
            }
            let Some(permit) = self.permit.take() else {
                return Err(respond::busy(self.endpoint.metrics()));
            };
            (permit, Some(options.request_timeout), None)
        };
        self.attach(request);
        let queue = Arc::new(NoteQueue::default());
        let streaming = Streaming {
            sse: self.accepts.sse,
            deadline,
            keep_alive,
            statuses: Statuses::MODERN,
            cancelled: None,
            permit,
        };
        Ok((Outbox::new(queue.clone()), (queue, streaming, rate)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_body_earns_time_by_its_bytes_after_the_grace_up_to_the_timeout() {
        let pace = Pace {
            timeout: Duration::from_secs(30),
            min_rate: 1024,
        };
        let start = Instant::now();
        assert_eq!(pace.deadline(start, 0), start + BODY_GRACE);
        assert_eq!(
            pace.deadline(start, 4096),
            start + BODY_GRACE + Duration::from_secs(4)
        );
        assert_eq!(pace.deadline(start, 1 << 30), start + pace.timeout);
        let unpaced = Pace {
            min_rate: 0,
            ..pace
        };
        assert_eq!(unpaced.deadline(start, 0), start + pace.timeout);
    }
}

//! The legacy era on Streamable HTTP (the 2025-11-25 shape): `initialize`
//! mints a sealed `Mcp-Session-Id`; requests of a session are answered with
//! JSON or, when the handler sends notifications or asks the client
//! something, on an SSE stream; the client's answers come back as POSTed
//! responses; GET opens the session's notification stream; DELETE ends it.
//!
//! What still needs stickiness: the answer to a server-to-client request
//! must reach the instance whose request waits for it (it is matched in
//! this process's memory), and `logging/setLevel`, resource subscriptions,
//! DELETE and the GET stream are per instance too. Without stickiness an
//! answer that lands elsewhere is accepted (202) but matched to nothing, so
//! the waiting request times out; everything else about a session works on
//! any instance holding the keys.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use http::header::{CACHE_CONTROL, CONTENT_TYPE};
use http::request::Parts;
use http::{HeaderValue, Method as HttpMethod, Response, StatusCode};
use serde_json::Value;
use tokio::sync::OwnedSemaphorePermit;
use tokio::sync::broadcast::error::RecvError;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::adapter::{Call, Offer};
use super::bridge::{ANSWER_TIMEOUT, Peer, Pending};
use super::session::{Negotiated, SharedLive};
use super::session_id::{SessionToken, now_seconds};
use super::{is_legacy_version, notify};
use crate::McpBody;
use crate::dispatch::Reply;
use crate::dispatch::envelope::{self, Incoming, Notification};
use crate::protocol::{ErrorObject, PROTOCOL_VERSION, RequestId};
use crate::transport::http::HttpRequest;
use crate::transport::http::pipeline::Shared;

const SESSION_ID: &str = "mcp-session-id";
const VERSION_HEADER: &str = "mcp-protocol-version";

type HttpResponse = Response<McpBody>;

/// The legacy side of one HTTP server, shared by its workers.
#[derive(Debug)]
pub(crate) struct LegacyHttp {
    offer: Offer,
    pending: Pending,
    /// This instance's part of each session, by the session's nonce.
    sessions: Mutex<HashMap<String, Arc<Local>>>,
    /// Sessions ended by DELETE here, until they would have expired.
    ended: Mutex<HashMap<String, u64>>,
    /// Requests running here, by session nonce and id, for
    /// `notifications/cancelled`.
    running: Mutex<HashMap<(String, RequestId), CancellationToken>>,
}

/// Removes a request from [`LegacyHttp::running`] however it ends.
struct Running<'a> {
    table: &'a Mutex<HashMap<(String, RequestId), CancellationToken>>,
    key: (String, RequestId),
}

impl Drop for Running<'_> {
    fn drop(&mut self) {
        locked(self.table).remove(&self.key);
    }
}

/// What one instance keeps of a session.
#[derive(Debug)]
struct Local {
    live: SharedLive,
    /// Cancelled by DELETE: closes the session's GET streams.
    closed: CancellationToken,
    expires: u64,
}

impl LegacyHttp {
    pub(crate) fn new(server: &crate::Server) -> LegacyHttp {
        LegacyHttp {
            offer: Offer::read(&server.dispatcher, server.info()),
            pending: Pending::default(),
            sessions: Mutex::default(),
            ended: Mutex::default(),
            running: Mutex::default(),
        }
    }

    /// The session a request names: `Err` is the 404 a client gets for a
    /// session that is unknown, expired or ended.
    fn session(&self, shared: &Shared, header: &str) -> Result<(SessionToken, Arc<Local>), ()> {
        let keys = shared.server.dispatcher.state_keys();
        let token = SessionToken::open(keys, header).ok_or(())?;
        if locked(&self.ended).contains_key(&token.nonce) {
            return Err(());
        }
        let mut sessions = locked(&self.sessions);
        let local = sessions
            .entry(token.nonce.clone())
            .or_insert_with(|| {
                Arc::new(Local {
                    live: SharedLive::default(),
                    closed: CancellationToken::new(),
                    expires: token.expires,
                })
            })
            .clone();
        Ok((token, local))
    }

    /// Forgets sessions that expired (called when one is added).
    fn sweep(&self) {
        let now = now_seconds();
        locked(&self.sessions).retain(|_, local| local.expires > now);
        locked(&self.ended).retain(|_, expires| *expires > now);
    }
}

fn locked<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn header<'a>(parts: &'a Parts, name: &str) -> Option<&'a str> {
    parts.headers.get(name).and_then(|v| v.to_str().ok())
}

/// GET and DELETE with an `Mcp-Session-Id`; `None` leaves the request to
/// the modern transport (which answers 405).
pub(crate) fn other_method(shared: &Arc<Shared>, parts: &Parts) -> Option<HttpResponse> {
    let id = header(parts, SESSION_ID)?;
    let legacy = &shared.legacy;
    if parts.method == HttpMethod::DELETE {
        let Ok((token, local)) = legacy.session(shared, id) else {
            return Some(session_not_found());
        };
        local.closed.cancel();
        locked(&legacy.sessions).remove(&token.nonce);
        locked(&legacy.ended).insert(token.nonce, token.expires);
        tracing::debug!("legacy session ended by DELETE");
        return Some(status(StatusCode::OK));
    }
    if parts.method != HttpMethod::GET {
        return None;
    }
    let Ok((_, local)) = legacy.session(shared, id) else {
        return Some(session_not_found());
    };
    if !header(parts, "accept").is_some_and(|a| a.contains("text/event-stream")) {
        return Some(plain(
            StatusCode::NOT_ACCEPTABLE,
            "the notification stream is text/event-stream: accept it",
        ));
    }
    let Ok(permit) = shared.subscriptions.clone().try_acquire_owned() else {
        return Some(plain(
            StatusCode::SERVICE_UNAVAILABLE,
            "too many open streams",
        ));
    };
    Some(notification_stream(shared.clone(), local, permit))
}

/// The standalone SSE stream of a session: list changes and updates of
/// subscribed resources, until DELETE, shutdown or the client leaves.
fn notification_stream(
    shared: Arc<Shared>,
    local: Arc<Local>,
    permit: OwnedSemaphorePermit,
) -> HttpResponse {
    let (events, stream) = mpsc::channel(64);
    let mut changes = shared.server.dispatcher.changes().subscribe();
    tokio::task::spawn_local(async move {
        let _permit = permit;
        let every = shared.options.keep_alive;
        let mut ticks = tokio::time::interval_at(tokio::time::Instant::now() + every, every);
        let offer = &shared.legacy.offer;
        loop {
            let frame = tokio::select! {
                () = local.closed.cancelled() => break,
                () = shared.shutdown.cancelled() => break,
                () = events.closed() => break,
                _ = ticks.tick() => Some(Bytes::from_static(b":\n\n")),
                change = changes.recv() => match change {
                    Ok(change) => notify::frame(&change, offer, &local.live).map(|f| event(&f)),
                    Err(RecvError::Lagged(_)) => None,
                    Err(RecvError::Closed) => break,
                },
            };
            if let Some(frame) = frame
                && events.send(frame).await.is_err()
            {
                break;
            }
        }
    });
    crate::transport::http::pipeline::sse(stream)
}

/// A POST the legacy era owns, answered; or the request back, untouched,
/// for the modern transport.
pub(crate) type Unclaimed = Box<(Parts, String, OwnedSemaphorePermit)>;

/// Decides a POST's era and serves it if it is legacy: a legacy
/// `MCP-Protocol-Version`, an `Mcp-Session-Id` (unless the version header
/// is the modern one, which wins), or an `initialize`; never a body with
/// modern `_meta`, which is served statelessly whatever its headers say.
pub(crate) async fn post(
    shared: &Arc<Shared>,
    parts: Parts,
    body: String,
    sse: bool,
    permit: OwnedSemaphorePermit,
    peer: Option<SocketAddr>,
) -> Result<HttpResponse, Unclaimed> {
    let version = header(&parts, VERSION_HEADER);
    let session = header(&parts, SESSION_ID);
    let legacy_header = version.is_some_and(is_legacy_version);
    let claimed = match version {
        Some(PROTOCOL_VERSION) => false,
        _ if legacy_header || session.is_some() => !probe(&body).modern,
        Some(_) => false,
        None => {
            let probe = probe(&body);
            probe.initialize && !probe.modern
        }
    };
    if !claimed {
        return Err(Box::new((parts, body, permit)));
    }
    if let Some(version) = version
        && !legacy_header
    {
        return Ok(json_error(
            StatusCode::BAD_REQUEST,
            None,
            &ErrorObject::invalid_request(format!(
                "unsupported MCP-Protocol-Version '{version}'; this server speaks {}",
                super::LEGACY_VERSIONS.join(", ")
            )),
        ));
    }
    let legacy = &shared.legacy;
    let session = match session {
        None => None,
        Some(id) => match legacy.session(shared, id) {
            Ok(session) => Some(session),
            Err(()) => return Ok(session_not_found()),
        },
    };
    if let (Some(version), Some((token, _))) = (version, &session)
        && version != token.negotiated.version
    {
        return Ok(json_error(
            StatusCode::BAD_REQUEST,
            None,
            &ErrorObject::invalid_request(format!(
                "MCP-Protocol-Version '{version}' is not the version this session negotiated ('{}')",
                token.negotiated.version
            )),
        ));
    }
    // The client's answer to one of our requests.
    if let Ok(message) = serde_json::from_str::<Value>(&body)
        && message.get("method").is_none()
        && (message.get("result").is_some() || message.get("error").is_some())
    {
        let Some((token, _)) = &session else {
            return Ok(missing_session());
        };
        if !legacy.pending.resolve(&token.nonce, &message) {
            tracing::debug!("a response to no request waiting on this instance");
        }
        return Ok(status(StatusCode::ACCEPTED));
    }
    let request = match envelope::parse(body) {
        Err(rejection) => {
            return Ok(json_error(
                StatusCode::BAD_REQUEST,
                rejection.id.as_ref(),
                &rejection.error,
            ));
        }
        Ok(Incoming::Notification(notification)) => {
            // The client gave up on one of its requests: stop its handler
            // and close its stream (no response is due).
            if let (Notification::Cancelled(id), Some((token, _))) = (notification, &session) {
                let key = (token.nonce.clone(), id);
                if let Some(cancel) = locked(&legacy.running).get(&key) {
                    cancel.cancel();
                }
            }
            return Ok(status(StatusCode::ACCEPTED));
        }
        Ok(Incoming::Request(request)) => request,
    };
    let params = match request.params().map(serde_json::from_str::<Value>) {
        None => None,
        Some(Ok(params)) => Some(params),
        Some(Err(_)) => {
            let error = ErrorObject::invalid_params("Invalid params");
            return Ok(json_reply(&Reply::error(Some(&request.id), &error)));
        }
    };
    let method = request.method.as_str().to_owned();
    let Some((token, local)) = session else {
        if method == "initialize" {
            return Ok(initialize(shared, &request.id, params.as_ref()));
        }
        return Ok(missing_session());
    };
    // Tool calls are rate limited per client address, as in the modern era.
    if method == "tools/call"
        && let Some((limiter, peer)) = shared.limiter.as_ref().zip(peer)
        && let Err(wait) = limiter.check(&peer.ip().to_string())
    {
        return Ok(rate_limited(&request.id, wait));
    }
    let http = Arc::new(HttpRequest::new(parts, peer));
    Ok(answer(
        shared.clone(),
        token,
        local,
        request.id,
        method,
        params,
        sse,
        http,
        permit,
    )
    .await)
}

/// What the era decision needs from a body.
struct Probe {
    /// The method is `initialize`.
    initialize: bool,
    /// `params._meta` names a protocol version.
    modern: bool,
}

/// Reads a body just enough to decide its era (only for POSTs that are
/// not plainly modern by their headers).
fn probe(body: &str) -> Probe {
    #[derive(serde::Deserialize)]
    struct Message<'a> {
        #[serde(borrow, default)]
        method: Option<std::borrow::Cow<'a, str>>,
        #[serde(borrow, default)]
        params: Option<Params<'a>>,
    }
    #[derive(serde::Deserialize)]
    struct Params<'a> {
        #[serde(rename = "_meta", borrow, default)]
        meta: Option<&'a serde_json::value::RawValue>,
    }
    match serde_json::from_str::<Message<'_>>(body) {
        Ok(message) => Probe {
            initialize: message.method.as_deref() == Some("initialize"),
            modern: super::is_modern_meta(message.params.and_then(|p| p.meta).map(|m| m.get())),
        },
        Err(_) => Probe {
            initialize: false,
            modern: false,
        },
    }
}

fn initialize(shared: &Shared, id: &RequestId, params: Option<&Value>) -> HttpResponse {
    let negotiated = match Negotiated::from_initialize(params) {
        Ok(negotiated) => negotiated,
        Err(error) => return json_reply(&Reply::error(Some(id), &error)),
    };
    let legacy = &shared.legacy;
    let result = legacy.offer.initialize_result(&negotiated);
    let token = SessionToken::new(negotiated);
    let keys = shared.server.dispatcher.state_keys();
    let Some(session_id) = token
        .seal(keys)
        .and_then(|s| HeaderValue::from_str(&s).ok())
    else {
        return json_reply(&Reply::error(Some(id), &ErrorObject::internal_error()));
    };
    legacy.sweep();
    locked(&legacy.sessions).insert(
        token.nonce.clone(),
        Arc::new(Local {
            live: SharedLive::default(),
            closed: CancellationToken::new(),
            expires: token.expires,
        }),
    );
    tracing::debug!(version = %token.negotiated.version, "legacy session started");
    let mut response = json_reply(&Reply::result(id, result.to_string().as_bytes()));
    response.headers_mut().insert(SESSION_ID, session_id);
    response
}

/// Runs a session's request; answers with JSON, or switches to SSE as soon
/// as anything must reach the client first (a notification, or a request
/// of the bridge).
#[allow(clippy::too_many_arguments)]
async fn answer(
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
fn event(message: &[u8]) -> Bytes {
    let mut out = Vec::with_capacity(message.len() + 8);
    out.extend_from_slice(b"data: ");
    out.extend_from_slice(message);
    out.extend_from_slice(b"\n\n");
    Bytes::from(out)
}

fn sse_response(body: McpBody) -> HttpResponse {
    let mut response = Response::new(body);
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}

/// A JSON-RPC answer: HTTP 200 whatever it says, as legacy clients expect
/// (they read JSON-RPC errors from the body, not from the status).
fn json_reply(reply: &Reply) -> HttpResponse {
    let mut response = Response::new(McpBody::full(reply.frame.clone()));
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}

fn json_error(code: StatusCode, id: Option<&RequestId>, error: &ErrorObject) -> HttpResponse {
    let mut response = json_reply(&Reply::error(id, error));
    *response.status_mut() = code;
    response
}

fn session_not_found() -> HttpResponse {
    json_error(
        StatusCode::NOT_FOUND,
        None,
        &ErrorObject::new(
            -32001,
            "Session not found: it expired or was ended; initialize a new one",
        ),
    )
}

fn missing_session() -> HttpResponse {
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
fn rate_limited(id: &RequestId, wait: std::time::Duration) -> HttpResponse {
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

fn status(code: StatusCode) -> HttpResponse {
    let mut response = Response::new(McpBody::empty());
    *response.status_mut() = code;
    response
}

fn plain(code: StatusCode, text: &'static str) -> HttpResponse {
    let mut response = Response::new(McpBody::full(Bytes::from_static(text.as_bytes())));
    *response.status_mut() = code;
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bodies_are_probed_for_their_era() {
        let legacy = probe(
            r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}"#,
        );
        assert!(legacy.initialize && !legacy.modern);
        let modern = probe(
            r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#,
        );
        assert!(modern.initialize && modern.modern);
        let progress = probe(
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"progressToken":1}}}"#,
        );
        assert!(!progress.initialize && !progress.modern);
        let garbage = probe("not json");
        assert!(!garbage.initialize && !garbage.modern);
    }
}

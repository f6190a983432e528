//! A POST in the legacy era: the era decision, `initialize`, the client's
//! answers and notifications, and a session's requests.

#![expect(
    clippy::result_large_err,
    reason = "an early answer is the response itself, handed to hyper by value: boxing it would add an allocation to every refusal"
)]

use std::net::IpAddr;
use std::sync::Arc;
use std::time::Instant;

use http::request::Parts;
use http::{HeaderValue, StatusCode};
use serde_json::Value;

use super::respond::{Session, answer, legacy_error, legacy_reply, missing_session, refused};
use super::{LegacyHttp, Local, Refusal, SESSION_ID, VERSION_HEADER, header};
use crate::dispatch::Reply;
use crate::dispatch::envelope::{self, Incoming, Notification, Request};
use crate::legacy::session::Negotiated;
use crate::legacy::session_id::SessionToken;
use crate::legacy::shared::Forwarded;
use crate::legacy::{LEGACY_VERSIONS, is_legacy_version, is_modern_meta, negotiate};
use crate::protocol::{ErrorObject, PROTOCOL_VERSION, RequestId};
use crate::transport::http::endpoint::Endpoint;
use crate::transport::http::hook::Post;
use crate::transport::http::respond::{self, HttpResponse};

/// What a POST's headers say about its era, read with the endpoint's
/// other headers (before authorization edits them).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum EraMarks {
    /// The modern `MCP-Protocol-Version`, or one of no era (which the
    /// modern path refuses): never legacy.
    NotLegacy,
    /// A legacy `MCP-Protocol-Version`, or an `Mcp-Session-Id`.
    Legacy,
    /// No version header and no session.
    Unmarked,
}

impl EraMarks {
    pub(super) fn read(version: Option<&str>, session_id: Option<&str>) -> EraMarks {
        match version {
            Some(PROTOCOL_VERSION) => EraMarks::NotLegacy,
            _ if version.is_some_and(is_legacy_version) || session_id.is_some() => EraMarks::Legacy,
            Some(_) => EraMarks::NotLegacy,
            None => EraMarks::Unmarked,
        }
    }
}

/// Whether a POST is legacy-era traffic: a legacy `MCP-Protocol-Version`,
/// an `Mcp-Session-Id` (unless the version header is the modern one, which
/// wins), or an `initialize`; never a body with modern `_meta`, which is
/// served statelessly whatever its headers say. A modern request with its
/// version header is decided without looking at the body.
pub(super) fn claims(marks: EraMarks, body: &str) -> bool {
    match marks {
        EraMarks::NotLegacy => false,
        EraMarks::Legacy => !probe(body).modern,
        EraMarks::Unmarked => {
            let probe = probe(body);
            probe.initialize && !probe.modern
        }
    }
}

/// Serves a POST that [`claims`] found legacy.
pub(super) async fn post(
    legacy: &LegacyHttp,
    endpoint: &Arc<Endpoint>,
    post: Post,
) -> HttpResponse {
    match serve(legacy, endpoint, post).await {
        Ok(response) | Err(response) => response,
    }
}

/// The steps of a legacy POST; `Err` is an early answer.
async fn serve(
    legacy: &LegacyHttp,
    endpoint: &Arc<Endpoint>,
    post: Post,
) -> Result<HttpResponse, HttpResponse> {
    let Post {
        mut parts,
        body,
        sse,
        permit,
        peer,
    } = post;
    let session = session_of(legacy, endpoint, &parts).await?;
    if is_answer(&body) {
        endpoint.authorize(&mut parts, None).await?;
        return Ok(take_answer(legacy, session.as_ref(), &body, endpoint.metrics()).await);
    }
    let request = match envelope::parse(body) {
        Err(rejection) => {
            let (id, error) = (rejection.id.as_ref(), &rejection.error);
            return Err(respond::error(StatusCode::BAD_REQUEST, id, error));
        }
        Ok(Incoming::Notification(notification)) => {
            let received = Instant::now();
            endpoint.authorize(&mut parts, None).await?;
            let token = session.as_ref().map(|(token, _)| token);
            observe(endpoint, &notification, (parts, peer), token, received);
            return Ok(notify(legacy, session.as_ref(), notification).await);
        }
        Ok(Incoming::Request(request)) => request,
    };
    endpoint.authorize(&mut parts, Some(&request)).await?;
    let method = request.method.as_str().to_owned();
    // Without a session only `initialize` is served: anything else is the
    // missing session's 400, whatever its params hold.
    if session.is_none() && method != "initialize" {
        return Ok(missing_session());
    }
    let params = params_of(&request)?;
    // `initialize` is rate limited as tool calls are: each one makes a
    // session this instance keeps for a day.
    if (method == "tools/call" || session.is_none())
        && let Some(pending) = endpoint.check_rate(peer, &request.id)?
    {
        pending.await?;
    }
    let Some((token, local)) = session else {
        let client = peer.map(|peer| peer.ip());
        return Ok(initialize(
            legacy,
            endpoint,
            &request.id,
            params.as_ref(),
            client,
        ));
    };
    let session = Session {
        token,
        local,
        sse,
        permit,
    };
    let source = Endpoint::attach(Endpoint::source(&parts), parts, peer);
    Ok(answer(
        legacy, endpoint, session, request.id, method, params, source,
    )
    .await)
}

/// The session a POST names, if any: refused when its version header is
/// not a legacy one or not the session's, or the session is unknown.
async fn session_of(
    legacy: &LegacyHttp,
    endpoint: &Endpoint,
    parts: &Parts,
) -> Result<Option<(SessionToken, Arc<Local>)>, HttpResponse> {
    let version = header(parts, VERSION_HEADER);
    if let Some(version) = version.filter(|v| !is_legacy_version(v)) {
        let message = format!(
            "unsupported MCP-Protocol-Version '{version}'; this server speaks {}",
            LEGACY_VERSIONS.join(", ")
        );
        let error = ErrorObject::invalid_request(message);
        return Err(respond::error(StatusCode::BAD_REQUEST, None, &error));
    }
    let Some(id) = header(parts, SESSION_ID) else {
        return Ok(None);
    };
    let (token, local) = legacy
        .session(endpoint, id)
        .await
        .map_err(|refusal| refused(&refusal, endpoint.metrics()))?;
    if let Some(version) = version.filter(|v| *v != token.negotiated.version) {
        let message = format!(
            "MCP-Protocol-Version '{version}' is not the version this session negotiated ('{}')",
            token.negotiated.version
        );
        let error = ErrorObject::invalid_request(message);
        return Err(respond::error(StatusCode::BAD_REQUEST, None, &error));
    }
    Ok(Some((token, local)))
}

/// Whether a body is the client's answer to one of our requests.
fn is_answer(body: &str) -> bool {
    serde_json::from_str::<Value>(body).is_ok_and(|message| {
        message.get("method").is_none()
            && (message.get("result").is_some() || message.get("error").is_some())
    })
}

/// The client's answer to one of our requests, handed to the request
/// waiting for it here, or else to the other instances (one of them may
/// hold it).
async fn take_answer(
    legacy: &LegacyHttp,
    session: Option<&(SessionToken, Arc<Local>)>,
    body: &str,
    metrics: &crate::metrics::Metrics,
) -> HttpResponse {
    let Some((token, _)) = session else {
        return missing_session();
    };
    let message = serde_json::from_str::<Value>(body).unwrap_or_default();
    if legacy.tables.pending.resolve(&token.nonce, &message) {
        return respond::empty(StatusCode::ACCEPTED);
    }
    let Some(share) = &legacy.share else {
        tracing::debug!("a response to no request waiting on this instance");
        return respond::empty(StatusCode::ACCEPTED);
    };
    match share
        .forward(&token.nonce, Forwarded::Answer { message })
        .await
    {
        Ok(()) => respond::empty(StatusCode::ACCEPTED),
        Err(error) => refused(&Refusal::Unavailable(error.0), metrics),
    }
}

/// Shows a notification to the server's observers, as from the session's
/// revision.
fn observe(
    endpoint: &Endpoint,
    notification: &Notification,
    (parts, peer): (Parts, Option<std::net::SocketAddr>),
    session: Option<&SessionToken>,
    received: Instant,
) {
    let dispatcher = endpoint.dispatcher();
    if !dispatcher.observes_notifications() {
        return;
    }
    let source = Endpoint::attach(Endpoint::source(&parts), parts, peer);
    let source = match session {
        Some(token) => source.with_negotiated_revision(negotiate(&token.negotiated.version)),
        None => source,
    };
    dispatcher.notified(notification, &source, received);
}

/// A notification: the client gave up on one of its requests, which stops
/// its handler and closes its stream (no response is due); others are
/// accepted and ignored.
async fn notify(
    legacy: &LegacyHttp,
    session: Option<&(SessionToken, Arc<Local>)>,
    notification: Notification,
) -> HttpResponse {
    if let (Some(id), Some((token, _))) = (notification.cancels, session)
        && !legacy.tables.cancel(&token.nonce, id.clone())
        && let Some(share) = &legacy.share
        && let Err(error) = share
            .forward(&token.nonce, Forwarded::Cancelled { id })
            .await
    {
        // Nothing is due to the client for a notification: say it here.
        tracing::warn!(%error, "notifications/cancelled could not reach the other instances");
    }
    respond::empty(StatusCode::ACCEPTED)
}

/// A request's params as JSON, or the error that says they are not.
fn params_of(request: &Request) -> Result<Option<Value>, HttpResponse> {
    match request.params().map(serde_json::from_str::<Value>) {
        None => Ok(None),
        Some(Ok(params)) => Ok(Some(params)),
        Some(Err(_)) => {
            let error = ErrorObject::invalid_params("Invalid params");
            Err(legacy_reply(Reply::error(Some(&request.id), &error)))
        }
    }
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
            modern: is_modern_meta(message.params.and_then(|p| p.meta).map(|m| m.get())),
        },
        Err(_) => Probe {
            initialize: false,
            modern: false,
        },
    }
}

fn initialize(
    legacy: &LegacyHttp,
    endpoint: &Endpoint,
    id: &RequestId,
    params: Option<&Value>,
    client: Option<IpAddr>,
) -> HttpResponse {
    let negotiated = match Negotiated::from_initialize(params) {
        Ok(negotiated) => negotiated,
        Err(error) => return legacy_error(Some(id), &error),
    };
    let result = legacy.offer.initialize_result(&negotiated);
    let token = SessionToken::new(negotiated);
    let keys = endpoint.dispatcher().state_keys();
    let Some(session_id) = token
        .seal(keys)
        .and_then(|s| HeaderValue::from_str(&s).ok())
    else {
        return legacy_error(Some(id), &ErrorObject::internal_error());
    };
    if !legacy.tables.start(&token, client) {
        let busy = ErrorObject::new(
            crate::protocol::error_code::SERVER_BUSY,
            "Server busy: this client holds its share of the sessions this server keeps; end some (DELETE) or retry later",
        );
        let mut response = legacy_error(Some(id), &busy);
        *response.status_mut() = StatusCode::SERVICE_UNAVAILABLE;
        return response;
    }
    tracing::debug!(version = %token.negotiated.version, "legacy session started");
    let mut response = legacy_reply(Reply::result(id, result.to_string().as_bytes()));
    response.headers_mut().insert(SESSION_ID, session_id);
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

    #[test]
    fn the_era_is_decided_by_headers_then_body() {
        let initialize = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#;
        let modern = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#;
        let call = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#;
        let era = EraMarks::read;
        assert_eq!(era(Some("2026-07-28"), Some("s")), EraMarks::NotLegacy);
        assert_eq!(era(Some("2025-11-25"), None), EraMarks::Legacy);
        assert_eq!(era(None, Some("s")), EraMarks::Legacy);
        assert_eq!(era(Some("1999-01-01"), None), EraMarks::NotLegacy);
        assert_eq!(era(None, None), EraMarks::Unmarked);
        for body in [initialize, modern, call] {
            assert!(!claims(EraMarks::NotLegacy, body));
        }
        assert!(claims(EraMarks::Legacy, call));
        assert!(!claims(EraMarks::Legacy, modern), "modern `_meta` wins");
        assert!(claims(EraMarks::Unmarked, initialize));
        assert!(!claims(EraMarks::Unmarked, call));
    }
}

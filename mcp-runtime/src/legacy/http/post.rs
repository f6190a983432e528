//! A POST in the legacy era: the era decision, `initialize`, the client's
//! answers and notifications, and a session's requests.

use std::net::SocketAddr;
use std::sync::Arc;

use bytestring::ByteString;
use http::request::Parts;
use http::{HeaderValue, StatusCode};
use serde_json::Value;
use tokio::sync::OwnedSemaphorePermit;
use tokio_util::sync::CancellationToken;

use super::respond::{
    answer, json_error, json_reply, missing_session, rate_limited, session_not_found, status,
};
use super::{HttpResponse, Local, SESSION_ID, VERSION_HEADER, header, locked};
use crate::dispatch::Reply;
use crate::dispatch::envelope::{self, Incoming, Notification};
use crate::legacy::session::{Negotiated, SharedLive};
use crate::legacy::session_id::SessionToken;
use crate::legacy::{LEGACY_VERSIONS, is_legacy_version, is_modern_meta};
use crate::protocol::{ErrorObject, PROTOCOL_VERSION, RequestId};
use crate::transport::http::HttpRequest;
use crate::transport::http::pipeline::Shared;
use crate::transport::http::pipeline::authorize;

/// What a POST's headers say about its era, read with the endpoint's
/// other headers (before authorization edits them).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum EraMarks {
    /// The modern `MCP-Protocol-Version`, or one of no era (which the
    /// modern path refuses): never legacy.
    NotLegacy,
    /// A legacy `MCP-Protocol-Version`, or an `Mcp-Session-Id`.
    Legacy,
    /// No version header and no session.
    Unmarked,
}

impl EraMarks {
    pub(crate) fn read(version: Option<&str>, session_id: Option<&str>) -> EraMarks {
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
pub(crate) fn claims(marks: EraMarks, body: &str) -> bool {
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
pub(crate) async fn post(
    shared: &Arc<Shared>,
    mut parts: Parts,
    body: ByteString,
    sse: bool,
    permit: OwnedSemaphorePermit,
    peer: Option<SocketAddr>,
) -> HttpResponse {
    let version = header(&parts, VERSION_HEADER);
    let session = header(&parts, SESSION_ID);
    let legacy_header = version.is_some_and(is_legacy_version);
    if let Some(version) = version
        && !legacy_header
    {
        return json_error(
            StatusCode::BAD_REQUEST,
            None,
            &ErrorObject::invalid_request(format!(
                "unsupported MCP-Protocol-Version '{version}'; this server speaks {}",
                LEGACY_VERSIONS.join(", ")
            )),
        );
    }
    let legacy = &shared.legacy;
    let session = match session {
        None => None,
        Some(id) => match legacy.session(shared, id) {
            Ok(session) => Some(session),
            Err(()) => return session_not_found(),
        },
    };
    if let (Some(version), Some((token, _))) = (version, &session)
        && version != token.negotiated.version
    {
        return json_error(
            StatusCode::BAD_REQUEST,
            None,
            &ErrorObject::invalid_request(format!(
                "MCP-Protocol-Version '{version}' is not the version this session negotiated ('{}')",
                token.negotiated.version
            )),
        );
    }
    // The client's answer to one of our requests.
    if let Ok(message) = serde_json::from_str::<Value>(&body)
        && message.get("method").is_none()
        && (message.get("result").is_some() || message.get("error").is_some())
    {
        if let Err(response) = authorize(shared, &mut parts, None).await {
            return response;
        }
        let Some((token, _)) = &session else {
            return missing_session();
        };
        if !legacy.pending.resolve(&token.nonce, &message) {
            tracing::debug!("a response to no request waiting on this instance");
        }
        return status(StatusCode::ACCEPTED);
    }
    let request = match envelope::parse(body) {
        Err(rejection) => {
            return json_error(
                StatusCode::BAD_REQUEST,
                rejection.id.as_ref(),
                &rejection.error,
            );
        }
        Ok(Incoming::Notification(notification)) => {
            if let Err(response) = authorize(shared, &mut parts, None).await {
                return response;
            }
            // The client gave up on one of its requests: stop its handler
            // and close its stream (no response is due).
            if let (Notification::Cancelled(id), Some((token, _))) = (notification, &session) {
                let key = (token.nonce.clone(), id);
                if let Some(cancel) = locked(&legacy.running).get(&key) {
                    cancel.cancel();
                }
            }
            return status(StatusCode::ACCEPTED);
        }
        Ok(Incoming::Request(request)) => request,
    };
    if let Err(response) = authorize(shared, &mut parts, Some(&request)).await {
        return response;
    }
    let params = match request.params().map(serde_json::from_str::<Value>) {
        None => None,
        Some(Ok(params)) => Some(params),
        Some(Err(_)) => {
            let error = ErrorObject::invalid_params("Invalid params");
            return json_reply(&Reply::error(Some(&request.id), &error));
        }
    };
    let method = request.method.as_str().to_owned();
    let Some((token, local)) = session else {
        if method == "initialize" {
            return initialize(shared, &request.id, params.as_ref());
        }
        return missing_session();
    };
    // Tool calls are rate limited per client address, as in the modern era.
    if method == "tools/call"
        && let Some((limiter, peer)) = shared.limiter.as_ref().zip(peer)
        && let Err(wait) = limiter.check(&peer.ip().to_string())
    {
        return rate_limited(&request.id, wait);
    }
    let http = Arc::new(HttpRequest::new(parts, peer));
    answer(
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
    .await
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

//! Answering a session's request, with the HTTP transport's response kit:
//! JSON, or SSE once anything must reach the client first (a notification,
//! or a request of the bridge); and the legacy transport's own refusals.

use std::sync::Arc;

use crate::transport::http::slot::Slot;
use http::StatusCode;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::{LegacyHttp, Local, Refusal, Running, locked};
use crate::context::Outbox;
use crate::dispatch::Reply;
use crate::legacy::adapter::Call;
use crate::legacy::bridge::{ANSWER_TIMEOUT, Peer};
use crate::legacy::session::lock;
use crate::legacy::session_id::SessionToken;
use crate::legacy::shared::{SessionShare, changes};
use crate::protocol::{ErrorObject, RequestId};
use crate::source::RequestSource;
use crate::transport::http::endpoint::Endpoint;
use crate::transport::http::queue::NoteQueue;
use crate::transport::http::respond::{self, HttpResponse, Statuses};

/// 200 whatever the JSON-RPC outcome, as clients of the session-based
/// revisions expect: they read errors from the body.
const LEGACY_STATUSES: Statuses = Statuses {
    errors_as_200: true,
};
use crate::transport::http::stream::{Responding, Streaming, respond};

/// The session a request belongs to, and what the endpoint gave it.
pub(super) struct Session {
    pub(super) token: SessionToken,
    pub(super) local: Arc<Local>,
    /// Whether the client accepts SSE (without it, nothing can be asked).
    pub(super) sse: bool,
    pub(super) permit: Slot,
}

/// Runs a session's request through the adapter, and answers as the
/// modern endpoint does, with legacy statuses; `notifications/cancelled`
/// for it stops it.
pub(super) async fn answer(
    legacy: &LegacyHttp,
    endpoint: &Arc<Endpoint>,
    session: Session,
    id: RequestId,
    method: String,
    params: Option<Value>,
    source: RequestSource,
) -> HttpResponse {
    let Session {
        token,
        local,
        sse,
        permit,
    } = session;
    let cancelled = CancellationToken::new();
    let key = (token.nonce.clone(), id.clone());
    locked(&legacy.tables.running).insert(key.clone(), cancelled.clone());
    let queue = Arc::new(NoteQueue::default());
    let deadline = endpoint.options.request_timeout;
    let running = Box::pin({
        let (endpoint, outbox, id) = (endpoint.clone(), Outbox::new(queue.clone()), id.clone());
        let offer = legacy.offer.clone();
        let pending = legacy.tables.pending.clone();
        let table = legacy.tables.running.clone();
        let share = legacy.share.clone().filter(|_| changes_settings(&method));
        async move {
            let _running = Running { table: &table, key };
            let before = share.as_ref().map(|_| lock(&local.live).clone());
            let call = Call {
                dispatcher: endpoint.dispatcher(),
                offer: &offer,
                negotiated: &token.negotiated,
                live: &local.live,
                peer: Peer {
                    outbox,
                    pending: &pending,
                    session: &token.nonce,
                    can_ask: sse,
                    timeout: ANSWER_TIMEOUT.min(deadline),
                    stop: endpoint.shutdown().clone(),
                },
                shutdown: endpoint.shutdown(),
                source,
            };
            let reply = call.answer(&id, &method, params).await;
            match (share, before) {
                (Some(share), Some(before)) => {
                    let after = lock(&local.live).clone();
                    share_settings(&*share, &token, &before, &after, &id, reply).await
                }
                _ => reply,
            }
        }
    });
    let streaming = Streaming {
        sse,
        deadline: Some(deadline),
        keep_alive: None,
        statuses: LEGACY_STATUSES,
        cancelled: Some(cancelled),
        permit,
    };
    match respond(id, running, queue, streaming, endpoint.metrics()) {
        Responding::Finished(response) => response,
        Responding::Running(running) => running.await,
    }
}

/// Whether `method` changes a session's settings.
fn changes_settings(method: &str) -> bool {
    matches!(
        method,
        "logging/setLevel" | "resources/subscribe" | "resources/unsubscribe"
    )
}

/// Records what a request changed of its session's settings for every
/// instance; when that fails the client is told to retry (its next request
/// reads the shared settings again, so nothing half-done stays).
async fn share_settings(
    share: &dyn SessionShare,
    token: &SessionToken,
    before: &crate::legacy::session::Live,
    after: &crate::legacy::session::Live,
    id: &RequestId,
    reply: Reply,
) -> Reply {
    for setting in changes(before, after) {
        if let Err(error) = share.save(&token.nonce, setting, token.expires).await {
            tracing::warn!(%error, "a legacy session's settings could not be shared");
            return Reply::error(Some(id), &share_unavailable());
        }
    }
    reply
}

/// A JSON-RPC answer: HTTP 200 whatever it says, as legacy clients expect
/// (they read JSON-RPC errors from the body, not from the status).
pub(super) fn legacy_reply(reply: Reply) -> HttpResponse {
    respond::reply(reply, LEGACY_STATUSES)
}

/// A JSON-RPC error, with HTTP 200.
pub(super) fn legacy_error(id: Option<&RequestId>, error: &ErrorObject) -> HttpResponse {
    legacy_reply(Reply::error(id, error))
}

/// The answer for a session that cannot be served.
pub(super) fn refused(refusal: &Refusal, metrics: &crate::metrics::Metrics) -> HttpResponse {
    match refusal {
        Refusal::NotFound => session_not_found(),
        Refusal::Unavailable(reason) => {
            tracing::warn!(%reason, "a legacy session's shared state cannot be reached");
            respond::counted(
                Reply::error(None, &share_unavailable()),
                respond::Statuses::MODERN,
                metrics,
            )
        }
    }
}

/// The error for a session whose shared part cannot be read or written
/// now (a 503 with `Retry-After` on its own; in a response body, the
/// JSON-RPC error).
fn share_unavailable() -> ErrorObject {
    ErrorObject::new(
        crate::protocol::error_code::SERVER_BUSY,
        "this session's shared state cannot be reached now; retry shortly",
    )
}

pub(super) fn session_not_found() -> HttpResponse {
    respond::error(
        StatusCode::NOT_FOUND,
        None,
        &ErrorObject::new(
            -32001,
            "Session not found: it expired or was ended; initialize a new one",
        ),
    )
}

pub(super) fn missing_session() -> HttpResponse {
    respond::error(
        StatusCode::BAD_REQUEST,
        None,
        &ErrorObject::invalid_request(
            "Bad Request: no Mcp-Session-Id; send initialize first and then the session id it returns",
        ),
    )
}

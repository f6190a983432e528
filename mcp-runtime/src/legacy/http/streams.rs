//! A session's GET notification stream, and DELETE.

use std::net::SocketAddr;
use std::sync::Arc;

use crate::transport::http::slot::Slot;
use http::request::Parts;
use http::{Method as HttpMethod, StatusCode};
use tokio::sync::broadcast::error::RecvError;
use tokio::sync::mpsc;

use super::respond::refused;
use super::{LegacyHttp, Local, SESSION_ID, header};
use crate::changes::Change;
use crate::legacy::adapter::Offer;
use crate::legacy::notify;
use crate::legacy::session::lock;
use crate::legacy::shared::SessionShare;
use crate::transport::http::endpoint::Endpoint;
use crate::transport::http::respond::{self, HttpResponse, KEEP_ALIVE, event};

/// GET and DELETE with an `Mcp-Session-Id`; `None` leaves the request to
/// the modern transport (which answers 405).
pub(super) async fn other_method(
    legacy: &LegacyHttp,
    endpoint: &Arc<Endpoint>,
    parts: &Parts,
    peer: Option<SocketAddr>,
) -> Option<HttpResponse> {
    let id = header(parts, SESSION_ID)?;
    if parts.method == HttpMethod::DELETE {
        return Some(end(legacy, endpoint, id).await);
    }
    if parts.method != HttpMethod::GET {
        return None;
    }
    let (token, local) = match legacy.session(endpoint, id).await {
        Ok(session) => session,
        Err(refusal) => return Some(refused(&refusal, endpoint.metrics())),
    };
    if !header(parts, http::header::ACCEPT).is_some_and(|a| a.contains("text/event-stream")) {
        return Some(respond::plain(
            StatusCode::NOT_ACCEPTABLE,
            "the notification stream is text/event-stream: accept it",
        ));
    }
    let permit = match endpoint.stream_permit(peer) {
        Ok(permit) => permit,
        Err(busy) => return Some(busy),
    };
    let watch = Watch {
        offer: legacy.offer.clone(),
        local,
        share: legacy.share.clone(),
        nonce: token.nonce,
    };
    Some(notification_stream(endpoint.clone(), watch, permit))
}

/// DELETE: the session ends on every instance (with a shared store) or on
/// this one.
async fn end(legacy: &LegacyHttp, endpoint: &Endpoint, id: &str) -> HttpResponse {
    let token = match legacy.session(endpoint, id).await {
        Ok((token, _)) => token,
        Err(refusal) => return refused(&refusal, endpoint.metrics()),
    };
    if let Some(share) = &legacy.share
        && let Err(error) = share.end(&token.nonce, token.expires).await
    {
        return refused(&super::Refusal::Unavailable(error.0), endpoint.metrics());
    }
    legacy.tables.end_here(&token.nonce, token.expires);
    tracing::debug!("legacy session ended by DELETE");
    respond::empty(StatusCode::OK)
}

/// What a session's notification stream filters changes with.
struct Watch {
    offer: Arc<Offer>,
    local: Arc<Local>,
    /// With a shared store, subscriptions made on other instances count:
    /// they are read again when a resource changes.
    share: Option<Arc<dyn SessionShare>>,
    nonce: String,
}

impl Watch {
    /// The frame a change means for this session, if any; `Err` when the
    /// subscriptions cannot be read: the stream then ends, rather than
    /// drop an update silently, and the client opens it again.
    async fn frame(&self, change: &Change) -> Result<Option<bytes::Bytes>, ()> {
        if let (Change::ResourceUpdated(_), Some(share)) = (change, &self.share) {
            match share.load(&self.nonce).await {
                Ok(Some(live)) => *lock(&self.local.live) = live,
                Ok(None) => return Err(()),
                Err(error) => {
                    tracing::warn!(%error, "a legacy session's subscriptions cannot be read: its stream ends");
                    return Err(());
                }
            }
        }
        Ok(notify::frame(change, &self.offer, &self.local.live))
    }
}

/// The standalone SSE stream of a session: list changes and updates of
/// subscribed resources, until DELETE, shutdown or the client leaves.
fn notification_stream(endpoint: Arc<Endpoint>, watch: Watch, permit: Slot) -> HttpResponse {
    let (events, stream) = mpsc::channel(64);
    let mut changes = endpoint.dispatcher().changes().subscribe();
    tokio::task::spawn_local(async move {
        let _permit = permit;
        let every = endpoint.options.keep_alive;
        let mut ticks = tokio::time::interval_at(tokio::time::Instant::now() + every, every);
        loop {
            let frame = tokio::select! {
                () = watch.local.closed.cancelled() => break,
                () = endpoint.shutdown().cancelled() => break,
                () = events.closed() => break,
                _ = ticks.tick() => Some(KEEP_ALIVE),
                change = changes.recv() => match change {
                    // Changes may have been missed: the stream ends, and the
                    // client opens it again.
                    Ok(Change::Interrupted) => break,
                    Ok(change) => match watch.frame(&change).await {
                        Ok(frame) => frame.map(|f| event(&f)),
                        Err(()) => break,
                    },
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
    respond::sse(stream)
}

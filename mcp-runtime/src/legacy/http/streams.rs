//! A session's GET notification stream, and DELETE.

use std::sync::Arc;

use http::request::Parts;
use http::{Method as HttpMethod, StatusCode};
use tokio::sync::OwnedSemaphorePermit;
use tokio::sync::broadcast::error::RecvError;
use tokio::sync::mpsc;

use super::respond::session_not_found;
use super::{LegacyHttp, Local, SESSION_ID, header, locked};
use crate::legacy::adapter::Offer;
use crate::legacy::notify;
use crate::transport::http::endpoint::Endpoint;
use crate::transport::http::respond::{self, HttpResponse, KEEP_ALIVE, event};

/// GET and DELETE with an `Mcp-Session-Id`; `None` leaves the request to
/// the modern transport (which answers 405).
pub(super) fn other_method(
    legacy: &LegacyHttp,
    endpoint: &Arc<Endpoint>,
    parts: &Parts,
) -> Option<HttpResponse> {
    let id = header(parts, SESSION_ID)?;
    if parts.method == HttpMethod::DELETE {
        let Ok((token, local)) = legacy.session(endpoint, id) else {
            return Some(session_not_found());
        };
        local.closed.cancel();
        locked(&legacy.sessions).remove(&token.nonce);
        locked(&legacy.ended).insert(token.nonce, token.expires);
        tracing::debug!("legacy session ended by DELETE");
        return Some(respond::empty(StatusCode::OK));
    }
    if parts.method != HttpMethod::GET {
        return None;
    }
    let Ok((_, local)) = legacy.session(endpoint, id) else {
        return Some(session_not_found());
    };
    if !header(parts, http::header::ACCEPT).is_some_and(|a| a.contains("text/event-stream")) {
        return Some(respond::plain(
            StatusCode::NOT_ACCEPTABLE,
            "the notification stream is text/event-stream: accept it",
        ));
    }
    let permit = match endpoint.stream_permit() {
        Ok(permit) => permit,
        Err(busy) => return Some(busy),
    };
    let offer = legacy.offer.clone();
    Some(notification_stream(endpoint.clone(), offer, local, permit))
}

/// The standalone SSE stream of a session: list changes and updates of
/// subscribed resources, until DELETE, shutdown or the client leaves.
fn notification_stream(
    endpoint: Arc<Endpoint>,
    offer: Arc<Offer>,
    local: Arc<Local>,
    permit: OwnedSemaphorePermit,
) -> HttpResponse {
    let (events, stream) = mpsc::channel(64);
    let mut changes = endpoint.dispatcher().changes().subscribe();
    tokio::task::spawn_local(async move {
        let _permit = permit;
        let every = endpoint.options.keep_alive;
        let mut ticks = tokio::time::interval_at(tokio::time::Instant::now() + every, every);
        loop {
            let frame = tokio::select! {
                () = local.closed.cancelled() => break,
                () = endpoint.shutdown().cancelled() => break,
                () = events.closed() => break,
                _ = ticks.tick() => Some(KEEP_ALIVE),
                change = changes.recv() => match change {
                    Ok(change) => notify::frame(&change, &offer, &local.live).map(|f| event(&f)),
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

//! A session's GET notification stream, and DELETE.

use std::sync::Arc;

use bytes::Bytes;
use http::request::Parts;
use http::{Method as HttpMethod, StatusCode};
use tokio::sync::OwnedSemaphorePermit;
use tokio::sync::broadcast::error::RecvError;
use tokio::sync::mpsc;

use super::respond::{event, plain, session_not_found, status};
use super::{HttpResponse, Local, SESSION_ID, header, locked};
use crate::legacy::notify;
use crate::transport::http::pipeline::Shared;

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
    if !header(parts, http::header::ACCEPT).is_some_and(|a| a.contains("text/event-stream")) {
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

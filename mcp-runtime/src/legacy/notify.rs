//! Server notifications for a legacy session: list changes the server
//! advertised, and updates of the resources the client subscribed to.
//! (Modern clients get the same changes through `subscriptions/listen`.)

use bytes::Bytes;
use serde_json::{Value, json};
use tokio::sync::broadcast::{self, error::RecvError};
use tokio_util::sync::CancellationToken;

use super::adapter::Offer;
use super::session::{SharedLive, lock};
use crate::changes::Change;

/// The notification a change means for this session, if any.
pub(crate) fn frame(change: &Change, offer: &Offer, live: &SharedLive) -> Option<Bytes> {
    let advertised = |capability: &str| {
        offer
            .capabilities
            .get(capability)
            .and_then(|c| c.get("listChanged"))
            == Some(&Value::Bool(true))
    };
    let message = match change {
        Change::ToolsListChanged if advertised("tools") => {
            json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
        }
        Change::PromptsListChanged if advertised("prompts") => {
            json!({"jsonrpc": "2.0", "method": "notifications/prompts/list_changed"})
        }
        Change::ResourcesListChanged if advertised("resources") => {
            json!({"jsonrpc": "2.0", "method": "notifications/resources/list_changed"})
        }
        Change::ResourceUpdated(uri) if lock(live).subscriptions.contains(uri) => json!({
            "jsonrpc": "2.0",
            "method": "notifications/resources/updated",
            "params": {"uri": uri}
        }),
        _ => return None,
    };
    Some(Bytes::from(message.to_string()))
}

/// Forwards changes to `send` until it fails or `stop` is cancelled.
pub(crate) async fn forward(
    mut changes: broadcast::Receiver<Change>,
    offer: Offer,
    live: SharedLive,
    send: impl Fn(Bytes) -> bool,
    stop: CancellationToken,
) {
    loop {
        let change = tokio::select! {
            () = stop.cancelled() => return,
            change = changes.recv() => change,
        };
        match change {
            Ok(change) => {
                if let Some(frame) = frame(&change, &offer, &live)
                    && !send(frame)
                {
                    return;
                }
            }
            // Changes were missed: the lists may all have changed.
            Err(RecvError::Lagged(_)) => {
                for change in [
                    Change::ToolsListChanged,
                    Change::PromptsListChanged,
                    Change::ResourcesListChanged,
                ] {
                    if let Some(frame) = frame(&change, &offer, &live)
                        && !send(frame)
                    {
                        return;
                    }
                }
            }
            Err(RecvError::Closed) => return,
        }
    }
}

//! What the instances of one server share of a legacy HTTP session, so
//! that none of it needs sticky routing: the client's log level and
//! resource subscriptions, whether it was ended (DELETE), and messages for
//! the instance a request of the session runs on (the client's answer to
//! a server-to-client request, `notifications/cancelled`).
//!
//! The session itself needs nothing shared: it travels sealed in its id.
//! Without a [`SessionShare`] (a single instance) all of this stays in the
//! instance's memory, as it always did.

use std::fmt;
use std::future::Future;
use std::pin::Pin;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::session::Live;
use crate::protocol::{LogLevel, RequestId};

/// The answer of a [`SessionShare`] operation.
pub type ShareFuture<'a, T> =
    Pin<Box<dyn Future<Output = Result<T, ShareUnavailable>> + Send + 'a>>;

/// The shared store cannot be reached now: the request that needed it is
/// refused with a retryable error, never served from a stale view.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShareUnavailable(pub String);

impl fmt::Display for ShareUnavailable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// One change a client made to its session's settings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Setting {
    /// `logging/setLevel`.
    Level(LogLevel),
    /// `resources/subscribe` (`true`) or `resources/unsubscribe`.
    Subscribed(String, bool),
}

/// A message for the instances that hold a part of a session.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "k", rename_all = "lowercase")]
pub enum Forwarded {
    /// The client's answer to a server-to-client request, for the instance
    /// whose request waits for it.
    Answer {
        /// The client's JSON-RPC response.
        #[serde(rename = "m")]
        message: Value,
    },
    /// `notifications/cancelled`, for the instance running that request.
    Cancelled {
        /// The request to stop.
        id: RequestId,
    },
    /// The session was ended: its streams close everywhere.
    Ended,
}

/// Receives what other instances forward: `false` once the receiver is
/// gone (it is then dropped).
pub type Receiver = Box<dyn Fn(&str, Forwarded) -> bool + Send + Sync>;

/// The shared part of legacy sessions, keyed by a session's nonce (from its
/// sealed id, so never chosen by the client). `expires` is the session's
/// own expiry (Unix seconds): what is stored for it goes with it.
pub trait SessionShare: Send + Sync + fmt::Debug {
    /// The session's settings, or `None` once it was ended on any instance.
    fn load<'a>(&'a self, nonce: &'a str) -> ShareFuture<'a, Option<Live>>;

    /// Records one change of the session's settings.
    fn save<'a>(&'a self, nonce: &'a str, setting: Setting, expires: u64) -> ShareFuture<'a, ()>;

    /// Ends the session everywhere, and tells the other instances.
    fn end<'a>(&'a self, nonce: &'a str, expires: u64) -> ShareFuture<'a, ()>;

    /// Hands `message` to the other instances.
    fn forward<'a>(&'a self, nonce: &'a str, message: Forwarded) -> ShareFuture<'a, ()>;

    /// Where messages from the other instances go.
    fn receive(&self, receiver: Receiver);
}

/// The settings changes between two views of a session's live part.
pub(crate) fn changes(before: &Live, after: &Live) -> Vec<Setting> {
    let mut changes = Vec::new();
    if let Some(level) = after
        .log_level
        .filter(|level| before.log_level != Some(*level))
    {
        changes.push(Setting::Level(level));
    }
    for uri in after.subscriptions.difference(&before.subscriptions) {
        changes.push(Setting::Subscribed(uri.clone(), true));
    }
    for uri in before.subscriptions.difference(&after.subscriptions) {
        changes.push(Setting::Subscribed(uri.clone(), false));
    }
    changes
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn changes_are_what_differs() {
        let before = Live {
            log_level: Some(LogLevel::Info),
            subscriptions: ["a".to_owned(), "b".to_owned()].into(),
        };
        let after = Live {
            log_level: Some(LogLevel::Debug),
            subscriptions: ["b".to_owned(), "c".to_owned()].into(),
        };
        assert_eq!(
            changes(&before, &after),
            [
                Setting::Level(LogLevel::Debug),
                Setting::Subscribed("c".into(), true),
                Setting::Subscribed("a".into(), false),
            ]
        );
        assert!(changes(&after, &after).is_empty());
    }

    #[test]
    fn forwarded_messages_have_a_compact_wire() {
        let answer = Forwarded::Answer {
            message: json!({"id": "x", "result": {}}),
        };
        let wire = serde_json::to_value(&answer).unwrap();
        assert_eq!(wire, json!({"k": "answer", "m": {"id": "x", "result": {}}}));
        assert_eq!(serde_json::from_value::<Forwarded>(wire).unwrap(), answer);
        let cancelled = Forwarded::Cancelled {
            id: RequestId::Number(3),
        };
        assert_eq!(
            serde_json::to_value(&cancelled).unwrap(),
            json!({"k": "cancelled", "id": 3})
        );
        assert_eq!(
            serde_json::to_value(Forwarded::Ended).unwrap(),
            json!({"k": "ended"})
        );
    }
}

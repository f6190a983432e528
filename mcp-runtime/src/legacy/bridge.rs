//! Server-to-client requests for legacy clients: the asks a handler makes
//! (elicitation, sampling, roots) become real `elicitation/create`,
//! `sampling/createMessage` and `roots/list` requests, and the client's
//! responses are routed back to the request that is waiting for them.

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use serde::Deserialize;
use serde_json::Value;
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use crate::context::Outbox;
use crate::protocol::{ErrorObject, RequestId};

/// How long a server-to-client request may wait for its answer (a user
/// filling in a form is slow).
pub(crate) const ANSWER_TIMEOUT: Duration = Duration::from_secs(300);

type Waiter = oneshot::Sender<Result<Value, ErrorObject>>;

/// Server-to-client requests waiting for their answers, by id. One per
/// server (HTTP: shared by every worker; answers may arrive on any
/// connection), keyed also by the session they belong to so that one
/// session cannot answer another's questions.
#[derive(Debug)]
pub(crate) struct Pending {
    /// A per-process prefix, so that ids never repeat across restarts.
    prefix: String,
    next: AtomicU64,
    waiting: Mutex<HashMap<String, (String, Waiter)>>,
}

impl Default for Pending {
    fn default() -> Self {
        let mut random = [0u8; 6];
        // `RandomState` is seeded from the OS: good enough for an id prefix,
        // which only has to differ between processes.
        for (i, byte) in random.iter_mut().enumerate() {
            use std::hash::{BuildHasher, Hasher};
            let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
            hasher.write_usize(i);
            *byte = hasher.finish() as u8;
        }
        Pending {
            prefix: random.iter().map(|b| format!("{b:02x}")).collect(),
            next: AtomicU64::new(1),
            waiting: Mutex::default(),
        }
    }
}

/// A JSON-RPC response from the client.
#[derive(Deserialize)]
struct Response {
    id: RequestId,
    #[serde(default)]
    result: Option<Value>,
    #[serde(default)]
    error: Option<ErrorObject>,
}

impl Pending {
    fn waiting(&self) -> std::sync::MutexGuard<'_, HashMap<String, (String, Waiter)>> {
        self.waiting
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Hands a client's response to the request waiting for it. `false`
    /// when the message is not a response, or nobody of `session` waits
    /// for it (it came too late, or belongs to another instance).
    pub(crate) fn resolve(&self, session: &str, message: &Value) -> bool {
        let Ok(response) = serde_json::from_value::<Response>(message.clone()) else {
            return false;
        };
        let RequestId::String(id) = &response.id else {
            return false;
        };
        let mut waiting = self.waiting();
        match waiting.get(&**id) {
            Some((owner, _)) if owner == session => {}
            _ => return false,
        }
        let Some((_, waiter)) = waiting.remove(&**id) else {
            return false;
        };
        drop(waiting);
        let outcome = match (response.result, response.error) {
            (_, Some(error)) => Err(error),
            (Some(result), None) => Ok(result),
            (None, None) => Err(ErrorObject::invalid_request(
                "the client's response has neither `result` nor `error`",
            )),
        };
        let _ = waiter.send(outcome);
        true
    }
}

/// Removes a request's entry however its wait ends (answered, timed out,
/// or the waiting request was cancelled).
struct Registration<'a> {
    pending: &'a Pending,
    id: String,
}

impl Drop for Registration<'_> {
    fn drop(&mut self) {
        self.pending.waiting().remove(&self.id);
    }
}

/// The way back to one legacy client, for one of its requests: frames go
/// to `outbox` (stdout, or the request's SSE stream).
#[derive(Debug, Clone)]
pub(crate) struct Peer<'a> {
    pub(crate) outbox: Outbox,
    pub(crate) pending: &'a Pending,
    /// The session the answers must come from (empty on stdio).
    pub(crate) session: &'a str,
    /// Whether this client can receive requests at all (an HTTP client that
    /// does not accept SSE cannot).
    pub(crate) can_ask: bool,
    pub(crate) timeout: Duration,
    /// Cancelled when no answer can come any more (end of stdin, server
    /// shutdown).
    pub(crate) stop: CancellationToken,
}

impl Peer<'_> {
    /// Sends a request to the client and waits for its answer.
    pub(crate) async fn request(
        &self,
        method: &str,
        params: Option<Value>,
    ) -> Result<Value, ErrorObject> {
        if !self.can_ask {
            return Err(ErrorObject::invalid_request(format!(
                "this request needs `{method}` from the client, which needs a response stream: accept text/event-stream"
            )));
        }
        let id = format!(
            "{}-{}",
            self.pending.prefix,
            self.pending.next.fetch_add(1, Ordering::Relaxed)
        );
        let (sender, answer) = oneshot::channel();
        self.pending
            .waiting()
            .insert(id.clone(), (self.session.to_owned(), sender));
        let _registration = Registration {
            pending: self.pending,
            id: id.clone(),
        };
        let mut frame = serde_json::json!({"jsonrpc": "2.0", "id": id, "method": method});
        if let Some(params) = params {
            frame["params"] = params;
        }
        let frame = serde_json::to_vec(&frame).map_err(|_| ErrorObject::internal_error())?;
        // A client that is gone cannot answer: the wait ends when the
        // request is dropped, at `stop`, or at the timeout.
        self.outbox.send(frame);
        let answer = tokio::select! {
            answer = tokio::time::timeout(self.timeout, answer) => answer,
            () = self.stop.cancelled() => {
                return Err(ErrorObject::internal_error().with_data(serde_json::json!({
                    "reason": format!("the connection closed while waiting for {method}")
                })));
            }
        };
        match answer {
            Ok(Ok(Ok(result))) => Ok(result),
            Ok(Ok(Err(error))) => Err(ErrorObject::new(
                crate::protocol::error_code::INTERNAL_ERROR,
                format!(
                    "The client answered {method} with an error ({}): {}",
                    error.code, error.message
                ),
            )),
            Ok(Err(_)) => Err(ErrorObject::internal_error()),
            Err(_) => {
                self.cancel(&id, method);
                Err(ErrorObject::new(
                    crate::protocol::error_code::REQUEST_TIMEOUT,
                    format!(
                        "The client did not answer {method} within {} s",
                        self.timeout.as_secs()
                    ),
                ))
            }
        }
    }

    /// Tells the client to stop working on a request nobody waits for.
    fn cancel(&self, id: &str, method: &str) {
        let frame = serde_json::json!({
            "jsonrpc": "2.0",
            "method": "notifications/cancelled",
            "params": {"requestId": id, "reason": format!("{method} timed out")}
        });
        if let Ok(frame) = serde_json::to_vec(&frame) {
            self.outbox.send(frame);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[tokio::test]
    async fn answers_reach_their_request_and_only_from_their_session() {
        let pending = Pending::default();
        let (outbox, mut sent) = tokio::sync::mpsc::unbounded_channel();
        let peer = Peer {
            outbox: Outbox::channel(outbox),
            pending: &pending,
            session: "s1",
            can_ask: true,
            timeout: Duration::from_secs(5),
            stop: CancellationToken::new(),
        };
        let ask = peer.request("roots/list", None);
        let answer = async {
            let frame: Value = serde_json::from_slice(&sent.recv().await.unwrap()).unwrap();
            assert_eq!(frame["method"], "roots/list");
            assert!(frame.get("params").is_none());
            let id = frame["id"].clone();
            assert!(!pending.resolve("s2", &json!({"jsonrpc": "2.0", "id": id, "result": {}})));
            assert!(pending.resolve(
                "s1",
                &json!({"jsonrpc": "2.0", "id": id, "result": {"roots": []}})
            ));
        };
        let (result, ()) = tokio::join!(ask, answer);
        assert_eq!(result.unwrap(), json!({"roots": []}));
        assert!(pending.waiting().is_empty());
    }

    #[tokio::test]
    async fn unanswered_requests_time_out_and_are_cancelled() {
        let pending = Pending::default();
        let (outbox, mut sent) = tokio::sync::mpsc::unbounded_channel();
        let peer = Peer {
            outbox: Outbox::channel(outbox),
            pending: &pending,
            session: "",
            can_ask: true,
            timeout: Duration::from_millis(20),
            stop: CancellationToken::new(),
        };
        let error = peer.request("roots/list", None).await.unwrap_err();
        assert_eq!(error.code, crate::protocol::error_code::REQUEST_TIMEOUT);
        let _request = sent.recv().await.unwrap();
        let cancel: Value = serde_json::from_slice(&sent.recv().await.unwrap()).unwrap();
        assert_eq!(cancel["method"], "notifications/cancelled");
        assert!(pending.waiting().is_empty());
    }
}

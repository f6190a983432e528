//! What a [`TaskStore`](super::TaskStore) keeps: a task's record, the
//! writes its worker makes, the signals a client sends it, and the lease
//! that says which worker runs it. Every type here is serializable, so a
//! store may keep it anywhere (a database, Redis) and any instance may read
//! it.

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

/// Where a task is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskStatus {
    /// The work is running.
    Working,
    /// The work waits for answers to its `inputRequests`.
    InputRequired,
    /// The work finished with a result (a tool error included).
    Completed,
    /// The work failed with a JSON-RPC error.
    Failed,
    /// The work was cancelled.
    Cancelled,
}

impl TaskStatus {
    /// The status as the wire writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            TaskStatus::Working => "working",
            TaskStatus::InputRequired => "input_required",
            TaskStatus::Completed => "completed",
            TaskStatus::Failed => "failed",
            TaskStatus::Cancelled => "cancelled",
        }
    }

    /// Whether the task has ended (`completed`, `failed` or `cancelled`).
    pub fn is_terminal(self) -> bool {
        matches!(
            self,
            TaskStatus::Completed | TaskStatus::Failed | TaskStatus::Cancelled
        )
    }
}

/// How a task ended.
#[derive(Clone, Debug, Serialize, Deserialize)]
// Externally tagged: the payload is read straight from the map's value,
// which a `RawValue` needs (a tagged enum would buffer it first).
#[serde(rename_all = "snake_case")]
pub enum TaskOutcome {
    /// The request's result (for `tools/call`, a `CallToolResult`), as JSON
    /// text: stored and served without being parsed again.
    Completed(Box<RawValue>),
    /// The JSON-RPC error object the request failed with, as JSON text.
    Failed(Box<RawValue>),
    /// Cancelled by its client (or stopped by the server, when it could not
    /// go on).
    Cancelled,
}

impl PartialEq for TaskOutcome {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (TaskOutcome::Completed(a), TaskOutcome::Completed(b))
            | (TaskOutcome::Failed(a), TaskOutcome::Failed(b)) => a.get() == b.get(),
            (TaskOutcome::Cancelled, TaskOutcome::Cancelled) => true,
            _ => false,
        }
    }
}

impl TaskOutcome {
    /// The status this outcome gives its task.
    pub fn status(&self) -> TaskStatus {
        match self {
            TaskOutcome::Completed(_) => TaskStatus::Completed,
            TaskOutcome::Failed(_) => TaskStatus::Failed,
            TaskOutcome::Cancelled => TaskStatus::Cancelled,
        }
    }

    /// How many bytes it takes in a store.
    pub fn size(&self) -> usize {
        match self {
            TaskOutcome::Completed(json) | TaskOutcome::Failed(json) => json.get().len(),
            TaskOutcome::Cancelled => 0,
        }
    }
}

/// The last progress a task's handler reported.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct TaskProgress {
    /// How far along.
    pub progress: f64,
    /// Out of this much, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<f64>,
}

/// A worker's claim on a running task: only the worker holding the
/// current lease writes the task. It is renewed while the work runs; a task
/// whose lease runs out before it ends (its instance died) is reported as
/// failed rather than `working` forever.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Lease {
    /// The worker's identity (random per process).
    pub worker: String,
    /// When the lease runs out, in milliseconds since the Unix epoch.
    pub expires_at_ms: u64,
}

/// One task as a store keeps it.
///
/// Built by the runtime; stores keep, return and update it as the
/// [`TaskStore`](super::TaskStore) methods say.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct TaskRecord {
    /// The task's id: at least 128 random bits.
    pub id: String,
    /// Who may see and steer the task: the authenticated caller that
    /// created it, or the transport's local client.
    pub owner: String,
    /// Derived by the store from the other fields (see
    /// [`derive_status`](Self::derive_status)).
    pub status: TaskStatus,
    /// A message for people: the last progress message, or why it failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status_message: Option<String>,
    /// When it was created, in milliseconds since the Unix epoch.
    pub created_at_ms: u64,
    /// When its observable state last changed.
    pub last_updated_at_ms: u64,
    /// How long after creation it is kept.
    pub ttl_ms: u64,
    /// How often clients should poll.
    pub poll_interval_ms: u64,
    /// The last progress reported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub progress: Option<TaskProgress>,
    /// Requests to the client that wait for an answer, by key.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub input_requests: Map<String, Value>,
    /// Every key whose answer was delivered: keys are never used twice in
    /// a task, so a worker's write never brings an answered one back.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub answered: Vec<String>,
    /// Answers delivered by `tasks/update` that the worker has not taken
    /// yet, by key.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub mailbox: Map<String, Value>,
    /// Whether a client asked to cancel it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cancel_requested: bool,
    /// How it ended, once it has.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcome: Option<TaskOutcome>,
    /// The worker running it, until it ends.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lease: Option<Lease>,
}

impl TaskRecord {
    /// A new task, `working` from `now_ms` (the runtime makes them; a
    /// store's own tests may too).
    pub fn new(id: String, owner: String, now_ms: u64, ttl_ms: u64, poll_ms: u64) -> Self {
        TaskRecord {
            id,
            owner,
            status: TaskStatus::Working,
            status_message: None,
            created_at_ms: now_ms,
            last_updated_at_ms: now_ms,
            ttl_ms,
            poll_interval_ms: poll_ms,
            progress: None,
            input_requests: Map::new(),
            answered: Vec::new(),
            mailbox: Map::new(),
            cancel_requested: false,
            outcome: None,
            lease: None,
        }
    }

    /// When the task may be discarded, in milliseconds since the epoch.
    pub fn expires_at_ms(&self) -> u64 {
        self.created_at_ms.saturating_add(self.ttl_ms)
    }

    /// The status the other fields imply: the outcome's when it has ended,
    /// `input_required` while requests wait, else `working`.
    pub fn derive_status(&self) -> TaskStatus {
        match &self.outcome {
            Some(outcome) => outcome.status(),
            None if self.input_requests.is_empty() => TaskStatus::Working,
            None => TaskStatus::InputRequired,
        }
    }

    /// About how many bytes it takes in a store: what grows with use
    /// (the outcome, messages, requests and answers), not the fixed part.
    pub fn size(&self) -> usize {
        let json = |map: &Map<String, Value>| {
            map.iter()
                .map(|(k, v)| k.len() + v.to_string().len())
                .sum::<usize>()
        };
        256 + self.id.len()
            + self.owner.len()
            + self.status_message.as_ref().map_or(0, String::len)
            + self.outcome.as_ref().map_or(0, TaskOutcome::size)
            + json(&self.input_requests)
            + json(&self.mailbox)
            + self.answered.iter().map(String::len).sum::<usize>()
    }

    /// Applies a worker's write (the lease was checked by the store), and
    /// derives the status again.
    pub fn apply(&mut self, update: TaskUpdate, now_ms: u64) {
        let before = (self.status, self.status_message.clone(), self.progress);
        if let Some(message) = update.status_message {
            self.status_message = Some(message);
        }
        if update.progress.is_some() {
            self.progress = update.progress;
        }
        for (key, request) in update.new_input_requests {
            if !self.answered.contains(&key) && !self.mailbox.contains_key(&key) {
                self.input_requests.insert(key, request);
            }
        }
        if let Some(outcome) = update.outcome {
            self.input_requests.clear();
            self.lease = None;
            self.outcome = Some(outcome);
        } else if let Some(lease) = update.lease {
            self.lease = Some(lease);
        }
        self.status = self.derive_status();
        if before != (self.status, self.status_message.clone(), self.progress) {
            self.last_updated_at_ms = now_ms;
        }
    }

    /// Delivers a client's answers: those to outstanding requests move to
    /// the mailbox (and the requests are no longer outstanding); answers
    /// to anything else are ignored, as the spec asks. Returns whether any
    /// was taken.
    pub fn deliver(&mut self, responses: Map<String, Value>, now_ms: u64) -> bool {
        let mut taken = false;
        for (key, response) in responses {
            if self.input_requests.remove(&key).is_some() {
                self.answered.push(key.clone());
                self.mailbox.insert(key, response);
                taken = true;
            }
        }
        if taken {
            self.status = self.derive_status();
            self.last_updated_at_ms = now_ms;
        }
        taken
    }

    /// Whether `worker` still runs this task: it holds the lease, and the
    /// task has not ended. A worker that does not is told
    /// [`StoreError::LeaseLost`](super::StoreError::LeaseLost) and stops.
    pub fn run_by(&self, worker: &str) -> bool {
        let held = self.lease.as_ref().map(|lease| lease.worker.as_str());
        self.outcome.is_none() && held == Some(worker)
    }

    /// Ends the task as `failed` with an internal error saying `message`
    /// (its outstanding questions dropped, its lease released).
    pub fn fail(&mut self, message: &str) {
        self.outcome = Some(super::failure(message));
        self.status_message = Some(message.to_owned());
        self.input_requests.clear();
        self.lease = None;
        self.status = self.derive_status();
    }

    /// Ends a task whose worker stopped renewing its lease: `failed`,
    /// saying why (a store does this when it reads an orphaned task).
    pub fn orphan(&mut self, now_ms: u64) {
        self.fail("the server instance running this task stopped before the task ended");
        self.last_updated_at_ms = now_ms;
    }

    /// Whether the task's lease ran out while it was still running.
    pub fn is_orphaned(&self, now_ms: u64) -> bool {
        self.outcome.is_none()
            && self
                .lease
                .as_ref()
                .is_some_and(|lease| lease.expires_at_ms <= now_ms)
    }
}

/// A worker's write to its task.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct TaskUpdate {
    /// Replaces the status message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status_message: Option<String>,
    /// Replaces the progress.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub progress: Option<TaskProgress>,
    /// Requests that now wait for the client, by key (added to those
    /// already outstanding; keys already answered are ignored).
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub new_input_requests: Map<String, Value>,
    /// The end: the store keeps it and releases the lease.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcome: Option<TaskOutcome>,
    /// The renewed lease (the store checks the worker against the one it
    /// holds).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lease: Option<Lease>,
}

impl TaskUpdate {
    /// Whether it changes anything beyond the lease.
    pub fn is_renewal_only(&self) -> bool {
        self.status_message.is_none()
            && self.progress.is_none()
            && self.new_input_requests.is_empty()
            && self.outcome.is_none()
    }
}

/// What clients sent a running task since its worker last looked.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Signals {
    /// Answers, by key, moved out of the task's mailbox.
    #[serde(default)]
    pub responses: Map<String, Value>,
    /// Whether a client asked to cancel the task.
    #[serde(default)]
    pub cancel: bool,
}

impl Signals {
    /// Whether there is nothing to act on.
    pub fn is_empty(&self) -> bool {
        self.responses.is_empty() && !self.cancel
    }

    /// Signals carrying `responses` and `cancel`.
    pub fn new(responses: Map<String, Value>, cancel: bool) -> Self {
        Signals { responses, cancel }
    }
}

//! The client's side of the Tasks extension: a task as the server reports
//! it, and the requests that follow and steer it.

use std::time::Duration;

use serde::Deserialize as _;
use serde_json::{Value, json};

use super::outcome::{Answers, InputRequest};
use super::{Client, ClientError, Transport};
use crate::protocol::ErrorObject;
use crate::tasks::{EXTENSION_ID, PROGRESS_META_KEY, TaskProgress, TaskStatus};

/// A task, as `tools/call` created it or `tasks/get` reports it.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Task {
    /// Its id.
    pub id: String,
    /// Where it is.
    pub status: TaskStatus,
    /// The server's message about it (the last progress message, or why it
    /// failed).
    pub status_message: Option<String>,
    /// How often to poll.
    pub poll_interval: Option<Duration>,
    /// How long the server keeps it, from its creation (`None`: unlimited).
    pub ttl: Option<Duration>,
    /// The last progress its handler reported (this runtime's servers send
    /// it in `_meta`).
    pub progress: Option<TaskProgress>,
    /// What it waits for, when `input_required`: answer with
    /// [`Client::update_task`].
    pub input_requests: Vec<(String, InputRequest)>,
    /// The request's result, when `completed`.
    pub result: Option<Value>,
    /// The JSON-RPC error, when `failed`.
    pub error: Option<ErrorObject>,
}

impl Task {
    /// Reads a `CreateTaskResult`, a `GetTaskResult` or the params of
    /// `notifications/tasks`.
    pub fn read(value: &Value) -> Result<Task, String> {
        let id = value["taskId"].as_str().ok_or("no `taskId`")?.to_owned();
        // Borrowed reads (`T::deserialize(&Value)`), as every other read of
        // the client's: one copy of each type's reader, not two.
        let status = TaskStatus::deserialize(&value["status"])
            .map_err(|_| format!("`status` is not a task status: {}", value["status"]))?;
        let millis = |key: &str| {
            value
                .get(key)
                .and_then(Value::as_u64)
                .map(Duration::from_millis)
        };
        let mut input_requests = Vec::new();
        if let Some(requests) = value.get("inputRequests").and_then(Value::as_object) {
            for (key, request) in requests {
                let request =
                    InputRequest::read(request).map_err(|e| format!("inputRequests.{key}: {e}"))?;
                input_requests.push((key.clone(), request));
            }
        }
        let error = match value.get("error") {
            Some(error) => Some(
                ErrorObject::deserialize(error)
                    .map_err(|e| format!("`error` is not an error object: {e}"))?,
            ),
            None => None,
        };
        Ok(Task {
            id,
            status,
            status_message: value["statusMessage"].as_str().map(str::to_owned),
            poll_interval: millis("pollIntervalMs"),
            ttl: millis("ttlMs"),
            progress: value
                .pointer(&format!("/_meta/{}", PROGRESS_META_KEY.replace('/', "~1")))
                .and_then(|progress| TaskProgress::deserialize(progress).ok()),
            input_requests,
            result: value.get("result").cloned(),
            error,
        })
    }

    /// Whether it has ended: `completed`, `failed` or `cancelled`.
    pub fn is_terminal(&self) -> bool {
        self.status.is_terminal()
    }
}

impl<T: Transport> Client<T> {
    /// Declares the Tasks extension (`io.modelcontextprotocol/tasks`) on
    /// every request: task tools then answer `tools/call` with a task
    /// ([`Outcome::Task`](super::Outcome::Task)).
    pub fn declare_tasks(&mut self) {
        let extensions = self
            .capabilities
            .entry("extensions")
            .or_insert_with(|| json!({}));
        if let Some(extensions) = extensions.as_object_mut() {
            extensions.insert(EXTENSION_ID.into(), json!({}));
        }
    }

    /// `tasks/get`.
    pub async fn get_task(&mut self, id: &str) -> Result<Task, ClientError> {
        let (result, _) = self.request("tasks/get", json!({"taskId": id})).await?;
        Task::read(&result).map_err(ClientError::Malformed)
    }

    /// `tasks/update`: answers to the task's `inputRequests`.
    pub async fn update_task(&mut self, id: &str, answers: Answers) -> Result<(), ClientError> {
        let params = json!({"taskId": id, "inputResponses": answers.responses});
        self.request("tasks/update", params).await.map(|_| ())
    }

    /// `tasks/cancel`.
    pub async fn cancel_task(&mut self, id: &str) -> Result<(), ClientError> {
        self.request("tasks/cancel", json!({"taskId": id}))
            .await
            .map(|_| ())
    }
}

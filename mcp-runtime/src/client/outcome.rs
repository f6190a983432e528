//! What a request that can ask for input comes back with: its result, or
//! the server's questions (`input_required`) and the state to echo; and the
//! answers a client sends back.

use std::marker::PhantomData;

use serde::Deserialize;
use serde_json::{Map, Value, json};

use crate::protocol::sampling::{SamplingContent, one_or_many, text_of};
use crate::protocol::{JsonObject, LogLevel, Role};

/// A response to `tools/call`, `resources/read` or `prompts/get`, with the
/// notifications the server sent for it.
#[derive(Clone, Debug)]
pub struct Response<R> {
    /// The result, or the server's questions.
    pub outcome: Outcome<R>,
    /// Progress and log notifications sent before the response.
    pub notifications: Notifications,
}

/// A result, or a round of questions.
#[derive(Clone, Debug)]
pub enum Outcome<R> {
    /// The request completed.
    Complete(R),
    /// The server needs input first: answer and retry.
    InputRequired(InputRequired<R>),
    /// The server runs the request as a task (the Tasks extension, for a
    /// client that declared it): poll it with `tasks/get`.
    Task(super::Task),
}

/// An `input_required` result: what the server asks, and what the retry
/// must carry.
#[derive(Debug)]
pub struct InputRequired<R> {
    /// The questions, keyed as the server chose, in the server's order.
    pub requests: Vec<(String, InputRequest)>,
    /// The state to echo on the retry, if any.
    pub state: Option<String>,
    /// The original request, to retry.
    pub(crate) method: &'static str,
    pub(crate) params: Value,
    /// The result type of the retry.
    pub(crate) result: PhantomData<fn() -> R>,
}

impl<R> Clone for InputRequired<R> {
    fn clone(&self) -> Self {
        InputRequired {
            requests: self.requests.clone(),
            state: self.state.clone(),
            method: self.method,
            params: self.params.clone(),
            result: PhantomData,
        }
    }
}

impl<R> InputRequired<R> {
    /// The question under `key`.
    pub fn request(&self, key: &str) -> Option<&InputRequest> {
        self.requests.iter().find(|(k, _)| k == key).map(|(_, r)| r)
    }

    /// The keys, in order.
    pub fn keys(&self) -> Vec<&str> {
        self.requests.iter().map(|(k, _)| k.as_str()).collect()
    }

    pub(crate) fn read(
        method: &'static str,
        params: Value,
        result: &Value,
    ) -> Result<Self, String> {
        let mut requests = Vec::new();
        if let Some(map) = result.get("inputRequests") {
            let map = map.as_object().ok_or("`inputRequests` is not an object")?;
            for (key, request) in map {
                let request =
                    InputRequest::read(request).map_err(|e| format!("inputRequests.{key}: {e}"))?;
                requests.push((key.clone(), request));
            }
        }
        let state = match result.get("requestState") {
            None => None,
            Some(Value::String(state)) => Some(state.clone()),
            Some(_) => return Err("`requestState` is not a string".into()),
        };
        if requests.is_empty() && state.is_none() {
            return Err("an input_required result needs `inputRequests` or `requestState`".into());
        }
        Ok(InputRequired {
            requests,
            state,
            method,
            params,
            result: PhantomData,
        })
    }
}

/// One question from the server.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum InputRequest {
    /// `elicitation/create`: a form, or a URL to visit.
    Elicitation(ElicitationRequest),
    /// `sampling/createMessage`: a completion from the client's model.
    Sampling(SamplingAsk),
    /// `roots/list`.
    Roots,
}

impl InputRequest {
    pub(crate) fn read(request: &Value) -> Result<Self, String> {
        let params = request.get("params").cloned().unwrap_or_else(|| json!({}));
        match request.get("method").and_then(Value::as_str) {
            Some("elicitation/create") => ElicitationRequest::deserialize(&params)
                .map(InputRequest::Elicitation)
                .map_err(|e| format!("not an elicitation request: {e}")),
            Some("sampling/createMessage") => SamplingAsk::deserialize(&params)
                .map(InputRequest::Sampling)
                .map_err(|e| format!("not a sampling request: {e}")),
            Some("roots/list") => Ok(InputRequest::Roots),
            Some(other) => Err(format!("`{other}` cannot be asked of a client")),
            None => Err("no `method`".into()),
        }
    }

    /// The method on the wire.
    pub fn method(&self) -> &'static str {
        match self {
            InputRequest::Elicitation(_) => "elicitation/create",
            InputRequest::Sampling(_) => "sampling/createMessage",
            InputRequest::Roots => "roots/list",
        }
    }
}

/// An elicitation: a form (`requested_schema`) or a URL.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ElicitationRequest {
    /// `form` (the default) or `url`.
    #[serde(default = "form_mode")]
    pub mode: String,
    /// What the user is asked.
    pub message: String,
    /// The form's schema (form mode).
    #[serde(default)]
    pub requested_schema: Option<JsonObject>,
    /// Where to send the user (URL mode).
    #[serde(default)]
    pub url: Option<String>,
}

fn form_mode() -> String {
    "form".to_owned()
}

impl ElicitationRequest {
    /// The form's fields, in order: name and schema.
    pub fn fields(&self) -> Vec<(&str, &Value)> {
        self.requested_schema
            .as_ref()
            .and_then(|s| s.get("properties"))
            .and_then(Value::as_object)
            .map(|p| p.iter().map(|(k, v)| (k.as_str(), v)).collect())
            .unwrap_or_default()
    }

    /// Whether the form requires `field`.
    pub fn requires(&self, field: &str) -> bool {
        self.requested_schema
            .as_ref()
            .and_then(|s| s.get("required"))
            .and_then(Value::as_array)
            .is_some_and(|r| r.iter().any(|f| f == field))
    }
}

/// A sampling request.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct SamplingAsk {
    /// The conversation to continue.
    pub messages: Vec<SampledMessage>,
    /// The most tokens the model may write.
    pub max_tokens: u64,
    /// The system prompt, if any.
    #[serde(default)]
    pub system_prompt: Option<String>,
}

impl SamplingAsk {
    /// The text of the last message: usually the prompt.
    pub fn prompt(&self) -> String {
        self.messages
            .last()
            .map(SampledMessage::text)
            .unwrap_or_default()
    }
}

/// One message of a sampling request.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[non_exhaustive]
pub struct SampledMessage {
    /// Who wrote it.
    pub role: Role,
    /// Its content blocks.
    #[serde(deserialize_with = "one_or_many")]
    pub content: Vec<SamplingContent>,
}

impl SampledMessage {
    /// Its text blocks, joined.
    pub fn text(&self) -> String {
        text_of(&self.content)
    }
}

/// The answers a retry carries (`inputResponses`), by key.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Answers {
    pub(crate) responses: Map<String, Value>,
}

impl Answers {
    /// No answers yet.
    pub fn new() -> Self {
        Answers::default()
    }

    /// Submits a form: `content` holds the fields.
    #[must_use]
    pub fn accept(self, key: &str, content: Value) -> Self {
        self.raw(key, json!({"action": "accept", "content": content}))
    }

    /// Accepts a URL elicitation (the user went through with it).
    #[must_use]
    pub fn accept_url(self, key: &str) -> Self {
        self.raw(key, json!({"action": "accept"}))
    }

    /// Declines an elicitation.
    #[must_use]
    pub fn decline(self, key: &str) -> Self {
        self.raw(key, json!({"action": "decline"}))
    }

    /// Dismisses an elicitation.
    #[must_use]
    pub fn cancel(self, key: &str) -> Self {
        self.raw(key, json!({"action": "cancel"}))
    }

    /// Answers a sampling request with `text` from `model`.
    #[must_use]
    pub fn sample(self, key: &str, model: &str, text: &str) -> Self {
        self.raw(
            key,
            json!({
                "role": "assistant",
                "content": {"type": "text", "text": text},
                "model": model,
                "stopReason": "endTurn"
            }),
        )
    }

    /// Answers a roots request: `(uri, name)` pairs.
    #[must_use]
    pub fn roots<'a>(
        self,
        key: &str,
        roots: impl IntoIterator<Item = (&'a str, Option<&'a str>)>,
    ) -> Self {
        let roots: Vec<Value> = roots
            .into_iter()
            .map(|(uri, name)| match name {
                Some(name) => json!({"uri": uri, "name": name}),
                None => json!({"uri": uri}),
            })
            .collect();
        self.raw(key, json!({"roots": roots}))
    }

    /// Any JSON as the answer under `key` (for testing malformed answers).
    #[must_use]
    pub fn raw(mut self, key: &str, response: Value) -> Self {
        self.responses.insert(key.to_owned(), response);
        self
    }

    /// Whether no answer was given.
    pub fn is_empty(&self) -> bool {
        self.responses.is_empty()
    }
}

/// Notifications that arrived with a response.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Notifications {
    /// The notifications, as sent.
    pub all: Vec<Value>,
}

/// One `notifications/progress`.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[non_exhaustive]
pub struct ProgressUpdate {
    /// Progress so far.
    pub progress: f64,
    /// The total, when known.
    #[serde(default)]
    pub total: Option<f64>,
    /// A message, if any.
    #[serde(default)]
    pub message: Option<String>,
}

/// One `notifications/message`.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[non_exhaustive]
pub struct LogEntry {
    /// Its level.
    pub level: LogLevel,
    /// The logger's name, if any.
    #[serde(default)]
    pub logger: Option<String>,
    /// The data logged.
    pub data: Value,
}

impl Notifications {
    fn params<'a, T: Deserialize<'a>>(&'a self, method: &str) -> Vec<T> {
        self.all
            .iter()
            .filter(|n| n["method"] == method)
            .filter_map(|n| T::deserialize(&n["params"]).ok())
            .collect()
    }

    /// Progress updates, in order.
    pub fn progress(&self) -> Vec<ProgressUpdate> {
        self.params("notifications/progress")
    }

    /// Log messages, in order.
    pub fn logs(&self) -> Vec<LogEntry> {
        self.params("notifications/message")
    }
}

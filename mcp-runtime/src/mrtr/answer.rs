//! What an ask returns: the typed answers of elicitation, sampling and
//! roots, and how each is read from (and checked against) the client's
//! `inputResponses` entry.

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{Value, json};

use crate::protocol::Role;
use crate::protocol::sampling::{SamplingContent, one_or_many, text_of};

/// The kind of an ask, which decides the client capability it needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AskKind {
    /// `elicitation/create` in form mode.
    ElicitForm,
    /// `elicitation/create` in URL mode.
    ElicitUrl,
    /// `sampling/createMessage`.
    Sampling,
    /// `roots/list`.
    Roots,
}

impl AskKind {
    pub(crate) fn method(self) -> &'static str {
        match self {
            AskKind::ElicitForm | AskKind::ElicitUrl => "elicitation/create",
            AskKind::Sampling => "sampling/createMessage",
            AskKind::Roots => "roots/list",
        }
    }

    /// The parameter attribute that declares this kind of ask.
    pub fn attribute(self) -> &'static str {
        match self {
            AskKind::ElicitForm => "elicit",
            AskKind::ElicitUrl => "elicit_url",
            AskKind::Sampling => "sample",
            AskKind::Roots => "roots",
        }
    }

    pub(crate) fn key_prefix(self) -> &'static str {
        match self {
            AskKind::ElicitForm | AskKind::ElicitUrl => "elicitation",
            AskKind::Sampling => "sampling",
            AskKind::Roots => "roots",
        }
    }

    /// The capability the client lacks for this kind, as
    /// `requiredCapabilities` spells it, or `None` if it has it.
    pub(crate) fn missing(self, caps: &crate::protocol::ClientCapabilities) -> Option<Value> {
        match self {
            AskKind::ElicitForm if !caps.supports_elicitation_form() => {
                Some(if caps.elicitation.is_some() {
                    json!({"elicitation": {"form": {}}})
                } else {
                    json!({"elicitation": {}})
                })
            }
            AskKind::ElicitUrl if !caps.supports_elicitation_url() => {
                Some(json!({"elicitation": {"url": {}}}))
            }
            AskKind::Sampling if !caps.supports_sampling() => Some(json!({"sampling": {}})),
            AskKind::Roots if !caps.supports_roots() => Some(json!({"roots": {}})),
            _ => None,
        }
    }
}

/// What identifies an ask's kind and, for forms, the schema: computed once
/// per form type ([`form`](super::form::form)), and part of the digest of
/// each question asked with it (`Question::digest`), which adds the
/// message.
pub(crate) fn fingerprint(kind: AskKind, schema: Option<&Value>) -> String {
    use sha2::{Digest as _, Sha256};
    let mut hasher = Sha256::new();
    hasher.update(kind.attribute());
    if let Some(schema) = schema {
        hasher.update(super::canonical::canonical_json(schema));
    }
    crate::security::seal::hex(&hasher.finalize()[..8])
}

/// A type an ask can answer with, read from the client's response.
pub trait Answer: Sized {
    /// The kind of ask that produces it.
    const KIND: AskKind;
    /// Reads the answer; `Err` explains what does not fit.
    fn from_response(response: &Value) -> Result<Self, String>;
    /// Reads the answer from the response's JSON text, as this round's
    /// `inputResponses` carry it. The default builds the tree and calls
    /// [`from_response`](Self::from_response); an override reads the text
    /// directly and must agree with it.
    fn from_json(text: &str) -> Result<Self, String> {
        from_tree(text)
    }
}

/// [`Answer::from_json`] by way of a tree.
fn from_tree<A: Answer>(text: &str) -> Result<A, String> {
    let tree: Value =
        serde_json::from_str(text).map_err(|e| format!("not a JSON response: {e}"))?;
    A::from_response(&tree)
}

/// A client's response to one ask: the JSON text of this round's
/// `inputResponses` entry, or a value carried over in the sealed state.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Response<'a> {
    Text(&'a RawValue),
    Tree(&'a Value),
}

/// Reads `response` as `A`.
pub(crate) fn read_answer<A: Answer>(response: Response<'_>) -> Result<A, String> {
    match response {
        Response::Text(text) => A::from_json(text.get()),
        Response::Tree(tree) => A::from_response(tree),
    }
}

/// Reads a client's response as `T`, which is always a JSON object.
fn read<T: DeserializeOwned>(response: &Value, what: &str) -> Result<T, String> {
    if !response.is_object() {
        return Err(format!("not {what}: expected an object"));
    }
    T::deserialize(response).map_err(|e| format!("not {what}: {e}"))
}

/// A struct an elicitation form asks for: derive it with
/// `#[derive(Deserialize, JsonSchema, ElicitForm)]`. The spec's forms are
/// flat, so each field is a string, number, integer, boolean, a choice (an
/// enum deriving `ElicitForm`), a `Vec` of choices, or an `Option` of one of
/// these; the derive checks that at compile time. Doc comments become the
/// fields' descriptions; `#[schemars(email)]`, `url`, `length`, `range`
/// and `#[serde(default)]` carry over into the form.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be asked for with an elicitation form",
    label = "not a form",
    note = "derive it: `#[derive(serde::Deserialize, schemars::JsonSchema, mcp_runtime::ElicitForm)]` on a struct whose fields are strings, numbers, integers, booleans or choices"
)]
// `'static`: its form is cached by `TypeId`. The derive takes no generics,
// so a derived form is `'static` anyway.
pub trait ElicitForm: DeserializeOwned + JsonSchema + 'static {}

/// A type one field of an elicitation form can have. Implement it for your
/// own types whose schema is a string, number, integer or boolean (for
/// example a newtype around `String`).
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a field of an elicitation form",
    label = "not a form field",
    note = "form fields are strings, numbers, integers, booleans, enums deriving `ElicitForm` (one choice), `Vec`s of such enums (several choices), or an `Option` of one of these: the spec's forms are flat, so nested structs, maps and other lists cannot be asked for"
)]
pub trait FormField {}

/// An enum of unit variants deriving `ElicitForm`: one option per variant.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a form choice",
    label = "not a choice",
    note = "a multi-select field is a `Vec` of a unit-variant enum deriving `ElicitForm`"
)]
pub trait FormChoice: FormField {}

macro_rules! form_fields {
    ($($ty:ty),*) => { $(impl FormField for $ty {})* };
}
form_fields!(
    String, bool, i8, i16, i32, i64, isize, u8, u16, u32, u64, usize, f32, f64
);
impl<T: FormField> FormField for Option<T> {}
impl<T: FormChoice> FormField for Vec<T> {}

/// Checks a form field's type (used by `#[derive(ElicitForm)]`).
pub fn assert_form_field<T: FormField + ?Sized>() {}

/// The user's answer to a form elicitation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Elicitation<T> {
    /// The user submitted the form.
    Accepted(T),
    /// The user explicitly declined.
    Declined,
    /// The user dismissed the request without choosing.
    Cancelled,
}

impl<T> Elicitation<T> {
    /// The submitted value, if the user accepted.
    pub fn accepted(self) -> Option<T> {
        match self {
            Elicitation::Accepted(value) => Some(value),
            Elicitation::Declined | Elicitation::Cancelled => None,
        }
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "lowercase")]
enum Action {
    Accept,
    Decline,
    Cancel,
}

#[derive(Deserialize)]
struct ElicitResponse {
    action: Action,
    #[serde(default)]
    content: Option<Value>,
}

/// A form elicitation's result, its submitted content not read yet.
fn read_elicitation(response: &Value) -> Result<Elicitation<Value>, String> {
    let response: ElicitResponse = read(response, "an elicitation result")?;
    Ok(match response.action {
        Action::Accept => {
            Elicitation::Accepted(response.content.ok_or("accepted without `content`")?)
        }
        Action::Decline => Elicitation::Declined,
        Action::Cancel => Elicitation::Cancelled,
    })
}

/// What prefixes a form whose content does not fit.
const FORM_MISFIT: &str = "the submitted form does not fit";

impl<T: ElicitForm> Answer for Elicitation<T> {
    const KIND: AskKind = AskKind::ElicitForm;

    fn from_response(response: &Value) -> Result<Self, String> {
        match read_elicitation(response)? {
            Elicitation::Accepted(content) => {
                // Straight from the tree; only a form that does not fit is
                // printed and parsed again, for an error that names the field.
                T::deserialize(&content)
                    .or_else(|_| crate::protocol::json::parse_arguments(&content.to_string()))
                    .map(Elicitation::Accepted)
                    .map_err(|e| format!("{FORM_MISFIT}: {e}"))
            }
            Elicitation::Declined => Ok(Elicitation::Declined),
            Elicitation::Cancelled => Ok(Elicitation::Cancelled),
        }
    }

    /// Straight from the text, without a tree: a fitting answer (what
    /// clients send) is read once. Anything else goes through
    /// [`from_response`](Answer::from_response), for the same result and
    /// the same error message.
    fn from_json(text: &str) -> Result<Self, String> {
        #[derive(Deserialize)]
        struct Raw<'a> {
            action: Action,
            #[serde(borrow, default)]
            content: Option<&'a RawValue>,
        }
        // `read` takes objects only; a struct would also accept an array.
        let fast = Some(text)
            .filter(|t| t.trim_start().starts_with('{'))
            .and_then(|t| serde_json::from_str::<Raw<'_>>(t).ok())
            .and_then(|raw| match raw.action {
                Action::Accept => raw
                    .content
                    .and_then(|content| crate::protocol::json::parse_arguments(content.get()).ok())
                    .map(Elicitation::Accepted),
                Action::Decline => Some(Elicitation::Declined),
                Action::Cancel => Some(Elicitation::Cancelled),
            });
        fast.map_or_else(|| from_tree(text), Ok)
    }
}

/// The user's answer to a URL-mode elicitation (the interaction itself
/// happened out of band).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UrlElicitation {
    /// The user went through with it.
    Accepted,
    /// The user explicitly declined.
    Declined,
    /// The user dismissed the request without choosing.
    Cancelled,
}

impl Answer for UrlElicitation {
    const KIND: AskKind = AskKind::ElicitUrl;

    fn from_response(response: &Value) -> Result<Self, String> {
        let response: ElicitResponse = read(response, "an elicitation result")?;
        Ok(match response.action {
            Action::Accept => UrlElicitation::Accepted,
            Action::Decline => UrlElicitation::Declined,
            Action::Cancel => UrlElicitation::Cancelled,
        })
    }
}

/// What the client's model answered to a sampling request.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct SamplingResult {
    /// Who wrote it (the assistant).
    pub role: Role,
    /// The content blocks.
    #[serde(deserialize_with = "one_or_many")]
    pub content: Vec<SamplingContent>,
    /// The model that wrote it.
    pub model: String,
    /// Why generation stopped (`endTurn`, `maxTokens`, `toolUse`, ...).
    #[serde(default)]
    pub stop_reason: Option<String>,
}

impl SamplingResult {
    /// The text of all text blocks, joined.
    pub fn text(&self) -> String {
        text_of(&self.content)
    }
}

impl Answer for SamplingResult {
    const KIND: AskKind = AskKind::Sampling;

    fn from_response(response: &Value) -> Result<Self, String> {
        read(response, "a sampling result")
    }
}

/// A root the client exposes (a directory, as a `file://` URI).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Root {
    /// The root's URI.
    pub uri: String,
    /// A display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

/// The client's roots, in its order.
impl Answer for Vec<Root> {
    const KIND: AskKind = AskKind::Roots;

    fn from_response(response: &Value) -> Result<Self, String> {
        #[derive(Deserialize)]
        struct Roots {
            roots: Vec<Root>,
        }
        read::<Roots>(response, "a roots result").map(|r| r.roots)
    }
}

/// Checks a client's `response` against the `request` it answers, as a
/// task keeps its outstanding requests (`{"method", "params"}`), without
/// the handler's answer type: a `tasks/update` is checked when it arrives,
/// before the answer reaches the handler, whose ask would otherwise stop
/// it (and fail the task). The same readings as the typed answers
/// ([`Answer::from_response`]); a form's content is checked against the
/// request's `requestedSchema` ([`check_content`](super::content::check_content)).
/// `Err` says what does not fit, as an ask's answer would.
pub(crate) fn check_response(request: &Value, response: &Value) -> Result<(), String> {
    let params = request.get("params").unwrap_or(&Value::Null);
    match request.get("method").and_then(Value::as_str) {
        Some("elicitation/create") if params.get("mode").and_then(Value::as_str) == Some("url") => {
            UrlElicitation::from_response(response).map(drop)
        }
        Some("elicitation/create") => match read_elicitation(response)? {
            Elicitation::Accepted(content) => {
                let schema = params.get("requestedSchema").unwrap_or(&Value::Null);
                super::content::check_content(schema, &content)
                    .map_err(|problem| format!("{FORM_MISFIT}: {problem}"))
            }
            Elicitation::Declined | Elicitation::Cancelled => Ok(()),
        },
        Some("sampling/createMessage") => SamplingResult::from_response(response).map(drop),
        Some("roots/list") => <Vec<Root>>::from_response(response).map(drop),
        // Not a request this runtime asks: nothing to check it against.
        _ => Ok(()),
    }
}

/// One message of a sampling request.
#[derive(Clone, Debug, PartialEq, Serialize)]
struct SamplingMessage {
    role: Role,
    content: Value,
}

/// A request for a completion from the client's model.
///
/// Sampling is deprecated as of 2026-07-28: new designs call an LLM
/// provider directly. It remains fully supported for clients that offer it.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SamplingRequest {
    messages: Vec<SamplingMessage>,
    max_tokens: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    system_prompt: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<f64>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    stop_sequences: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    model_preferences: Option<Value>,
}

impl SamplingRequest {
    /// A request that lets the model write at most `max_tokens` tokens.
    pub fn new(max_tokens: u32) -> Self {
        SamplingRequest {
            messages: Vec::new(),
            max_tokens,
            system_prompt: None,
            temperature: None,
            stop_sequences: Vec::new(),
            model_preferences: None,
        }
    }

    /// Adds a user text message.
    #[must_use]
    pub fn user(mut self, text: impl Into<String>) -> Self {
        self.messages.push(SamplingMessage {
            role: Role::User,
            content: json!({"type": "text", "text": text.into()}),
        });
        self
    }

    /// Adds an assistant text message (earlier turns of the conversation).
    #[must_use]
    pub fn assistant(mut self, text: impl Into<String>) -> Self {
        self.messages.push(SamplingMessage {
            role: Role::Assistant,
            content: json!({"type": "text", "text": text.into()}),
        });
        self
    }

    /// Sets the system prompt.
    #[must_use]
    pub fn system(mut self, prompt: impl Into<String>) -> Self {
        self.system_prompt = Some(prompt.into());
        self
    }

    /// Sets the sampling temperature.
    #[must_use]
    pub fn temperature(mut self, temperature: f64) -> Self {
        self.temperature = Some(temperature);
        self
    }

    /// Adds a stop sequence.
    #[must_use]
    pub fn stop_at(mut self, sequence: impl Into<String>) -> Self {
        self.stop_sequences.push(sequence.into());
        self
    }

    /// Suggests models by name and how to trade off cost, speed and
    /// intelligence (each from 0 to 1); the client may ignore it.
    #[must_use]
    pub fn prefer(mut self, hints: &[&str], cost: f64, speed: f64, intelligence: f64) -> Self {
        let hints: Vec<Value> = hints.iter().map(|h| json!({"name": h})).collect();
        self.model_preferences = Some(json!({
            "hints": hints,
            "costPriority": cost.clamp(0.0, 1.0),
            "speedPriority": speed.clamp(0.0, 1.0),
            "intelligencePriority": intelligence.clamp(0.0, 1.0),
        }));
        self
    }

    pub(crate) fn to_params(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, PartialEq, Deserialize, JsonSchema)]
    struct Confirm {
        confirm: bool,
        #[serde(default)]
        note: Option<String>,
    }
    impl ElicitForm for Confirm {}

    /// A form answer read from its text (this round's `inputResponses`) is
    /// the one read from its tree (a carried state): same answers, same
    /// error messages.
    #[test]
    fn form_answers_from_text_and_from_tree_agree() {
        let cases = [
            r#"{"action":"accept","content":{"confirm":true}}"#,
            r#"{"action":"accept","content":{"confirm":true,"note":"ok"}}"#,
            r#"  {"content":{"confirm":false},"action":"accept"}"#,
            r#"{"action":"accept","content":{"confirm":"yes"}}"#,
            r#"{"action":"accept","content":{}}"#,
            r#"{"action":"accept","content":{"confirm":true,"extra":1}}"#,
            r#"{"action":"accept"}"#,
            r#"{"action":"accept","content":null}"#,
            r#"{"action":"decline"}"#,
            r#"{"action":"cancel","content":{"confirm":true}}"#,
            r#"{"action":"maybe"}"#,
            r#"["accept",{"confirm":true}]"#,
            r#"42"#,
        ];
        for text in cases {
            let tree: Value = serde_json::from_str(text).unwrap();
            let from_text = Elicitation::<Confirm>::from_json(text);
            let from_tree = Elicitation::<Confirm>::from_response(&tree);
            assert_eq!(from_text, from_tree, "{text}");
        }
        assert_eq!(
            Elicitation::<Confirm>::from_json(r#"{"action":"accept","content":{"confirm":true}}"#),
            Ok(Elicitation::Accepted(Confirm {
                confirm: true,
                note: None
            }))
        );
    }

    /// A task's answer checked against the request alone is refused exactly
    /// when the typed answer would be, with the same words.
    #[test]
    fn answers_checked_against_their_request_agree_with_the_typed_answers() {
        let form = super::super::form::form::<Confirm>().unwrap();
        let request = json!({"method": "elicitation/create", "params": {
            "mode": "form", "message": "Sure?", "requestedSchema": form.schema,
        }});
        let cases = [
            json!({"action": "accept", "content": {"confirm": true}}),
            json!({"action": "accept", "content": {"confirm": false, "note": "ok"}}),
            json!({"action": "accept", "content": {"confirm": true, "note": null}}),
            json!({"action": "accept", "content": {"confirm": true, "extra": 1}}),
            json!({"action": "accept", "content": {"confirm": "yes"}}),
            json!({"action": "accept", "content": {"confirm": null}}),
            json!({"action": "accept", "content": {"confirm": true, "note": 5}}),
            json!({"action": "accept", "content": {}}),
            json!({"action": "accept", "content": null}),
            json!({"action": "accept"}),
            json!({"action": "decline"}),
            json!({"action": "cancel", "content": {"confirm": "yes"}}),
            json!({"action": "maybe"}),
            json!({"content": {"confirm": true}}),
            json!(42),
        ];
        for response in cases {
            let typed = Elicitation::<Confirm>::from_response(&response).map(drop);
            assert_eq!(check_response(&request, &response), typed, "{response}");
        }
    }

    #[test]
    fn other_asks_are_checked_as_their_typed_answers_read_them() {
        let url =
            json!({"method": "elicitation/create", "params": {"mode": "url", "url": "https://x"}});
        let sampling = json!({"method": "sampling/createMessage", "params": {"maxTokens": 5}});
        let roots = json!({"method": "roots/list"});
        let text =
            json!({"role": "assistant", "content": {"type": "text", "text": "hi"}, "model": "m"});
        let fitting = [
            (&url, json!({"action": "accept"})),
            (&sampling, text),
            (&roots, json!({"roots": [{"uri": "file:///x"}]})),
            (&json!({"method": "other/thing"}), json!(42)),
        ];
        for (request, response) in &fitting {
            assert_eq!(check_response(request, response), Ok(()), "{response}");
        }
        let misfits = [
            (
                &url,
                json!({"action": "maybe"}),
                "not an elicitation result: unknown variant `maybe`, expected one of `accept`, `decline`, `cancel`",
            ),
            (
                &sampling,
                json!({"role": "assistant"}),
                "not a sampling result: missing field `content`",
            ),
            (
                &roots,
                json!([{"uri": "file:///x"}]),
                "not a roots result: expected an object",
            ),
        ];
        for (request, response, problem) in misfits {
            assert_eq!(
                check_response(request, &response),
                Err(problem.to_owned()),
                "{response}"
            );
        }
    }
}

//! The valid requests the fuzzer mutates: one of each thing the hostile
//! server does (the quickstart's tools, resources and prompts, a multi
//! round-trip call in both rounds, notifications), all initialize-free
//! 2026-07-28 requests.

use serde_json::{Value, json};

/// A valid request (or notification) to mutate.
pub(crate) struct Seed {
    pub(crate) name: &'static str,
    /// `Mcp-Method` on HTTP.
    pub(crate) method: &'static str,
    /// `Mcp-Name` on HTTP, for the methods that name something.
    pub(crate) target: Option<&'static str>,
    /// `params`; `_meta` is added unless present.
    params: Value,
    notification: bool,
}

impl Seed {
    /// The message, with `id` unless it is a notification.
    pub(crate) fn request(&self, id: Value) -> Value {
        let mut params = self.params.clone();
        if !self.notification && params.get("_meta").is_none() {
            params["_meta"] = meta(json!({}));
        }
        let mut message = json!({"jsonrpc": "2.0", "method": self.method, "params": params});
        if !self.notification {
            message["id"] = id;
        }
        message
    }
}

/// The `_meta` every modern request carries.
fn meta(capabilities: Value) -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": capabilities,
    })
}

fn seed(
    name: &'static str,
    method: &'static str,
    target: Option<&'static str>,
    params: Value,
) -> Seed {
    Seed {
        name,
        method,
        target,
        params,
        notification: false,
    }
}

fn call(name: &'static str, tool: &'static str, arguments: Value) -> Seed {
    seed(
        name,
        "tools/call",
        Some(tool),
        json!({"name": tool, "arguments": arguments}),
    )
}

fn notification(name: &'static str, method: &'static str, params: Value) -> Seed {
    Seed {
        name,
        method,
        target: None,
        params,
        notification: true,
    }
}

/// Stands for a `requestState` in the second rounds' seeds: a fresh one
/// from the server under test replaces it in each case (a
/// `confirm_delete` state works once).
pub(crate) const FRESH_STATE: &str = "fresh-request-state";

/// Whether a mutant still holds [`FRESH_STATE`].
pub(crate) fn wants_state(body: &[u8]) -> bool {
    body.windows(FRESH_STATE.len())
        .any(|window| window == FRESH_STATE.as_bytes())
}

/// Puts `state` wherever a mutant holds [`FRESH_STATE`], the rest byte for
/// byte.
pub(crate) fn put_state(body: &mut Vec<u8>, state: &str) {
    let needle = FRESH_STATE.as_bytes();
    let mut out = Vec::with_capacity(body.len() + state.len());
    let mut rest = &body[..];
    while let Some(at) = rest
        .windows(needle.len())
        .position(|window| window == needle)
    {
        out.extend_from_slice(&rest[..at]);
        out.extend_from_slice(state.as_bytes());
        rest = &rest[at + needle.len()..];
    }
    out.extend_from_slice(rest);
    *body = out;
}

/// The corpus, made once.
pub(crate) fn seeds() -> &'static [Seed] {
    static SEEDS: std::sync::OnceLock<Vec<Seed>> = std::sync::OnceLock::new();
    SEEDS.get_or_init(corpus)
}

fn corpus() -> Vec<Seed> {
    let request_state = FRESH_STATE;
    let elicit = meta(json!({"elicitation": {}}));
    let confirm = |name, responses: Value| {
        seed(
            name,
            "tools/call",
            Some("confirm_delete"),
            json!({
                "name": "confirm_delete",
                "arguments": {"path": "/tmp/x"},
                "inputResponses": responses,
                "requestState": request_state,
                "_meta": elicit,
            }),
        )
    };
    let mut countdown_meta = meta(json!({}));
    countdown_meta["progressToken"] = json!("countdown-progress");
    vec![
        seed("discover", "server/discover", None, json!({})),
        seed("tools/list", "tools/list", None, json!({})),
        seed(
            "tools/list cursor",
            "tools/list",
            None,
            json!({"cursor": "next"}),
        ),
        call("echo", "echo", json!({"text": "hello, fuzzer"})),
        call("add", "add", json!({"a": 2, "b": 40})),
        call("divide", "divide", json!({"a": 1, "b": 4})),
        call("divide by zero", "divide", json!({"a": 1, "b": 0})),
        seed(
            "countdown",
            "tools/call",
            Some("countdown"),
            json!({"name": "countdown", "arguments": {"from": 2, "delay_ms": 0}, "_meta": countdown_meta}),
        ),
        seed(
            "confirm_delete round 1",
            "tools/call",
            Some("confirm_delete"),
            json!({"name": "confirm_delete", "arguments": {"path": "/tmp/x"}, "_meta": elicit}),
        ),
        confirm(
            "confirm_delete accepted",
            json!({"answer": {"action": "accept", "content": {"confirm": true}}}),
        ),
        confirm(
            "confirm_delete declined",
            json!({"answer": {"action": "decline"}}),
        ),
        seed("resources/list", "resources/list", None, json!({})),
        seed(
            "resources/templates/list",
            "resources/templates/list",
            None,
            json!({}),
        ),
        seed(
            "read readme",
            "resources/read",
            Some("memo://readme"),
            json!({"uri": "memo://readme"}),
        ),
        seed(
            "read note",
            "resources/read",
            Some("memo://notes/2"),
            json!({"uri": "memo://notes/2"}),
        ),
        seed(
            "read missing note",
            "resources/read",
            Some("memo://notes/9"),
            json!({"uri": "memo://notes/9"}),
        ),
        seed("prompts/list", "prompts/list", None, json!({})),
        seed(
            "review prompt",
            "prompts/get",
            Some("review"),
            json!({"name": "review", "arguments": {"topic": "the fuzzer"}}),
        ),
        seed(
            "complete",
            "completion/complete",
            None,
            json!({"ref": {"type": "ref/prompt", "name": "review"}, "argument": {"name": "topic", "value": "t"}}),
        ),
        notification(
            "cancelled",
            "notifications/cancelled",
            json!({"requestId": 1, "reason": "fuzz"}),
        ),
        notification(
            "progress",
            "notifications/progress",
            json!({"progressToken": "p", "progress": 1}),
        ),
    ]
}

/// The first round of `confirm_delete` as in [`seeds`], whose answer
/// carries the `requestState` the other rounds need.
pub(crate) fn first_round(id: &str) -> String {
    seeds()
        .iter()
        .find(|seed| seed.name == "confirm_delete round 1")
        .expect("the first round")
        .request(Value::from(id))
        .to_string()
}

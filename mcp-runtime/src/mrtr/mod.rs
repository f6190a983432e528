//! Multi round-trip requests: asking the client for input (elicitation,
//! sampling, roots) in the middle of `tools/call`, `prompts/get` or
//! `resources/read`, across stateless rounds carried by a sealed
//! `requestState`.
//!
//! A handler declares what it needs to ask; the first round answers
//! `input_required` with the questions and a sealed state, and the
//! client's retry, carrying the answers and that state, runs the body:
//!
//! ```rust,standalone_crate
//! use mcp_runtime::{ElicitForm, Elicitation, ServerBuilder, tool};
//! use serde_json::json;
//! # use serde_json::Value;
//!
//! #[derive(serde::Deserialize, schemars::JsonSchema, ElicitForm)]
//! struct Confirm {
//!     /// Delete it for good?
//!     confirm: bool,
//! }
//!
//! /// Deletes a file once the user confirms.
//! #[tool(annotations(destructive))]
//! fn delete_file(
//!     path: String,
//!     #[elicit("Delete {path}?")] answer: Elicitation<Confirm>,
//! ) -> Result<String, String> {
//!     match answer {
//!         Elicitation::Accepted(Confirm { confirm: true }) => Ok(format!("deleted {path}")),
//!         _ => Err(format!("kept {path}")),
//!     }
//! }
//!
//! # /// One `tools/call` from a client that declared elicitation: its result.
//! # async fn call(server: &mcp_runtime::Server, mut params: Value) -> Value {
//! #     params["_meta"] = json!({
//! #         "io.modelcontextprotocol/protocolVersion": mcp_runtime::protocol::PROTOCOL_VERSION,
//! #         "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
//! #     });
//! #     let request =
//! #         json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params});
//! #     let response = server.exchange(request.to_string()).await.response.unwrap();
//! #     serde_json::from_str::<Value>(&response).unwrap()["result"].take()
//! # }
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), mcp_runtime::BuildError> {
//! let server = ServerBuilder::new("files", "1.0.0").build()?;
//!
//! // Round 1: the question, keyed by the parameter's name, and the state.
//! let request = json!({"name": "delete_file", "arguments": {"path": "notes.txt"}});
//! let round = call(&server, request.clone()).await;
//! assert_eq!(round["resultType"], "input_required");
//! assert_eq!(round["inputRequests"]["answer"]["params"]["message"], "Delete notes.txt?");
//!
//! // Round 2: the same call, with the answer and the state it was given.
//! let mut retry = request;
//! retry["inputResponses"] = json!({"answer": {"action": "accept", "content": {"confirm": true}}});
//! retry["requestState"] = round["requestState"].clone();
//! let done = call(&server, retry).await;
//! assert_eq!(done["content"][0]["text"], "deleted notes.txt");
//! # Ok(())
//! # }
//! ```
//!
//! Questions that depend on earlier answers take a `#[ctx] input:`
//! [`Input`] and ask inline ([`Input::elicit`]), over as many rounds as
//! needed. The built-in client and `testing::TestClient` carry the rounds
//! for you.

pub(crate) mod answer;
mod canonical;
mod content;
pub(crate) mod declared;
pub(crate) mod form;
mod options;
mod question;
mod round;
pub(crate) mod state;

pub use self::answer::{
    Answer, AskKind, ElicitForm, Elicitation, FormChoice, FormField, Root, SamplingRequest,
    SamplingResult, UrlElicitation,
};
pub use self::options::RequestStateOptions;
pub use self::round::Input;
pub(crate) use self::round::{Asked, Responses, Stop, run_round};
pub use self::state::{
    Clock, FirstUse, GuardFuture, GuardUnavailable, InMemoryReplayGuard, MAX_STATE_BYTES,
    ReplayGuard, StateUse, VerdictFuture,
};

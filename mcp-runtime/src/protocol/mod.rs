//! Wire types of MCP revision 2026-07-28: the JSON-RPC envelope, per-request
//! `_meta`, and the request/result shapes of each protocol area.
//!
//! This module does no IO and holds no state; it only describes what goes
//! over the wire.
//!
//! ```rust
//! use mcp_runtime::protocol::{CallToolResult, Content, ErrorObject, error_code};
//! use serde_json::json;
//!
//! // What a tool returns: text for the model, structured content for programs.
//! let result = CallToolResult::success([Content::text("3 notes")])
//!     .with_structured_content(json!({"count": 3}));
//! assert_eq!(result.text(), "3 notes");
//! let block = serde_json::to_value(&result.content[0])?;
//! assert_eq!(block, json!({"type": "text", "text": "3 notes"}));
//!
//! // A result as a client reads it off the wire.
//! let read: CallToolResult = serde_json::from_value(json!({
//!     "resultType": "complete",
//!     "content": [{"type": "text", "text": "no such note"}],
//!     "isError": true,
//! }))?;
//! assert_eq!(read, CallToolResult::error("no such note"));
//!
//! // A JSON-RPC error object, with the spec's codes.
//! let error = ErrorObject::invalid_params("`count` must be positive");
//! assert_eq!(error.code, error_code::INVALID_PARAMS);
//! assert_eq!(
//!     serde_json::to_value(&error)?,
//!     json!({"code": -32602, "message": "`count` must be positive"}),
//! );
//! # Ok::<(), serde_json::Error>(())
//! ```

mod completion;
mod content;
mod discover;
pub(crate) mod finite;
pub(crate) mod json;
pub(crate) mod jsonrpc;
pub(crate) mod meta;
pub(crate) mod method;
pub(crate) mod method_result;
mod prompts;
mod resources;
pub(crate) mod result;
pub(crate) mod sampling;
mod tools;

pub use completion::{Completion, MAX_COMPLETION_VALUES};
pub use content::{
    Annotations, AudioContent, BlobResourceContents, Content, EmbeddedResource, ImageContent,
    PROVENANCE_META_KEY, Provenance, Resource, ResourceContents, Role, TextContent,
    TextResourceContents,
};
pub use discover::{CacheHint, CacheHints, CacheScope, ListChangedCapability, ServerCapabilities};
pub use jsonrpc::{ErrorObject, RequestId, error_code};
pub use meta::{
    ClientCapabilities, ElicitationCapability, Icon, IconTheme, Implementation, LogLevel,
    ProgressToken, RequestMeta, SamplingCapability,
};
pub use prompts::{GetPromptResult, Prompt, PromptArgument, PromptMessage};
pub use resources::{ReadResourceResult, ResourceTemplate};
pub use sampling::SamplingContent;
pub use tools::{CallToolResult, Tool, ToolAnnotations};

/// The protocol revision this runtime implements.
pub const PROTOCOL_VERSION: &str = "2026-07-28";

/// The protocol revisions this runtime serves natively (the legacy
/// adapter's older ones aside): a request's `_meta` version outside them
/// is refused with `-32022`.
pub const SUPPORTED_VERSIONS: &[&str] = &[PROTOCOL_VERSION];

/// A JSON object, as used for `_meta` maps and open-ended capability values.
pub type JsonObject = serde_json::Map<String, serde_json::Value>;

//! Wire types of MCP revision 2026-07-28: the JSON-RPC envelope, per-request
//! `_meta`, and the request/result shapes of each protocol area.
//!
//! This module does no IO and holds no state; it only describes what goes
//! over the wire.

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
pub use discover::{CacheHint, CacheScope, ListChangedCapability, ServerCapabilities};
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

/// A JSON object, as used for `_meta` maps and open-ended capability values.
pub type JsonObject = serde_json::Map<String, serde_json::Value>;

#![doc = include_str!("../README.md")]
#![warn(missing_docs)]

mod context;
mod dispatch;
pub mod protocol;
mod registry;
mod run;
pub mod schema;
mod server;
mod tool;
mod transport;

pub use context::{Context, FromContext, Logger, Progress};
pub use dispatch::CacheHint;
#[doc = include_str!("docs/tool.md")]
pub use mcp_macros::tool;
pub use protocol::{
    Annotations, CacheScope, CallToolResult, ClientCapabilities, Content, ErrorObject,
    Implementation, LogLevel, RequestId, RequestMeta, ResourceContents, Role,
};
pub use registry::BuildError;
pub use server::{Exchange, Server, ServerBuilder};
pub use tokio_util::sync::CancellationToken;
pub use tool::{ArgumentError, IntoToolResult, Json, Structured};

/// Items used by macro-generated code. Not a public API: anything here may
/// change in any release (the macros and this crate are released in
/// lockstep, pinned with `=`).
#[doc(hidden)]
pub mod __private {
    pub use ::linkme;
    pub use ::schemars;
    pub use ::serde;
    pub use ::serde_json;

    pub use crate::context::{Context, FromContext};
    pub use crate::protocol::IconTheme;
    pub use crate::registry::{Location, StaticIcon, StaticToolAnnotations, TOOLS, ToolEntry};
    pub use crate::schema::input_schema;
    pub use crate::tool::{
        ArgumentError, IntoToolResult, ToolCallFn, ToolFuture, ToolInvocation, parse_arguments,
    };

    /// Boxes a tool's future for the registry.
    pub fn box_tool_future<F>(future: F) -> ToolFuture
    where
        F: ::core::future::Future<Output = crate::protocol::CallToolResult> + 'static,
    {
        ::std::boxed::Box::pin(future)
    }
}

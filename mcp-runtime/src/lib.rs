#![doc = include_str!("../README.md")]
#![warn(missing_docs)]
#![cfg_attr(docsrs, feature(doc_cfg))]

pub mod apps;
#[cfg(feature = "http")]
#[cfg_attr(docsrs, doc(cfg(feature = "http")))]
pub mod auth;
#[cfg(feature = "bench-internals")]
mod bench_internals;
mod bind;
mod blocking;
pub mod catalog;
mod changes;
#[cfg(feature = "cli")]
mod cli;
#[cfg(feature = "client")]
#[cfg_attr(docsrs, doc(cfg(feature = "client")))]
pub mod client;
mod complete;
mod context;
#[cfg(feature = "client")]
#[cfg_attr(docsrs, doc(cfg(feature = "client")))]
pub mod contract;
pub mod diagnostics;
mod dispatch;
pub mod extension;
pub mod files;
#[cfg(feature = "cli")]
mod inspect;
#[cfg(feature = "legacy")]
#[cfg_attr(docsrs, doc(cfg(feature = "legacy")))]
pub mod legacy;
mod lifecycle;
pub mod metrics;
pub mod middleware;
pub mod mrtr;
pub mod plugin;
mod prompt;
pub mod protocol;
mod registry;
mod request_extensions;
mod resource;
mod run;
pub mod schema;
pub mod security;
mod server;
mod shared_state;
#[cfg(feature = "skills")]
#[cfg_attr(docsrs, doc(cfg(feature = "skills")))]
pub mod skills;
mod source;
mod state;
pub mod tasks;
#[cfg(feature = "client")]
#[cfg_attr(docsrs, doc(cfg(feature = "client")))]
pub mod testing;
mod tool;
mod transport;
mod uri_template;

pub use blocking::run_blocking;
pub use changes::{Change, ChangeBus, Changes, InProcessBus, TaskNotice};
pub use complete::{AsyncCompleter, Completer, CompletionRequest, IntoCompletion, SyncCompleter};
pub use context::{Context, FromContext, Logger, Progress};

pub use lifecycle::{HookError, Launched, Startup};
/// Derives [`ElicitForm`](trait@ElicitForm) for a flat struct, or
/// [`FormField`] and [`FormChoice`] for a unit-variant enum.
pub use mcp_runtime_macros::ElicitForm;
#[doc = include_str!("docs/prompt.md")]
pub use mcp_runtime_macros::prompt;
#[doc = include_str!("docs/resource.md")]
pub use mcp_runtime_macros::resource;
/// Embeds a directory of Agent Skills in the binary, checked at compile
/// time, as a [`skills::Skills`] (feature `skills`): see the
/// [`skills`](mod@skills) module.
///
/// `skills!("skills")` reads the directory `skills/` of the package being
/// built (the path is relative to its `Cargo.toml`). Each file is embedded
/// with `include_bytes!`, so a change to one rebuilds the crate; for files
/// added or removed, add a `build.rs` that prints
/// `cargo::rerun-if-changed=skills`.
#[cfg_attr(docsrs, doc(cfg(feature = "skills")))]
pub use mcp_runtime_macros::skills;
#[doc = include_str!("docs/tool.md")]
pub use mcp_runtime_macros::tool;
pub use mrtr::{
    ElicitForm, Elicitation, FormChoice, FormField, Input, RequestStateOptions, Root,
    SamplingRequest, SamplingResult, UrlElicitation,
};
pub use prompt::{FromPromptArgument, IntoPromptResult, PromptError, PromptValue};
pub use protocol::json::ArgumentError;
pub use protocol::{
    Annotations, CacheHint, CacheHints, CacheScope, CallToolResult, ClientCapabilities, Completion,
    Content, ErrorObject, GetPromptResult, Implementation, LogLevel, PromptMessage, Provenance,
    ReadResourceResult, RequestId, RequestMeta, ResourceContents, Role, SamplingContent,
};
pub use registry::{BuildError, Items};
pub use resource::{IntoResourceContents, QueryVariable, ReadError, TemplateVariable};
pub use security::KeyRing;
pub use server::{Exchange, Server, ServerBuilder};
pub use source::{RequestSource, TransportKind};
pub use state::{Requirement, State, States};
pub use tokio_util::sync::CancellationToken;
pub use tool::{HeaderArgument, IntoToolResult, Json, Structured};
#[cfg(feature = "http")]
#[cfg_attr(docsrs, doc(cfg(feature = "http")))]
pub use transport::http::{
    HttpOptions, HttpRequest, McpBody, McpService, PeerAddr, SERVER_CARD_SCHEMA, SERVER_CARD_TYPE,
    ServerCard,
};
pub use transport::stdio::StdioOptions;

/// Items used by macro-generated code. Not a public API: anything here may
/// change in any release (the macros and this crate are released in
/// lockstep, pinned with `=`).
#[doc(hidden)]
pub mod __private {
    pub use ::linkme;
    pub use ::schemars;
    pub use ::serde;
    pub use ::serde_json;
    pub use mcp_runtime_macros::link_package_library;

    #[cfg(feature = "skills")]
    pub use crate::skills::{StaticFile, StaticSkill, from_static as skills_from_static};

    pub use crate::apps::{extension as apps_extension, with_view_meta as apps_view_meta};
    pub use crate::bind::{BindContext, BindNothing, Probe};
    pub use crate::blocking::{on_request_thread, run_blocking};
    pub use crate::complete::{
        ArgumentCompleter, CompleteFn, CompletionFuture, CompletionRequest, run_completer,
    };
    pub use crate::context::{Context, FromContext};
    pub use crate::extension::{Extension, LINKED_EXTENSIONS};
    pub use crate::mrtr::answer::assert_form_field;
    pub use crate::mrtr::declared::{
        AskFns, AskFuture, DeclaredAsk, FormAsk, RootsAsk, SampleAsk, UrlAsk, form_ask, roots_ask,
        sample_ask, url_ask,
    };
    pub use crate::mrtr::{ElicitForm, FormChoice, FormField, Input, SamplingRequest};
    pub use crate::prompt::{
        FromPromptArgument, IntoPromptResult, PromptError, PromptFuture, PromptGetFn,
        PromptInvocation, box_prompt_future,
    };
    pub use crate::protocol::CacheHint;
    pub use crate::protocol::json::ArgumentError;
    pub use crate::protocol::json::parse_arguments;
    pub use crate::protocol::{CacheScope, IconTheme, Role};
    pub use crate::registry::{
        InputSchema, Location, OutputSchema, PROMPTS, PromptEntry, RESOURCES, ResourceEntry,
        StaticAnnotations, StaticIcon, StaticPromptArgument, StaticTaskSupport,
        StaticToolAnnotations, TOOLS, ToolEntry,
    };
    pub use crate::resource::{
        IntoResourceContents, QueryVariable, ResourceFuture, ResourceInvocation, ResourceReadFn,
        TemplateVariable, box_resource_future,
    };
    pub use crate::schema::input_schema;
    pub use crate::tool::{
        ArgumentDeserialize, ArgumentSchema, ConvertNothing, ConvertResult, EnforcesSchemas,
        HeaderArgument, IntoToolResult, OutputJsonSchema, OutputSerialize, Same, SchemaValidation,
        ToolCallFn, ToolFuture, ToolInvocation, assert_header_value, assert_output,
        assert_schema_validation,
    };
    pub use crate::uri_template::TemplatePart;

    /// Boxes the layer of `#[tool(layer = ...)]`; a value that is not a
    /// layer fails here, spanned at the attribute's expression.
    pub fn item_layer<L: crate::middleware::IntoItemLayer>(
        layer: L,
    ) -> crate::middleware::ItemLayer {
        layer.into_item_layer()
    }
    pub use crate::middleware::ItemLayer;

    /// The criterion micro-benchmarks' access to the request path's steps.
    #[cfg(feature = "bench-internals")]
    pub mod bench {
        pub use crate::bench_internals::*;
    }

    /// The Tasks engine, named by what `#[tool(task)]` generates.
    pub use crate::tasks::{TASK_ENGINE, TASK_ENGINES, TaskEngine};

    /// The handler's [`Input`], for declared asks.
    pub fn context_input(context: &crate::Context) -> &Input {
        context.input()
    }

    /// Boxes a tool's future for the registry.
    pub fn box_tool_future<F>(future: F) -> ToolFuture
    where
        F: ::core::future::Future<Output = crate::protocol::CallToolResult> + 'static,
    {
        ::std::boxed::Box::pin(future)
    }
}

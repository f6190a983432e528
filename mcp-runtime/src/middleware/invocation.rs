//! What an item layer sees: one invocation of a tool, a resource read, a
//! prompt or an extension method, and what it answers with.

use std::fmt;

use serde_json::value::RawValue;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::context::Context;
use crate::protocol::method_result::MethodResult;
use crate::protocol::{
    CallToolResult, ErrorObject, GetPromptResult, ReadResourceResult, ToolAnnotations,
};

use super::next::{Level, sealed};

/// What kind of item an [`Invocation`] runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ItemKind {
    // The discriminants index `Layers::items`.
    /// A tool (`tools/call`).
    Tool,
    /// A resource or resource template (`resources/read`).
    Resource,
    /// A prompt (`prompts/get`).
    Prompt,
    /// An extension's method.
    Method,
}

impl ItemKind {
    /// `tool`, `resource`, `prompt` or `method`.
    pub fn as_str(self) -> &'static str {
        match self {
            ItemKind::Tool => "tool",
            ItemKind::Resource => "resource",
            ItemKind::Prompt => "prompt",
            ItemKind::Method => "method",
        }
    }
}

/// The item an invocation runs, as the server declares it.
#[derive(Clone, Debug)]
pub(crate) struct Item {
    pub(crate) kind: ItemKind,
    /// The tool's or prompt's name, the resource's URI or template, the
    /// method's name.
    pub(crate) name: Box<str>,
    pub(crate) scopes: Vec<&'static str>,
    pub(crate) group: Option<&'static str>,
    pub(crate) annotations: Option<ToolAnnotations>,
    /// `timeout_ms = ...`, the innermost limit.
    pub(crate) timeout: Option<Duration>,
}

impl Item {
    pub(crate) fn new(kind: ItemKind, name: impl Into<Box<str>>) -> Item {
        Item {
            kind,
            name: name.into(),
            scopes: Vec::new(),
            group: None,
            annotations: None,
            timeout: None,
        }
    }
}

/// What runs the item once the stack passes the invocation on.
pub(crate) type Runner = Arc<
    dyn Fn(Invocation) -> Pin<Box<dyn Future<Output = Result<Output, ErrorObject>>>> + Send + Sync,
>;

/// One invocation of an item, as item layers see it: the item (its kind,
/// name, scopes, group and a tool's annotations), the arguments as JSON,
/// and the request's [`Context`] (the caller, `_meta`, cancellation and the
/// application's states).
///
/// Cheap to clone, so that a retry layer can call the rest of the stack
/// again: each call runs the handler from the top.
#[derive(Clone)]
pub struct Invocation {
    pub(crate) item: Arc<Item>,
    /// A resource read's URI.
    pub(crate) uri: Option<Arc<str>>,
    pub(crate) arguments: Arc<str>,
    pub(crate) context: Context,
    pub(crate) run: Runner,
}

impl sealed::Sealed for Invocation {}

impl Level for Invocation {
    type Response = Output;
}

impl Invocation {
    /// Whether a tool, a resource, a prompt or a method runs.
    pub fn kind(&self) -> ItemKind {
        self.item.kind
    }

    /// The tool's or prompt's name, the method's name, or the resource's
    /// URI (a template's, for a read a template serves: see
    /// [`uri`](Self::uri) for the URI read).
    pub fn name(&self) -> &str {
        &self.item.name
    }

    /// The URI a resource read asks for; `None` for other kinds.
    pub fn uri(&self) -> Option<&str> {
        self.uri.as_deref()
    }

    /// The arguments as JSON text: a tool's `arguments` object (`{}` when
    /// absent), a prompt's arguments (strings), a method's `params`
    /// without `_meta`; `{}` for a resource read.
    pub fn arguments(&self) -> &str {
        &self.arguments
    }

    /// The arguments parsed into `T`.
    ///
    /// # Errors
    /// When they do not fit `T`.
    pub fn arguments_as<T: serde::de::DeserializeOwned>(&self) -> serde_json::Result<T> {
        serde_json::from_str(&self.arguments)
    }

    /// The OAuth scopes the item declares (`scopes = [...]`).
    pub fn scopes(&self) -> &[&'static str] {
        &self.item.scopes
    }

    /// The item's group (`group = "..."`), if it has one.
    pub fn group(&self) -> Option<&'static str> {
        self.item.group
    }

    /// A tool's annotations, if it declares any.
    pub fn annotations(&self) -> Option<&ToolAnnotations> {
        self.item.annotations.as_ref()
    }

    /// The request's context: the caller ([`Context::principal`],
    /// [`Context::source`], [`Context::client_info`]), `_meta`, the
    /// cancellation token, and the server's states ([`Context::state`]).
    pub fn context(&self) -> &Context {
        &self.context
    }
}

impl fmt::Debug for Invocation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Invocation")
            .field("kind", &self.item.kind)
            .field("name", &self.item.name)
            .field("uri", &self.uri)
            .field("arguments", &self.arguments)
            .finish_non_exhaustive()
    }
}

/// What an item's invocation answered with. A layer may change it, or
/// answer with one of its own: [`Output::Tool`] with
/// [`CallToolResult::error`] is a tool error the model sees (`isError`).
#[derive(Clone, Debug)]
#[non_exhaustive]
pub enum Output {
    /// A tool's result.
    Tool(CallToolResult),
    /// A resource's contents.
    Resource(ReadResourceResult),
    /// A prompt's messages.
    Prompt(GetPromptResult),
    /// An extension method's result.
    Method(MethodResult),
    /// The handler asked the client for input (a multi round-trip
    /// request): the request answers `input_required`, and the handler
    /// runs again, from the top, when the client retries with the answers.
    InputRequired,
    /// The call became a task (the Tasks extension): the request answers
    /// with its handle (`resultType: "task"`), and the tool runs on.
    Task(TaskHandle),
}

/// A task a call created: what the Tasks engine, the innermost layer of a
/// `#[tool(task)]` tool, answers a client that declared the extension with.
///
/// A layer should pass it on. If every clone of it is dropped before the
/// request is answered with it (a layer panicked or failed after the
/// engine answered, or replaced the output), the task is cancelled: its
/// client never learned its id, so nobody could poll or cancel it, and it
/// would run on, holding a place in its caller's quota.
#[derive(Clone)]
pub struct TaskHandle {
    id: Arc<str>,
    /// The handle's JSON, with the server's info when it is sent.
    written: Arc<WriteHandle>,
    delivery: Arc<Delivery>,
}

/// Writes a task handle's JSON, given the server's info.
type WriteHandle = dyn Fn(Option<&RawValue>) -> Vec<u8> + Send + Sync;

/// Whether a handle reached the answer; if none did, `abandoned` tells the
/// task's worker to stop.
///
/// Cancelling, rather than putting the id in the error the request is
/// answered with: no client reads a task id out of an error (the spec puts
/// none there, and an error says the call failed), so the task would still
/// be an orphan.
struct Delivery {
    delivered: AtomicBool,
    abandoned: CancellationToken,
}

impl Drop for Delivery {
    fn drop(&mut self) {
        if !*self.delivered.get_mut() {
            self.abandoned.cancel();
        }
    }
}

impl TaskHandle {
    /// The handle of the task `id`, whose worker stops when `abandoned` is
    /// cancelled: when no clone of the handle reached the answer.
    pub(crate) fn new(
        id: impl Into<Arc<str>>,
        written: impl Fn(Option<&RawValue>) -> Vec<u8> + Send + Sync + 'static,
        abandoned: CancellationToken,
    ) -> TaskHandle {
        TaskHandle {
            id: id.into(),
            written: Arc::new(written),
            delivery: Arc::new(Delivery {
                delivered: AtomicBool::new(false),
                abandoned,
            }),
        }
    }

    /// The task's id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The `CreateTaskResult` JSON the request is answered with. It carries
    /// the handle on (through the request layers) until
    /// [`delivered`](Self::delivered).
    pub(crate) fn written(&self, server_info: Option<&RawValue>) -> Vec<u8> {
        (self.written)(server_info)
    }

    /// The answer with the handle was framed for its client: from here on,
    /// the client has the id.
    pub(crate) fn delivered(&self) {
        self.delivery.delivered.store(true, Ordering::Relaxed);
    }
}

impl fmt::Debug for TaskHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TaskHandle")
            .field("id", &self.id)
            .finish_non_exhaustive()
    }
}

impl Output {
    /// Whether this is a tool's result with `isError` set.
    pub fn is_tool_error(&self) -> bool {
        matches!(self, Output::Tool(result) if result.is_error)
    }
}

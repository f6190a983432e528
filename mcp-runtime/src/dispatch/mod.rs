//! The stateless dispatcher: one request in, one reply out, decided from
//! the request alone.
//!
//! Checks run in the order the spec implies (and the conformance suite
//! tests): `_meta` present (`-32602`), then — on HTTP, in the transport —
//! headers agree with the body (`-32020`), then the version is supported
//! (`-32022`), the method is offered (`-32601`), and finally the method's
//! own parameters and capability needs.

mod access;
pub(crate) mod completion;
pub(crate) mod discover;
pub(crate) mod envelope;
mod guard;
mod head;
mod key;
mod meta;

mod mrtr;
mod page;
mod prompts;
mod resources;
pub(crate) mod subscriptions;
mod tools;

use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use bytes::Bytes;
use futures_util::FutureExt as _;
use serde_json::value::RawValue;
use tokio_util::sync::CancellationToken;
use tracing::Instrument as _;

use self::envelope::{MetaMember, Rejection, Request};
use self::meta::MetaError;
use crate::protocol::method::{Method, MethodName};

use self::page::Pages;
use self::prompts::Prompts;
use self::resources::{Resources, Templates};
use self::subscriptions::Offered;
use self::tools::Tools;
use crate::changes::Changes;
use crate::context::{Outbox, Scope};
use crate::mrtr::state::StateSealer;
use crate::protocol::jsonrpc::{error_frame, result_frame};
use crate::protocol::{
    CacheHint, ErrorObject, Implementation, PROTOCOL_VERSION, RequestId, RequestMeta,
};
use crate::registry::Registry;
use crate::security::Principal;
use crate::transport::http::HttpRequest;

/// Protocol versions the dispatcher serves.
pub(crate) const SUPPORTED_VERSIONS: &[&str] = &[PROTOCOL_VERSION];

/// Settings that shape the dispatcher's answers.
#[derive(Clone, Debug)]
pub(crate) struct Settings {
    pub(crate) info: Implementation,
    pub(crate) instructions: Option<String>,
    pub(crate) page_size: usize,
    pub(crate) list_cache: CacheHint,
    pub(crate) discover_cache: CacheHint,
    pub(crate) read_cache: CacheHint,
    pub(crate) max_resource_bytes: usize,
    pub(crate) server_info_in_results: bool,
    /// Advertise and deliver `listChanged` notifications.
    pub(crate) list_changed: bool,
    /// Advertise and deliver `notifications/resources/updated`.
    pub(crate) resource_subscriptions: bool,
}

/// One finished answer: a complete JSON-RPC response frame, and the error
/// code when it is an error (HTTP picks its status from it).
#[derive(Debug, Clone)]
pub(crate) struct Reply {
    pub(crate) frame: Bytes,
    pub(crate) error_code: Option<i32>,
}

impl Reply {
    pub(crate) fn result(id: &RequestId, result: &[u8]) -> Reply {
        Reply {
            frame: Bytes::from(result_frame(id, result)),
            error_code: None,
        }
    }

    pub(crate) fn error(id: Option<&RequestId>, error: &ErrorObject) -> Reply {
        Reply {
            frame: Bytes::from(error_frame(id, error)),
            error_code: Some(error.code),
        }
    }
}

impl From<Box<Rejection>> for Reply {
    fn from(rejection: Box<Rejection>) -> Reply {
        Reply::error(rejection.id.as_ref(), &rejection.error)
    }
}

/// An answer known without running a handler.
pub(crate) enum Immediate {
    /// The result's JSON, to be framed with the request's id.
    Result(Bytes),
    /// A complete error frame.
    Error(Reply),
}

/// What a request needs: an answer known at once, or its handler run.
enum Triage {
    Answered(Result<Bytes, ErrorObject>),
    Run(Method),
}

/// A request whose `_meta` has been read and checked for presence.
#[derive(Debug)]
pub(crate) struct Prepared {
    pub(crate) request: Request,
    /// Boxed: it is large, and it moves with the request's future.
    pub(crate) meta: Box<RequestMeta>,
    /// The HTTP request it arrived in, on the HTTP transport.
    pub(crate) http: Option<Arc<HttpRequest>>,
}

#[derive(Debug)]
pub(crate) struct Dispatcher {
    registry: Registry,
    settings: Settings,
    sealer: StateSealer,
    changes: Changes,
    offered: Offered,
    server_info: Option<Box<RawValue>>,
    discover: Bytes,
    tool_pages: Pages<Tools>,
    resource_pages: Pages<Resources>,
    template_pages: Pages<Templates>,
    prompt_pages: Pages<Prompts>,
}

impl Dispatcher {
    pub(crate) fn new(
        registry: Registry,
        settings: &Settings,
        changes: Changes,
        sealer: StateSealer,
    ) -> Dispatcher {
        let server_info = settings
            .server_info_in_results
            .then(|| serde_json::value::to_raw_value(&settings.info).expect("serializes"));
        let info = server_info.as_deref();
        let offered = Offered {
            tools: settings.list_changed && !registry.tools().is_empty(),
            prompts: settings.list_changed && !registry.prompts().is_empty(),
            resources: settings.list_changed && registry.has_resources(),
            resource_updates: settings.resource_subscriptions && registry.has_resources(),
        };
        Dispatcher {
            discover: discover::build(&registry, settings, offered, info),
            tool_pages: Pages::new(registry.tools(), settings.page_size, settings.list_cache),
            resource_pages: Pages::new(
                registry.resources(),
                settings.page_size,
                settings.list_cache,
            ),
            template_pages: Pages::new(
                registry.templates_by_text(),
                settings.page_size,
                settings.list_cache,
            ),
            prompt_pages: Pages::new(registry.prompts(), settings.page_size, settings.list_cache),
            registry,
            settings: settings.clone(),
            sealer,
            changes,
            offered,
            server_info,
        }
    }

    /// The keys that seal `requestState`; the legacy adapter seals its
    /// session ids with them too, so every instance can open them.
    #[cfg(feature = "legacy")]
    pub(crate) fn state_keys(&self) -> &crate::security::KeyRing {
        &self.sealer.keys
    }

    /// The handle that announces changes to subscriptions.
    pub(crate) fn changes(&self) -> &Changes {
        &self.changes
    }

    /// Reads `_meta` and checks the fields every request must carry.
    pub(crate) fn prepare(&self, mut request: Request) -> Result<Prepared, Reply> {
        match read_meta(&mut request) {
            Ok(meta) => Ok(Prepared {
                request,
                meta,
                http: None,
            }),
            Err(MetaError::Invalid(error)) => Err(Reply::error(Some(&request.id), &error)),
            Err(MetaError::LegacyInitialize { requested }) => Err(Reply::error(
                Some(&request.id),
                &ErrorObject::unsupported_version(&requested, SUPPORTED_VERSIONS),
            )),
        }
    }

    /// Answers a prepared request. Notifications the handler sends before
    /// its result go to `outbox`; `shutdown` ends long-lived requests
    /// (`subscriptions/listen`) gracefully.
    ///
    /// Composed from combinators rather than written as an `async fn`: an
    /// async wrapper would keep a second copy of its arguments next to the
    /// inner future's. This future is boxed for every request that runs a
    /// handler, and kept under 1 KiB it stays in the allocator's fast
    /// per-thread cache.
    pub(crate) fn run(
        self: &Arc<Self>,
        prepared: Prepared,
        outbox: Outbox,
        shutdown: CancellationToken,
    ) -> impl Future<Output = Reply> + 'static {
        let id = prepared.request.id.clone();
        let span = request_span(&prepared.request, &prepared.meta);
        AssertUnwindSafe(
            self.clone()
                .answer(prepared, outbox, shutdown)
                .instrument(span),
        )
        .catch_unwind()
        .map(move |answer| match answer {
            Ok(Ok(result)) => Reply::result(&id, &result),
            Ok(Err(error)) => Reply::error(Some(&id), &error),
            Err(panic) => {
                tracing::error!(panic = panic_message(&*panic), "request handler panicked");
                Reply::error(Some(&id), &ErrorObject::internal_error())
            }
        })
    }

    /// Answers at once what needs no handler: version and method errors,
    /// `server/discover` and the lists (pre-serialized pages). `None` when
    /// the request must [`run`](Self::run). Transports call this first, so
    /// that static answers skip the per-request channels and context.
    ///
    /// `list_filter` is the caller whose lists hide what they may not use
    /// (authorization with hiding on).
    pub(crate) fn answer_at_once(
        &self,
        prepared: &Prepared,
        list_filter: Option<&Principal>,
    ) -> Option<Reply> {
        self.immediate(prepared, list_filter)
            .map(|immediate| match immediate {
                Immediate::Result(result) => Reply::result(&prepared.request.id, &result),
                Immediate::Error(reply) => reply,
            })
    }

    /// Like [`answer_at_once`](Self::answer_at_once), with a result left
    /// as the shared bytes it was serialized into once (discover, list
    /// pages), for a transport that can send it without copying it into
    /// a frame.
    pub(crate) fn immediate(
        &self,
        prepared: &Prepared,
        list_filter: Option<&Principal>,
    ) -> Option<Immediate> {
        match self.triage(&prepared.request, &prepared.meta, list_filter) {
            Triage::Run(_) => None,
            Triage::Answered(Ok(result)) => Some(Immediate::Result(result)),
            Triage::Answered(Err(error)) => Some(Immediate::Error(Reply::error(
                Some(&prepared.request.id),
                &error,
            ))),
        }
    }

    fn triage(
        &self,
        request: &Request,
        meta: &RequestMeta,
        list_filter: Option<&Principal>,
    ) -> Triage {
        if !SUPPORTED_VERSIONS.contains(&meta.protocol_version.as_str()) {
            return Triage::Answered(Err(ErrorObject::unsupported_version(
                &meta.protocol_version,
                SUPPORTED_VERSIONS,
            )));
        }
        let method = match &request.method {
            MethodName::Known(method) if self.offers(*method) => *method,
            other => return Triage::Answered(Err(ErrorObject::method_not_found(other.as_str()))),
        };
        // Only the lists read the whole of `params` here (their cursor).
        let params = || request.params();
        if let Some(principal) = list_filter.filter(|_| method.is_list()) {
            let cursor = match params().map(self::params::<ListParams>).transpose() {
                Ok(params) => params.and_then(|p| p.cursor),
                Err(error) => return Triage::Answered(Err(error)),
            };
            return Triage::Answered(self.list_for(method, principal, cursor.as_deref()));
        }
        Triage::Answered(match method {
            Method::Discover => Ok(self.discover.clone()),
            Method::ToolsList
            | Method::ResourcesList
            | Method::ResourcesTemplatesList
            | Method::PromptsList => self.list(method, params()),
            Method::ToolsCall
            | Method::ResourcesRead
            | Method::PromptsGet
            | Method::CompletionComplete
            | Method::SubscriptionsListen => return Triage::Run(method),
        })
    }

    async fn answer(
        self: Arc<Self>,
        prepared: Prepared,
        outbox: Outbox,
        shutdown: CancellationToken,
    ) -> Result<Bytes, ErrorObject> {
        let Prepared {
            request,
            meta,
            http,
        } = prepared;
        let list_filter = http.as_deref().and_then(HttpRequest::list_filter);
        let method = match self.triage(&request, &meta, list_filter) {
            Triage::Answered(answer) => return answer,
            Triage::Run(method) => method,
        };
        match method {
            // Boxed: a stream's state is large, and inline it would be
            // copied with every other request's future.
            Method::SubscriptionsListen => Box::pin(subscriptions::listen(
                &request,
                self.offered,
                &self.changes,
                &outbox,
                &shutdown,
                self.server_info.as_deref(),
            ))
            .await
            .map(Bytes::from),
            _ => {
                let cancellation = CancellationToken::new();
                // Dropping this request before it finishes (the client
                // cancelled or went away) cancels the token handlers watch.
                let cancel_on_drop = cancellation.clone().drop_guard();
                let scope = Scope {
                    request_id: request.id.clone(),
                    method: method.name(),
                    meta,
                    outbox,
                    cancellation,
                    changes: self.changes.clone(),
                    http,
                };
                // Boxed so that this future stays small: it is moved into
                // the transport's task, and each handler's state is large.
                let result = Box::pin(self.run_handler(method, &request, scope)).await;
                cancel_on_drop.disarm();
                result
            }
        }
    }

    /// Runs the user code a request names.
    async fn run_handler(
        &self,
        method: Method,
        request: &Request,
        scope: Scope,
    ) -> Result<Bytes, ErrorObject> {
        // `tools/call` reads the members the envelope located.
        let params = || request.params().unwrap_or("{}");
        match method {
            Method::ToolsCall => tools::call(self, request, scope).await,
            Method::ResourcesRead => resources::read(self, params(), scope).await,
            Method::PromptsGet => prompts::get(self, params(), scope).await,
            Method::CompletionComplete => completion::complete(self, params(), scope).await,
            _ => Err(ErrorObject::method_not_found(method.name())),
        }
    }

    /// How many tools it serves.
    #[cfg(feature = "bench-internals")]
    pub(crate) fn tool_count(&self) -> usize {
        self.registry.tools().len()
    }

    /// The `Mcp-Param-*` headers tool `name` mirrors, if it is a tool.
    pub(crate) fn tool_header_params(&self, name: &str) -> Option<&[crate::schema::HeaderParam]> {
        self.registry
            .tool(name)
            .map(|t| t.header_params.as_slice())
            .filter(|p| !p.is_empty())
    }

    /// Whether this server offers `method` (list methods only exist when
    /// there is something to list).
    fn offers(&self, method: Method) -> bool {
        let registry = &self.registry;
        match method {
            Method::Discover => true,
            Method::ToolsList | Method::ToolsCall => !registry.tools().is_empty(),
            Method::ResourcesList | Method::ResourcesTemplatesList | Method::ResourcesRead => {
                registry.has_resources()
            }
            Method::PromptsList | Method::PromptsGet => !registry.prompts().is_empty(),
            Method::CompletionComplete => registry.has_completers(),
            Method::SubscriptionsListen => self.offered.any(),
        }
    }
}

/// Reads the request's `_meta`, requiring the fields every request must
/// carry. Moves it out of the request when the envelope already read it.
fn read_meta(request: &mut Request) -> Result<Box<RequestMeta>, MetaError> {
    match request.take_meta() {
        Some(MetaMember::Read(meta::ReadMeta(meta))) => Ok(meta),
        Some(MetaMember::Raw(range)) => meta::parse_wire(&request.text()[range]),
        // No `_meta` found: the slow path says exactly what is wrong.
        None => meta::parse(request.params(), request.method.as_str()),
    }
}

fn request_span(request: &Request, meta: &RequestMeta) -> tracing::Span {
    let span = tracing::info_span!(
        "mcp.request",
        id = %request.id,
        method = request.method.as_str(),
        traceparent = tracing::field::Empty,
        tracestate = tracing::field::Empty,
    );
    if let Some(traceparent) = &meta.traceparent {
        span.record("traceparent", traceparent.as_str());
    }
    if let Some(tracestate) = &meta.tracestate {
        span.record("tracestate", tracestate.as_str());
    }
    span
}

/// Parses a method's parameters, reporting the first bad field as `-32602`.
fn params<'de, T: serde::Deserialize<'de>>(params: &'de str) -> Result<T, ErrorObject> {
    crate::tool::parse_arguments(params)
        .map_err(|e| ErrorObject::invalid_params(format!("Invalid params: {e}")))
}

#[derive(serde::Deserialize)]
struct ListParams {
    #[serde(default)]
    cursor: Option<String>,
}

impl Dispatcher {
    /// Answers a paginated `*/list` request from its pages.
    fn list(&self, method: Method, params: Option<&str>) -> Result<Bytes, ErrorObject> {
        let cursor = match params {
            Some(params) => self::params::<ListParams>(params)?.cursor,
            None => None,
        };
        let cursor = cursor.as_deref();
        let info = self.server_info.as_deref();
        let registry = &self.registry;
        match method {
            Method::ToolsList => self.tool_pages.page(cursor, info, registry.tools()),
            Method::ResourcesList => self.resource_pages.page(cursor, info, registry.resources()),
            Method::ResourcesTemplatesList => {
                let templates = registry.templates_by_text();
                self.template_pages.page(cursor, info, templates)
            }
            Method::PromptsList => self.prompt_pages.page(cursor, info, registry.prompts()),
            other => Err(ErrorObject::method_not_found(other.name())),
        }
    }
}

pub(crate) fn panic_message(panic: &(dyn std::any::Any + Send)) -> &str {
    panic
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| panic.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("<non-string panic payload>")
}

//! Request observers: what sees every request a request layer would see,
//! and how it was answered, without the power to change either.
//!
//! A request layer wraps the request's work: the dispatcher builds a view
//! of the request for it and boxes the futures it passes through, about
//! 3,000 instructions a request even for a layer that does nothing. An
//! observer is two calls, one when the request starts and one when it is
//! answered, made by the dispatcher itself: what metrics need (a count, a
//! duration, the outcome) at a tenth of the cost.

use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;
use std::time::Instant;

use bytes::Bytes;

use super::request::{Request, member, shared_is_tool_error};
use crate::protocol::jsonrpc::Unframed;
use crate::protocol::{ErrorObject, RequestId, RequestMeta};
use crate::source::RequestSource;

/// Sees every request that request layers see (answers known at once
/// included, `subscriptions/listen` not), when it starts and when it is
/// answered. Called on the request's task: keep it short (count, record,
/// hand off). Given with
/// [`plugin::request_observer`](crate::plugin::request_observer).
///
/// ```
/// use std::sync::atomic::{AtomicU64, Ordering};
///
/// use mcp_runtime::middleware::{Finished, ObservedRequest, RequestObserver};
///
/// /// Counts the tool errors.
/// #[derive(Default)]
/// struct ToolErrors(AtomicU64);
///
/// impl RequestObserver for ToolErrors {
///     fn finished(&self, _: &ObservedRequest<'_>, outcome: Finished<'_>) {
///         if matches!(outcome, Finished::Completed(result) if result.is_tool_error()) {
///             self.0.fetch_add(1, Ordering::Relaxed);
///         }
///     }
/// }
///
/// let server = mcp_runtime::ServerBuilder::new("counted", "1.0.0")
///     .with(mcp_runtime::plugin::request_observer(ToolErrors::default()));
/// # let _ = server;
/// ```
pub trait RequestObserver: Send + Sync + 'static {
    /// `request` starts: its handler is about to run, or its answer is
    /// known at once.
    fn started(&self, request: &ObservedRequest<'_>) {
        let _ = request;
    }

    /// `request` was answered with `outcome`.
    fn finished(&self, request: &ObservedRequest<'_>, outcome: Finished<'_>);

    /// `request` ended unanswered: the client cancelled it or went away.
    fn abandoned(&self, request: &ObservedRequest<'_>) {
        let _ = request;
    }
}

/// One request, as an observer sees it.
pub struct ObservedRequest<'a> {
    method: &'a str,
    id: &'a RequestId,
    name: Option<&'a [u8]>,
    uri: Option<&'a [u8]>,
    meta: &'a RequestMeta,
    source: &'a RequestSource,
    started: Instant,
}

impl<'a> ObservedRequest<'a> {
    /// The method, e.g. `tools/call`.
    pub fn method(&self) -> &'a str {
        self.method
    }

    /// The request's id.
    pub fn id(&self) -> &'a RequestId {
        self.id
    }

    /// `params.name` when it is a string: the tool of a `tools/call`, the
    /// prompt of a `prompts/get`.
    pub fn name(&self) -> Option<Cow<'a, str>> {
        member(self.name?)
    }

    /// `params.name` as the client wrote it (JSON text, quotes included):
    /// what a request like the last one can be told by without decoding
    /// its name.
    pub fn raw_name(&self) -> Option<&'a [u8]> {
        self.name
    }

    /// `params.uri` when it is a string: the resource of a
    /// `resources/read`.
    pub fn uri(&self) -> Option<Cow<'a, str>> {
        member(self.uri?)
    }

    /// The request's `_meta`: the protocol version, the client's
    /// capabilities, its trace context.
    pub fn meta(&self) -> &'a RequestMeta {
        self.meta
    }

    /// Where it came from: the transport, the caller, and on HTTP the
    /// request it arrived in.
    pub fn source(&self) -> &'a RequestSource {
        self.source
    }

    /// When the dispatcher started it (after the envelope and `_meta` were
    /// read).
    pub fn started(&self) -> Instant {
        self.started
    }
}

impl fmt::Debug for ObservedRequest<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ObservedRequest")
            .field("method", &self.method)
            .field("id", &self.id)
            .finish_non_exhaustive()
    }
}

/// How a request was answered. (The variants are not named `Result` and
/// `Error`: a public item named `Result` makes the compiler spell out
/// `std::result::Result` in every diagnostic of a crate that can see it.)
#[derive(Debug)]
pub enum Finished<'a> {
    /// With a result, a tool's error result (`isError: true`) included.
    Completed(ObservedResult<'a>),
    /// With a JSON-RPC error.
    Failed(&'a ErrorObject),
}

/// A request's result, as an observer sees it.
#[derive(Clone, Copy)]
pub struct ObservedResult<'a>(ResultRef<'a>);

/// A result as the dispatcher holds it: JSON shared as it is, or written
/// for this request (which knows whether it is a tool error).
#[derive(Clone, Copy)]
pub(crate) enum ResultRef<'a> {
    Shared(&'a Bytes),
    Unframed(&'a Unframed),
}

impl ObservedResult<'_> {
    /// Whether it is a tool's error result (`isError: true`). Known without
    /// parsing for a result the dispatcher wrote.
    pub fn is_tool_error(&self) -> bool {
        match self.0 {
            ResultRef::Unframed(json) => json.is_tool_error(),
            ResultRef::Shared(json) => shared_is_tool_error(json),
        }
    }
}

impl fmt::Debug for ObservedResult<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ObservedResult")
            .field("is_tool_error", &self.is_tool_error())
            .finish()
    }
}

/// The request observers a server was given, in order.
#[derive(Clone, Default)]
pub(crate) struct RequestObservers(Arc<[Arc<dyn RequestObserver>]>);

impl RequestObservers {
    /// An observation of one request, when anything observes requests:
    /// `started` is called now, `finished` or `abandoned` later.
    pub(crate) fn start(&self, request: impl FnOnce() -> Request) -> Option<Box<Observation>> {
        if self.0.is_empty() {
            return None;
        }
        let observation = Box::new(Observation {
            observers: self.0.clone(),
            request: request(),
            started: Instant::now(),
            finished: false,
        });
        let observed = observation.observed();
        each(&observation.observers, |o| o.started(&observed));
        Some(observation)
    }
}

impl FromIterator<Arc<dyn RequestObserver>> for RequestObservers {
    fn from_iter<I: IntoIterator<Item = Arc<dyn RequestObserver>>>(iter: I) -> Self {
        RequestObservers(iter.into_iter().collect())
    }
}

impl fmt::Debug for RequestObservers {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} request observers", self.0.len())
    }
}

/// One request under observation: answered with
/// [`finish`](Self::finish), or abandoned when dropped unanswered. It
/// holds the request as request layers see it (the code that makes that
/// view is in every binary already).
pub(crate) struct Observation {
    observers: Arc<[Arc<dyn RequestObserver>]>,
    request: Request,
    started: Instant,
    finished: bool,
}

impl Observation {
    fn observed(&self) -> ObservedRequest<'_> {
        let request = &self.request;
        ObservedRequest {
            method: &request.method,
            id: &request.id,
            name: request.name.as_deref(),
            uri: request.uri.as_deref(),
            meta: &request.meta,
            source: &request.source,
            started: self.started,
        }
    }

    /// The request was answered with `answer`.
    pub(crate) fn finish(mut self: Box<Self>, answer: Result<ResultRef<'_>, &ErrorObject>) {
        self.finished = true;
        let outcome = || match answer {
            Ok(result) => Finished::Completed(ObservedResult(result)),
            Err(error) => Finished::Failed(error),
        };
        let observed = self.observed();
        each(&self.observers, |o| o.finished(&observed, outcome()));
    }
}

impl Drop for Observation {
    fn drop(&mut self) {
        if !self.finished {
            let observed = self.observed();
            each(&self.observers, |o| o.abandoned(&observed));
        }
    }
}

/// Calls `call` on each observer, in order: a panicking observer costs
/// only its report, never the request or the connection.
fn each(observers: &[Arc<dyn RequestObserver>], call: impl Fn(&dyn RequestObserver)) {
    for observer in observers {
        let observe = std::panic::AssertUnwindSafe(|| call(&**observer));
        if let Err(panic) = std::panic::catch_unwind(observe) {
            crate::diagnostics::report_panic("a request observer", &*panic);
        }
    }
}

//! Argument completion: completers declared next to prompts and resource
//! templates with `complete(argument = function)`.

use std::collections::BTreeMap;
use std::fmt;
use std::future::Future;
use std::pin::Pin;

use crate::context::Context;
use crate::protocol::Completion;

/// What a completer is asked.
#[derive(Debug)]
pub struct CompletionRequest {
    pub(crate) argument: String,
    pub(crate) value: String,
    pub(crate) context: BTreeMap<String, String>,
    pub(crate) ctx: Context,
}

impl CompletionRequest {
    /// The argument being completed.
    pub fn argument(&self) -> &str {
        &self.argument
    }

    /// What the user has typed so far.
    pub fn value(&self) -> &str {
        &self.value
    }

    /// The value already chosen for another argument, if any
    /// (`context.arguments` on the wire).
    pub fn resolved(&self, argument: &str) -> Option<&str> {
        self.context.get(argument).map(String::as_str)
    }

    /// The request context.
    pub fn context(&self) -> &Context {
        &self.ctx
    }
}

/// The future of one completion.
pub type CompletionFuture = Pin<Box<dyn Future<Output = Result<Completion, String>>>>;

/// A completer the registry can call.
pub type CompleteFn = fn(CompletionRequest) -> CompletionFuture;

/// One argument's completer, as registered.
#[derive(Debug)]
pub struct ArgumentCompleter {
    /// The prompt argument or template variable it completes.
    pub argument: &'static str,
    /// The completer.
    pub complete: CompleteFn,
}

/// What a completer may return: a list of values or a [`Completion`]
/// (with `total`/`hasMore`), optionally in a `Result`. At most 100 values
/// are sent; the rest are counted.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be returned from a completer",
    note = "return `Vec<String>`, `Vec<&'static str>` or `Completion`, optionally in a `Result<_, E>` where `E: Display`"
)]
pub trait IntoCompletion {
    /// The completion.
    fn into_completion(self) -> Result<Completion, String>;
}

impl IntoCompletion for Completion {
    fn into_completion(self) -> Result<Completion, String> {
        Ok(self.bounded())
    }
}

impl IntoCompletion for Vec<String> {
    fn into_completion(self) -> Result<Completion, String> {
        Ok(Completion::new(self))
    }
}

impl IntoCompletion for Vec<&'static str> {
    fn into_completion(self) -> Result<Completion, String> {
        Ok(Completion::new(self))
    }
}

impl<T: IntoCompletion, E: fmt::Display> IntoCompletion for Result<T, E> {
    fn into_completion(self) -> Result<Completion, String> {
        self.map_err(|e| e.to_string())?.into_completion()
    }
}

/// Marker for completers written as `fn(&CompletionRequest) -> T`.
#[derive(Debug)]
pub enum SyncCompleter {}

/// Marker for completers written as `async fn(CompletionRequest) -> T`.
#[derive(Debug)]
pub enum AsyncCompleter {}

/// Functions usable as completers: `fn(&CompletionRequest) -> T` or
/// `async fn(CompletionRequest) -> T`, where `T: IntoCompletion`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a completer",
    label = "not a completer function",
    note = "a completer is `fn(&CompletionRequest) -> T` or `async fn(CompletionRequest) -> T` where `T` is `Vec<String>`, `Vec<&'static str>` or `Completion`"
)]
pub trait Completer<Marker> {
    /// Runs the completer.
    fn run(self, request: CompletionRequest) -> CompletionFuture;
}

impl<F, T> Completer<SyncCompleter> for F
where
    F: Fn(&CompletionRequest) -> T,
    T: IntoCompletion,
{
    fn run(self, request: CompletionRequest) -> CompletionFuture {
        let result = self(&request).into_completion();
        Box::pin(std::future::ready(result))
    }
}

impl<F, Fut> Completer<AsyncCompleter> for F
where
    F: Fn(CompletionRequest) -> Fut,
    Fut: Future + 'static,
    Fut::Output: IntoCompletion,
{
    fn run(self, request: CompletionRequest) -> CompletionFuture {
        let future = self(request);
        Box::pin(async move { future.await.into_completion() })
    }
}

/// Calls `completer` (used by generated code).
pub fn run_completer<M, C: Completer<M>>(
    completer: C,
    request: CompletionRequest,
) -> CompletionFuture {
    completer.run(request)
}

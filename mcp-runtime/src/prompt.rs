//! The handler side of prompts: argument types, return types, and the glue
//! the macro calls into.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt;
use std::future::Future;
use std::pin::Pin;

use crate::context::Context;
use crate::protocol::{GetPromptResult, PromptMessage};

/// Why `prompts/get` failed inside the prompt. Return it from a
/// `#[prompt]` function as `Result<T, PromptError>` (`T` any prompt return
/// type) to refuse an argument the way a missing or unparseable one is
/// refused:
///
/// ```
/// use mcp_runtime::{PromptError, prompt};
///
/// /// Plans a trip of a few days.
/// #[prompt]
/// fn trip(days: u32) -> Result<String, PromptError> {
///     if !(1..=14).contains(&days) {
///         // -32602 "Invalid argument `days` for prompt trip: from 1 to 14 days"
///         return Err(PromptError::invalid_argument("days", "from 1 to 14 days"));
///     }
///     Ok(format!("Plan a {days}-day trip."))
/// }
/// # fn main() {}
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum PromptError {
    /// An argument is missing or does not parse (`-32602`).
    InvalidArgument {
        /// The argument's name.
        name: &'static str,
        /// What is wrong with it.
        message: String,
    },
    /// The prompt failed (`-32603` with this message).
    Failed(String),
}

impl PromptError {
    /// Argument `name` (as clients spell it: its `rename`, if it has one)
    /// is not acceptable: `-32602` "Invalid argument `name` for prompt
    /// ...: `message`", as for an argument that does not parse.
    pub fn invalid_argument(name: &'static str, message: impl Into<String>) -> Self {
        PromptError::InvalidArgument {
            name,
            message: message.into(),
        }
    }

    /// The prompt failed: `-32603` "Prompt ... failed: `message`", as for
    /// `Err` of any other error type.
    pub fn failed(message: impl Into<String>) -> Self {
        PromptError::Failed(message.into())
    }
}

/// The future of one `prompts/get`.
pub type PromptFuture = Pin<Box<dyn Future<Output = Result<GetPromptResult, PromptError>>>>;

/// Generated per prompt: parses the arguments and starts rendering.
pub type PromptGetFn = fn(PromptInvocation<'_>) -> Result<PromptFuture, PromptError>;

/// What the dispatcher hands a prompt's generated glue.
#[derive(Debug)]
pub struct PromptInvocation<'a> {
    /// The arguments, all strings on the wire.
    pub arguments: &'a BTreeMap<String, String>,
    /// The request context.
    pub context: Context,
}

impl PromptInvocation<'_> {
    /// Parses argument `name` into the parameter's type.
    pub fn argument<T: FromPromptArgument>(&self, name: &'static str) -> Result<T, PromptError> {
        T::from_argument(self.arguments.get(name).map(String::as_str))
            .map_err(|message| PromptError::InvalidArgument { name, message })
    }
}

/// A value a prompt argument can be parsed into (arguments are strings on
/// the wire). Implement it for your own `FromStr` types with
/// `impl PromptValue for MyType {}`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a prompt argument",
    label = "not a prompt argument type",
    note = "prompt arguments are strings on the wire: use `String`, a number, `bool` or `char` (or `Option` of one for an optional argument), or implement `PromptValue` for a `FromStr` type"
)]
pub trait PromptValue: std::str::FromStr<Err: fmt::Display> {}

macro_rules! prompt_values {
    ($($ty:ty),*) => {$( impl PromptValue for $ty {} )*};
}
prompt_values!(
    String, bool, char, i8, i16, i32, i64, i128, isize, u8, u16, u32, u64, u128, usize, f32, f64
);

/// How a parameter reads its prompt argument: `T` is required,
/// `Option<T>` optional.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a prompt argument",
    label = "not a prompt argument type",
    note = "prompt arguments are strings on the wire: use `String`, a number, `bool` or `char` (or `Option` of one for an optional argument), or implement `PromptValue` for a `FromStr` type"
)]
pub trait FromPromptArgument: Sized {
    /// Whether the argument must be given.
    const REQUIRED: bool;
    /// Reads the argument (`None` when absent).
    fn from_argument(value: Option<&str>) -> Result<Self, String>;
}

#[diagnostic::do_not_recommend]
impl<T: PromptValue> FromPromptArgument for T {
    const REQUIRED: bool = true;
    fn from_argument(value: Option<&str>) -> Result<Self, String> {
        let value = value.ok_or_else(|| "missing required argument".to_owned())?;
        value.parse().map_err(|e: T::Err| e.to_string())
    }
}

#[diagnostic::do_not_recommend]
impl<T: PromptValue> FromPromptArgument for Option<T> {
    const REQUIRED: bool = false;
    fn from_argument(value: Option<&str>) -> Result<Self, String> {
        value
            .map(|v| v.parse().map_err(|e: T::Err| e.to_string()))
            .transpose()
    }
}

/// What a `#[prompt]` function may return.
///
/// A string becomes one user text message; a [`PromptMessage`] or a
/// `Vec<PromptMessage>` gives roles and any content; [`GetPromptResult`]
/// adds a description. `Result<T, E>` with `E: Display` turns `Err` into a
/// JSON-RPC error carrying the message (`-32603`), and `Result<T,
/// PromptError>` into the error the [`PromptError`] names (`-32602` for an
/// invalid argument).
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be returned from a `#[prompt]` function",
    label = "not prompt messages",
    note = "return `String`, `&'static str`, `PromptMessage`, `Vec<PromptMessage>` or `GetPromptResult`, or a `Result<_, E>` of one where `E: Display` (or `E` is `PromptError`)"
)]
pub trait IntoPromptResult {
    /// The rendered prompt.
    fn into_prompt_result(self) -> Result<GetPromptResult, PromptError>;
}

impl IntoPromptResult for String {
    fn into_prompt_result(self) -> Result<GetPromptResult, PromptError> {
        Ok(GetPromptResult::new([PromptMessage::user(self)]))
    }
}

impl IntoPromptResult for &'static str {
    fn into_prompt_result(self) -> Result<GetPromptResult, PromptError> {
        Ok(GetPromptResult::new([PromptMessage::user(self)]))
    }
}

impl IntoPromptResult for Cow<'static, str> {
    fn into_prompt_result(self) -> Result<GetPromptResult, PromptError> {
        Ok(GetPromptResult::new([PromptMessage::user(
            self.into_owned(),
        )]))
    }
}

impl IntoPromptResult for PromptMessage {
    fn into_prompt_result(self) -> Result<GetPromptResult, PromptError> {
        Ok(GetPromptResult::new([self]))
    }
}

impl IntoPromptResult for Vec<PromptMessage> {
    fn into_prompt_result(self) -> Result<GetPromptResult, PromptError> {
        Ok(GetPromptResult::new(self))
    }
}

impl IntoPromptResult for GetPromptResult {
    fn into_prompt_result(self) -> Result<GetPromptResult, PromptError> {
        Ok(self)
    }
}

impl<T: IntoPromptResult, E: fmt::Display> IntoPromptResult for Result<T, E> {
    fn into_prompt_result(self) -> Result<GetPromptResult, PromptError> {
        self.map_err(|e| PromptError::Failed(e.to_string()))?
            .into_prompt_result()
    }
}

/// A prompt's own [`PromptError`]: an invalid argument keeps its `-32602`,
/// a failure its `-32603`. (`PromptError` is not `Display`, so this impl
/// and the one for `E: Display` do not overlap, as with `ReadError`.)
impl<T: IntoPromptResult> IntoPromptResult for Result<T, PromptError> {
    fn into_prompt_result(self) -> Result<GetPromptResult, PromptError> {
        self?.into_prompt_result()
    }
}

/// Boxes a prompt rendering for the registry.
pub fn box_prompt_future<F>(future: F) -> PromptFuture
where
    F: Future<Output = Result<GetPromptResult, PromptError>> + 'static,
{
    Box::pin(future)
}

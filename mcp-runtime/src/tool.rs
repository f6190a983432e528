//! The handler side of tools: what a `#[tool]` function may return, and the
//! glue the macro generates calls into.

use std::borrow::Cow;
use std::fmt;
use std::future::Future;
use std::pin::Pin;

use schemars::{JsonSchema, Schema};
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::bind::Probe;
use crate::context::Context;
use crate::protocol::json::ArgumentError;
use crate::protocol::{CallToolResult, Content};

/// The future of one tool call. Handlers need not be `Send`: the built-in
/// transports run each request on the thread that received it.
pub type ToolFuture = Pin<Box<dyn Future<Output = CallToolResult>>>;

/// Generated per tool: parses the arguments and starts the call.
pub type ToolCallFn = fn(ToolInvocation<'_>) -> Result<ToolFuture, ArgumentError>;

/// What the dispatcher hands a tool's generated glue.
#[derive(Debug)]
pub struct ToolInvocation<'a> {
    /// The JSON text of the `arguments` object (`{}` when absent).
    pub arguments: &'a str,
    /// The request context.
    pub context: Context,
}

/// Types a tool argument mirrored into an `Mcp-Param-*` header may have:
/// strings, integers and booleans (`x-mcp-header` excludes `number`).
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be mirrored into an `Mcp-Param-*` header",
    label = "not a string, integer or boolean",
    note = "`#[arg(header = \"...\")]` applies to `String`, integer and `bool` arguments (or an `Option` of one); floating-point numbers and structured values cannot be headers"
)]
pub trait HeaderArgument {}

macro_rules! header_values {
    ($($ty:ty),*) => {$( impl HeaderArgument for $ty {} )*};
}
header_values!(
    String, bool, i8, i16, i32, i64, isize, u8, u16, u32, u64, usize
);

impl<T: HeaderArgument> HeaderArgument for Option<T> {}

/// Instantiated by generated code to check a header argument's type.
pub fn assert_header_value<T: HeaderArgument>() {}

/// Implemented when hand-written input schemas can be enforced: with the
/// `schema-validation` feature, which compiles in the validator.
#[diagnostic::on_unimplemented(
    message = "a hand-written `input_schema` needs the `schema-validation` feature of `mcp-runtime`",
    label = "this schema would be published but not enforced",
    note = "turn the feature on where you depend on it: `mcp-runtime = {{ version = \"0.1\", features = [\"schema-validation\"] }}`; it compiles in the JSON Schema validator that checks every call's arguments",
    note = "or remove `input_schema` and let the schema be generated from the parameters, which serde then enforces"
)]
pub trait EnforcesSchemas {}

/// The marker generated code checks [`EnforcesSchemas`] on.
#[derive(Debug)]
pub struct SchemaValidation;

#[cfg(feature = "schema-validation")]
impl EnforcesSchemas for SchemaValidation {}

/// Instantiated by generated code for a tool with a hand-written input
/// schema.
pub fn assert_schema_validation<T: EnforcesSchemas>() {}
/// What a `#[tool]` argument's type needs to be read from the call's
/// `arguments`: `serde::Deserialize` (bound on every argument type).
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a tool argument: it does not implement `serde::Deserialize`",
    label = "needs `#[derive(serde::Deserialize)]`",
    note = "derive both traits a tool argument needs: `#[derive(serde::Deserialize, schemars::JsonSchema)]` on `{Self}` (serde with its `derive` feature, schemars 1.x)",
    note = "a value from the request rather than from the client's arguments (`State<T>`, `Extension<T>`, `&Context`, ...) is a `#[ctx]` parameter"
)]
pub trait ArgumentDeserialize: DeserializeOwned {}

impl<T: DeserializeOwned> ArgumentDeserialize for T {}

/// What a `#[tool]` argument's type needs to be published in the tool's
/// `inputSchema`: `schemars::JsonSchema`, of schemars 1.x.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a tool argument: it does not implement `schemars::JsonSchema` (1.x)",
    label = "needs `#[derive(schemars::JsonSchema)]`",
    note = "derive both traits a tool argument needs: `#[derive(serde::Deserialize, schemars::JsonSchema)]` on `{Self}`",
    note = "if `{Self}` derives `JsonSchema` already, it is another version's trait: mcp-runtime uses schemars 1.x, so depend on `schemars = \"1\"`",
    note = "a value from the request rather than from the client's arguments (`State<T>`, `Extension<T>`, `&Context`, ...) is a `#[ctx]` parameter"
)]
pub trait ArgumentSchema: JsonSchema {}

impl<T: JsonSchema + ?Sized> ArgumentSchema for T {}

/// What the `T` of [`Json<T>`] or [`Structured<T>`] needs to be sent as
/// `structuredContent`: `serde::Serialize`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a tool's structured output: it does not implement `serde::Serialize`",
    label = "needs `#[derive(serde::Serialize)]`",
    note = "derive both traits structured output needs: `#[derive(serde::Serialize, schemars::JsonSchema)]` on `{Self}` (serde with its `derive` feature, schemars 1.x)"
)]
pub trait OutputSerialize: Serialize {}

impl<T: Serialize + ?Sized> OutputSerialize for T {}

/// What the `T` of [`Json<T>`] or [`Structured<T>`] needs to be published
/// as the tool's `outputSchema`: `schemars::JsonSchema`, of schemars 1.x.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a tool's structured output: it does not implement `schemars::JsonSchema` (1.x)",
    label = "needs `#[derive(schemars::JsonSchema)]`",
    note = "derive both traits structured output needs: `#[derive(serde::Serialize, schemars::JsonSchema)]` on `{Self}`",
    note = "if `{Self}` derives `JsonSchema` already, it is another version's trait: mcp-runtime uses schemars 1.x, so depend on `schemars = \"1\"`"
)]
pub trait OutputJsonSchema: JsonSchema {}

impl<T: JsonSchema + ?Sized> OutputJsonSchema for T {}

/// `T` itself, as an associated type: lets generated code name a type
/// through tokens of its choosing (for where rustc reports a failed bound).
pub trait Same {
    /// `T`.
    type Type: ?Sized;
}

impl<T: ?Sized> Same for T {
    type Type = T;
}

/// Checks the `T` of a `Json<T>` or `Structured<T>` return type.
pub const fn assert_output<T: OutputSerialize + OutputJsonSchema>() {}

/// Converts a return value into the call's result.
pub trait ConvertResult<T> {
    /// `value.into_tool_result()`.
    fn convert(&self, value: T) -> CallToolResult;
}

impl<T: IntoToolResult> ConvertResult<T> for Probe<T> {
    fn convert(&self, value: T) -> CallToolResult {
        value.into_tool_result()
    }
}

/// The fallback for return types that are not tool results (see
/// [`Probe`]): never runs.
pub trait ConvertNothing<T> {
    /// Never called.
    fn convert(&self, value: T) -> CallToolResult;
}

impl<T> ConvertNothing<T> for &Probe<T> {
    fn convert(&self, _: T) -> CallToolResult {
        unreachable!("a `#[tool]` return type without `IntoToolResult` does not compile")
    }
}

/// What a `#[tool]` function may return.
///
/// Text (`String`, `&'static str`), [`Content`], `Vec<Content>`, a full
/// [`CallToolResult`], structured output ([`Json`], [`Structured`]), and
/// `Result<T, E>` of any of these where `E: Display`: an `Err` becomes a tool
/// execution error (`isError: true`) carrying the error's text.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be returned from a `#[tool]` function",
    label = "not a tool result",
    note = "return `String`, `&'static str`, `Content`, `Vec<Content>`, `CallToolResult`, `Json<T>` or `Structured<T>`, or a `Result<_, E>` of one where `E: Display`"
)]
pub trait IntoToolResult {
    /// Converts the return value into a `tools/call` result.
    fn into_tool_result(self) -> CallToolResult;

    /// The `outputSchema` this return type implies, if any.
    fn output_schema() -> Option<Schema> {
        None
    }
}

impl IntoToolResult for CallToolResult {
    fn into_tool_result(self) -> CallToolResult {
        self
    }
}

impl IntoToolResult for String {
    fn into_tool_result(self) -> CallToolResult {
        CallToolResult::success([Content::text(self)])
    }
}

impl IntoToolResult for &'static str {
    fn into_tool_result(self) -> CallToolResult {
        CallToolResult::success([Content::text(self)])
    }
}

impl IntoToolResult for Cow<'static, str> {
    fn into_tool_result(self) -> CallToolResult {
        CallToolResult::success([Content::text(self)])
    }
}

impl IntoToolResult for Content {
    fn into_tool_result(self) -> CallToolResult {
        CallToolResult::success([self])
    }
}

impl IntoToolResult for Vec<Content> {
    fn into_tool_result(self) -> CallToolResult {
        CallToolResult::success(self)
    }
}

impl<T: IntoToolResult, E: fmt::Display> IntoToolResult for Result<T, E> {
    fn into_tool_result(self) -> CallToolResult {
        match self {
            Ok(value) => value.into_tool_result(),
            Err(error) => CallToolResult::error(error.to_string()),
        }
    }

    fn output_schema() -> Option<Schema> {
        T::output_schema()
    }
}

/// Structured output: `structuredContent` is `T` serialized, the text block
/// is the same JSON (for clients that only read text), and the tool's
/// `outputSchema` is generated from `T`.
///
/// Use [`Structured`] to choose the text yourself.
///
/// `T`'s `Serialize` and `JsonSchema` must agree. Debug builds check that
/// they do on every call (feature `debug-checks`; the guide's testing chapter says where to
/// turn it on so that it builds once): content
/// that does not fit the `outputSchema` turns the call into an internal
/// error naming the path, logged with `tracing::error!`. Release builds
/// send what `Serialize` wrote.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Json<T>(pub T);

impl<T: OutputSerialize + OutputJsonSchema> IntoToolResult for Json<T> {
    fn into_tool_result(self) -> CallToolResult {
        Structured::new(self.0).into_tool_result()
    }

    fn output_schema() -> Option<Schema> {
        Some(crate::schema::output_schema::<T>())
    }
}

/// Structured output with content of your choosing.
///
/// ```
/// # use mcp_runtime::Structured;
/// # #[derive(serde::Serialize, schemars::JsonSchema)] struct Sum { sum: i64 }
/// let out = Structured::new(Sum { sum: 3 }).with_text("3");
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Structured<T> {
    value: T,
    content: Option<Vec<Content>>,
}

impl<T> Structured<T> {
    /// `value` as `structuredContent`, with its JSON as the text block.
    pub fn new(value: T) -> Self {
        Structured {
            value,
            content: None,
        }
    }

    /// Replaces the text block with `text`.
    #[must_use]
    pub fn with_text(self, text: impl Into<String>) -> Self {
        self.with_content(vec![Content::text(text)])
    }

    /// Replaces the unstructured content.
    #[must_use]
    pub fn with_content(mut self, content: Vec<Content>) -> Self {
        self.content = Some(content);
        self
    }
}

impl<T: OutputSerialize + OutputJsonSchema> IntoToolResult for Structured<T> {
    fn into_tool_result(self) -> CallToolResult {
        let value = match crate::protocol::finite::to_value(&self.value) {
            Ok(value) => value,
            Err(error) => {
                tracing::error!(%error, "structured tool output failed to serialize");
                return CallToolResult::error(format!(
                    "the tool's structured output could not be serialized: {error}"
                ));
            }
        };
        // `to_string` of the value, not its `Display`: the same bytes, in
        // half the instructions (Display goes through `fmt::Write`).
        let content = self.content.unwrap_or_else(|| {
            let text = serde_json::to_string(&value).unwrap_or_default();
            vec![Content::text(text)]
        });
        CallToolResult::success(content).with_structured_content(value)
    }

    fn output_schema() -> Option<Schema> {
        Some(crate::schema::output_schema::<T>())
    }
}

#[cfg(test)]
mod tests {
    use crate::protocol::json::parse_arguments;

    #[derive(serde::Deserialize, Debug)]
    #[serde(deny_unknown_fields)]
    #[expect(dead_code, reason = "test types: only their derived impls are used")]
    struct Args {
        a: i64,
        items: Vec<Item>,
    }

    #[derive(serde::Deserialize, Debug)]
    #[expect(dead_code, reason = "test types: only their derived impls are used")]
    struct Item {
        name: String,
    }

    #[test]
    fn argument_errors_name_the_path() {
        let err = parse_arguments::<Args>(r#"{"a": "x", "items": []}"#).unwrap_err();
        assert_eq!(
            err.to_string(),
            "`a`: invalid type: string \"x\", expected i64"
        );
        let err = parse_arguments::<Args>(r#"{"a": 1, "items": [{"name": 2}]}"#).unwrap_err();
        assert_eq!(
            err.to_string(),
            "`items[0].name`: invalid type: integer `2`, expected a string"
        );
        let err = parse_arguments::<Args>(r#"{"items": []}"#).unwrap_err();
        assert_eq!(err.to_string(), "missing field `a`");
        let err = parse_arguments::<Args>(r#"{"a": 1, "items": [], "zz": 1}"#).unwrap_err();
        assert_eq!(
            err.to_string(),
            "`zz`: unknown field `zz`, expected `a` or `items`"
        );
    }
}

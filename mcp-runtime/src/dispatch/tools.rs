//! `tools/list` and `tools/call`.

use std::borrow::Cow;

use bytes::Bytes;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::value::RawValue;

use super::Dispatcher;
use super::envelope::{Request, json_str};
use super::extensions::require_extension;
use super::guard::Handler;
use super::mrtr::{self, Rounds, Target};
use super::page::Listing;
use crate::context::{Context, Scope};
use crate::mrtr::{Input, run_round};
use crate::protocol::finite::Finite;
use crate::protocol::{CallToolResult, ErrorObject};
use crate::registry::RegisteredTool;
use crate::tool::ToolInvocation;

/// `tools/list`.
pub(crate) struct Tools;

impl Listing for Tools {
    const KIND: &'static str = "tools";
    const KEY: &'static str = "tools";
    type Item = RegisteredTool;
    fn name(tool: &RegisteredTool) -> &str {
        tool.name()
    }
    fn show(tool: &RegisteredTool) -> impl Serialize + '_ {
        tool.descriptor()
    }
}

#[derive(Deserialize)]
struct CallParams<'a> {
    #[serde(borrow)]
    name: Cow<'a, str>,
    #[serde(borrow, default, deserialize_with = "present")]
    arguments: Option<&'a RawValue>,
}

pub(super) fn present<'de, D: Deserializer<'de>>(d: D) -> Result<Option<&'de RawValue>, D::Error> {
    <&RawValue>::deserialize(d).map(Some)
}

pub(super) async fn call(
    dispatcher: &Dispatcher,
    request: &Request,
    scope: Scope,
) -> Result<Bytes, ErrorObject> {
    let head = request.head();
    let name = request.member(&head.name).and_then(json_str);
    let (name, arguments) = match name {
        Some(name) => (name, request.member(&head.arguments)),
        // Missing or not a string: the full parse says what is wrong.
        None => {
            let parsed: CallParams<'_> = super::params(request.params().unwrap_or("{}"))?;
            (parsed.name, parsed.arguments.map(RawValue::get))
        }
    };
    let Some(tool) = dispatcher.tool(&name) else {
        return Err(ErrorObject::invalid_params(format!("Unknown tool: {name}")));
    };
    for extension in tool.extensions() {
        require_extension(extension, &scope.meta.client_capabilities)?;
    }
    let arguments = arguments_json(&tool, arguments)?;
    let retry = mrtr::read_retry_members(
        request.member(&head.input_responses),
        request.member(&head.request_state),
    )?;
    let target = Target {
        method: "tools/call",
        name: tool.name(),
        arguments,
    };
    let (rounds, input) = Rounds::start(&dispatcher.sealer, target, retry, &scope, tool.state)?;
    let context = Context::new(scope, input.clone());
    let server_info = dispatcher.server_info.as_deref();
    let Some(result) = invoke(&tool, arguments, context, &input).await? else {
        return rounds.stopped(&input, server_info);
    };
    #[cfg(all(debug_assertions, feature = "debug-checks"))]
    check_output(&tool, &result)?;
    Ok(Bytes::from(
        serde_json::to_vec(&Finite(&result.wire(server_info))).map_err(|error| {
            tracing::error!(%error, tool = tool.name(), "tool result failed to serialize");
            ErrorObject::internal_error()
        })?,
    ))
}

/// The arguments object to parse: `{}` when absent and nothing is required.
fn arguments_json<'a>(
    tool: &RegisteredTool,
    arguments: Option<&'a str>,
) -> Result<&'a str, ErrorObject> {
    let name = tool.name();
    match arguments {
        None | Some("null") if tool.requires_arguments => Err(ErrorObject::invalid_params(
            format!("Missing arguments for tool {name}: it has required parameters"),
        )),
        None | Some("null") => Ok("{}"),
        Some(json) if json.starts_with('{') => Ok(json),
        Some(_) => Err(ErrorObject::invalid_params(format!(
            "Invalid arguments for tool {name}: `arguments` must be a JSON object"
        ))),
    }
}

/// Debug builds: structured content that does not fit the tool's
/// `outputSchema` is a bug in the server (its `Serialize` and `JsonSchema`
/// disagree), so the call fails with an internal error, as the spec's
/// protocol errors include server errors. Not a tool error (`isError`):
/// those are feedback the model can act on, and no retry of the model's
/// fixes the server's types.
#[cfg(all(debug_assertions, feature = "debug-checks"))]
fn check_output(tool: &RegisteredTool, result: &CallToolResult) -> Result<(), ErrorObject> {
    let Some(structured) = &result.structured_content else {
        return Ok(());
    };
    let Some(mismatch) = tool.output_mismatch(structured) else {
        return Ok(());
    };
    let name = tool.name();
    let at = if mismatch.path.is_empty() {
        "its root"
    } else {
        &mismatch.path
    };
    tracing::error!(
        tool = name,
        path = at,
        schema_path = %mismatch.schema_path,
        problem = %mismatch.problem,
        more = mismatch.more,
        "structured content does not match the tool's outputSchema (a debug-build check)"
    );
    Err(ErrorObject::new(
        crate::protocol::error_code::INTERNAL_ERROR,
        format!(
            "Internal error: the structuredContent of tool {name} does not match its outputSchema at {at}: {} (checked in debug builds)",
            mismatch.problem
        ),
    ))
}

/// Runs the tool; `None` if it suspended on an unanswered ask.
async fn invoke(
    tool: &RegisteredTool,
    arguments: &str,
    context: Context,
    input: &Input,
) -> Result<Option<CallToolResult>, ErrorObject> {
    let name = tool.name();
    let handler = Handler { kind: "tool", name };
    let invocation = ToolInvocation { arguments, context };
    match handler.start(|| tool.start(invocation))? {
        Ok(future) => run_round(input, handler.finish(future)).await.transpose(),
        Err(error) => Ok(Some(CallToolResult::error(format!(
            "Invalid arguments for tool {name}: {error}"
        )))),
    }
}

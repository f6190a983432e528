//! Running a tool's handler and writing its result: shared by ordinary
//! calls (`tools`) and calls that become tasks (`tasks`).

use serde_json::value::RawValue;

use super::guard::Handler;
use crate::context::Context;
use crate::mrtr::{Input, run_round};
use crate::protocol::finite::Finite;
use crate::protocol::jsonrpc::Unframed;
use crate::protocol::{CallToolResult, ErrorObject};
use crate::registry::RegisteredTool;
use crate::tool::ToolInvocation;

/// What a written result starts with room for, besides the server's
/// identity: growing from serde_json's 128 bytes cost a reallocation for
/// most results.
const WRITTEN_CAPACITY: usize = 256;

/// The result's bytes, as `tools/call` answers (checked against the
/// tool's output schema in debug builds with `debug-checks`), behind room
/// for the answer's frame.
pub(super) fn written_unframed(
    tool: &RegisteredTool,
    result: &CallToolResult,
    server_info: Option<&RawValue>,
) -> Result<Unframed, ErrorObject> {
    let mut out = Unframed::with_capacity(written_capacity(server_info));
    write_result(out.json_mut(), tool, result, server_info)?;
    out.set_tool_error(result.is_error);
    Ok(out)
}

fn written_capacity(server_info: Option<&RawValue>) -> usize {
    WRITTEN_CAPACITY + server_info.map_or(0, |info| info.get().len())
}

fn write_result(
    out: &mut Vec<u8>,
    tool: &RegisteredTool,
    result: &CallToolResult,
    server_info: Option<&RawValue>,
) -> Result<(), ErrorObject> {
    #[cfg(all(debug_assertions, feature = "debug-checks"))]
    check_output(tool, result)?;
    if result.write_text_only(out, server_info) {
        return Ok(());
    }
    serde_json::to_writer(out, &Finite(&result.wire(server_info))).map_err(|error| {
        tracing::error!(%error, tool = tool.name(), "tool result failed to serialize");
        ErrorObject::internal_error()
    })
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
pub(super) async fn invoke(
    tool: &RegisteredTool,
    arguments: &str,
    context: Context,
    input: &Input,
) -> Result<Option<CallToolResult>, ErrorObject> {
    let name = tool.name();
    let handler = Handler { kind: "tool", name };
    handler.needs(tool.requires(), &context)?;
    let invocation = ToolInvocation { arguments, context };
    match handler.start(|| tool.start(invocation))? {
        Ok(future) => run_round(input, handler.finish(future)).await.transpose(),
        Err(error) => Ok(Some(invalid_arguments(name, &error))),
    }
}

/// The tool error for arguments that do not fit the tool's input.
pub(super) fn invalid_arguments(name: &str, error: &dyn std::fmt::Display) -> CallToolResult {
    CallToolResult::error(format!("Invalid arguments for tool {name}: {error}"))
}

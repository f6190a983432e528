//! Diagnostic tools the stateless and header scenarios probe: capability
//! errors, what may appear on a response stream, logging without a
//! `logLevel`, list-change triggers and a header-mirrored argument.

use mcp_runtime::{Context, ElicitForm, Elicitation, Logger, SamplingResult, tool};

/// Asks the client's model for a one-line answer, so it needs the
/// `sampling` capability: a request that does not declare it fails with
/// `-32021` and `requiredCapabilities: {"sampling": {}}` before the body
/// runs.
#[tool(annotations(read_only, open_world = false))]
fn test_missing_capability(
    #[sample(prompt = "Reply with one word.", max_tokens = 10)] reply: SamplingResult,
) -> String {
    format!("The model replied: {}", reply.text())
}

/// An answer to [`test_streaming_elicitation`].
#[derive(serde::Deserialize, schemars::JsonSchema, ElicitForm)]
struct Confirmation {
    /// Whether to go ahead.
    ok: bool,
}

/// Needs the user's confirmation. Stateless servers never send requests
/// on the response stream: the question comes back as an
/// `input_required` result instead.
#[tool(annotations(read_only, open_world = false))]
fn test_streaming_elicitation(
    #[elicit("Go ahead?")] confirmation: Elicitation<Confirmation>,
) -> &'static str {
    match confirmation {
        Elicitation::Accepted(Confirmation { ok: true }) => "Confirmed.",
        _ => "Not confirmed.",
    }
}

/// Logs at `info`, then answers. The runtime sends
/// `notifications/message` only when the request set
/// `io.modelcontextprotocol/logLevel`, so a plain call logs nothing.
#[tool(annotations(read_only, open_world = false))]
fn test_logging_tool(#[ctx] log: Logger) -> &'static str {
    log.info("test_logging_tool was called");
    "Logged (if the request asked for log messages)."
}

/// Announces that the tool list changed, to every `subscriptions/listen`
/// stream that asked for tool changes. The suite uses it to check the
/// fan-out and its filters.
#[tool(annotations(read_only = false, destructive = false, open_world = false))]
fn test_trigger_tool_change(#[ctx] ctx: &Context) -> &'static str {
    ctx.changes().tools_changed();
    "Announced notifications/tools/list_changed."
}

/// Announces that the prompt list changed, to every `subscriptions/listen`
/// stream that asked for prompt changes.
#[tool(annotations(read_only = false, destructive = false, open_world = false))]
fn test_trigger_prompt_change(#[ctx] ctx: &Context) -> &'static str {
    ctx.changes().prompts_changed();
    "Announced notifications/prompts/list_changed."
}

/// Echoes a region that HTTP clients also send as the `Mcp-Param-Region`
/// header (published as `x-mcp-header`); the runtime rejects a request
/// whose header does not match the argument.
#[tool(annotations(read_only, open_world = false))]
fn test_custom_header(
    /// The region to echo; mirrored into `Mcp-Param-Region`.
    #[arg(header = "Region")]
    region: String,
) -> String {
    format!("Region: {region}")
}

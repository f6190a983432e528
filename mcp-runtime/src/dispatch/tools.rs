//! `tools/list` and `tools/call`.

use std::borrow::Cow;

use bytes::Bytes;
use serde::{Deserialize, Deserializer};
use serde_json::value::RawValue;

use super::Settings;
use super::guard::Handler;
use super::page::Pages;
use crate::context::Context;
use crate::protocol::{CallToolResult, ErrorObject};
use crate::registry::{RegisteredTool, Registry};
use crate::tool::ToolInvocation;

pub(super) fn pages(
    registry: &Registry,
    settings: &Settings,
    server_info: Option<&RawValue>,
) -> Pages {
    let tools: Vec<_> = registry.tools().iter().map(|t| &t.descriptor).collect();
    Pages::build(
        "tools",
        "tools",
        &tools,
        tools.iter().map(|t| t.name.clone()),
        settings.page_size,
        settings.list_cache,
        server_info,
    )
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
    registry: &Registry,
    params: &str,
    context: Context,
    server_info: Option<&RawValue>,
) -> Result<Bytes, ErrorObject> {
    let params: CallParams<'_> = super::params(params)?;
    let Some(tool) = registry.tool(&params.name) else {
        return Err(ErrorObject::invalid_params(format!(
            "Unknown tool: {}",
            params.name
        )));
    };
    let arguments = arguments_json(tool, params.arguments)?;
    let result = invoke(tool, arguments, context).await?;
    Ok(Bytes::from(
        serde_json::to_vec(&result.wire(server_info)).map_err(|error| {
            tracing::error!(%error, tool = tool.entry.name, "tool result failed to serialize");
            ErrorObject::internal_error()
        })?,
    ))
}

/// The arguments object to parse: `{}` when absent and nothing is required.
fn arguments_json<'a>(
    tool: &RegisteredTool,
    arguments: Option<&'a RawValue>,
) -> Result<&'a str, ErrorObject> {
    let name = tool.entry.name;
    match arguments.map(RawValue::get) {
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

async fn invoke(
    tool: &RegisteredTool,
    arguments: &str,
    context: Context,
) -> Result<CallToolResult, ErrorObject> {
    let name = tool.entry.name;
    let handler = Handler { kind: "tool", name };
    let invocation = ToolInvocation { arguments, context };
    match handler.start(|| (tool.entry.call)(invocation))? {
        Ok(future) => handler.finish(future).await,
        Err(error) => Ok(CallToolResult::error(format!(
            "Invalid arguments for tool {name}: {error}"
        ))),
    }
}

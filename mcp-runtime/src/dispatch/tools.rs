//! `tools/list` and `tools/call`.

use std::borrow::Cow;
use std::pin::Pin;
use std::sync::Arc;

use bytes::Bytes;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::value::RawValue;

use super::envelope::{Request, json_str};
use super::extensions::require_extension;
use super::invoke::{invalid_arguments, invoke, written_unframed};
use super::layers::{Called, Layered, runtime_tool};
use super::mrtr::{self, Rounds, Target};
use super::page::Listing;
use super::{Dispatcher, ResultJson};
use crate::context::{Context, Scope};
use crate::middleware::ItemKind;
use crate::mrtr::Input;
use crate::protocol::ErrorObject;
use crate::registry::RegisteredTool;
use crate::registry::ToolRef;

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

/// An `async` block, not an `async fn`, so that its state holds `scope`
/// once (see `Dispatcher::answer`).
#[expect(
    clippy::manual_async_fn,
    reason = "an async fn would hold the scope twice"
)]
pub(super) fn call<'a>(
    dispatcher: &'a Arc<Dispatcher>,
    request: &'a Request,
    scope: Scope,
) -> impl Future<Output = Result<ResultJson, ErrorObject>> + 'a {
    async move {
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
            return Err(ErrorObject::unknown_item("tool", &name));
        };
        for extension in tool.extensions() {
            require_extension(extension, &scope.meta.client_capabilities)?;
        }
        let arguments = arguments_json(&tool, arguments)?;
        let retry = mrtr::read_retry_members(
            request.member(&head.input_responses),
            request.member(&head.request_state),
        )?;
        if tool.entry().is_some_and(|entry| entry.task.is_some())
            && let Err(error) = tool.check_input(arguments)
        {
            // A hand-written schema, checked before a task is made of
            // the call: a task's worker starts the handler from its entry.
            let result = invalid_arguments(tool.name(), &error);
            return written_unframed(&tool, &result, dispatcher.server_info.as_deref())
                .map(ResultJson::Unframed);
        }
        let target = Target {
            method: "tools/call",
            name: tool.name(),
            arguments,
        };
        let (rounds, input) =
            match Rounds::start(&dispatcher.sealer, target, retry, &scope, tool.state)?.ready() {
                Ok(ready) => ready,
                Err(claiming) => claiming.await?,
            };
        let context = Context::new(scope, input.clone());
        if let Some(layered) =
            dispatcher.layered(ItemKind::Tool, tool.name(), || runtime_tool(&tool))
        {
            // Boxed, tail and all: this future's state stays as it is
            // without layers (it is boxed for every call).
            return layered_call(
                dispatcher, layered, &tool, arguments, rounds, input, context,
            )
            .await;
        }
        let server_info = dispatcher.server_info.as_deref();
        let result = invoke(&tool, arguments, context, &input).await?;
        let Some(result) = result else {
            return rounds.stopped(&input, server_info).map(Into::into);
        };
        written_unframed(&tool, &result, server_info).map(ResultJson::Unframed)
    }
}

/// The rest of a call whose tool has layers.
fn layered_call<'a>(
    dispatcher: &'a Arc<Dispatcher>,
    layered: Layered<'a>,
    tool: &'a ToolRef<'a>,
    arguments: &'a str,
    rounds: Rounds<'a>,
    input: Input,
    context: Context,
) -> Pin<Box<dyn Future<Output = Result<ResultJson, ErrorObject>> + 'a>> {
    let called = layered.tool(dispatcher, arguments, context);
    Box::pin(async move {
        let server_info = dispatcher.server_info.as_deref();
        match called.await? {
            Called::Result(result) => {
                written_unframed(tool, &result, server_info).map(ResultJson::Unframed)
            }
            Called::Task(handle) => {
                let json = Bytes::from(handle.written(server_info));
                Ok(ResultJson::Task(json, handle))
            }
            Called::Suspended => rounds.stopped(&input, server_info).map(Into::into),
        }
    })
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

//! `prompts/list` and `prompts/get`.

use std::collections::BTreeMap;
use std::sync::Arc;

use bytes::Bytes;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::Dispatcher;
use super::guard::Handler;
use super::mrtr::{self, Rounds, Target};
use super::page::Listing;
use crate::context::{Context, Scope};
use crate::middleware::{Item, ItemKind};
use crate::mrtr::state::StatePolicy;
use crate::mrtr::{Input, run_round};
use crate::prompt::{PromptError, PromptInvocation};
use crate::protocol::finite::Finite;
use crate::protocol::result::{COMPLETE, ResultMeta};
use crate::protocol::{ErrorObject, GetPromptResult, PromptMessage};
use crate::registry::{PromptEntry, PromptRef};

/// `prompts/list`.
pub(super) struct Prompts;

impl Listing for Prompts {
    const KIND: &'static str = "prompts";
    const KEY: &'static str = "prompts";
    type Item = PromptEntry;
    fn name(prompt: &PromptEntry) -> &str {
        prompt.name
    }
    fn show(prompt: &PromptEntry) -> impl Serialize + '_ {
        prompt.to_prompt()
    }
}

#[derive(Deserialize)]
struct GetParams {
    name: String,
    #[serde(default)]
    arguments: Option<BTreeMap<String, Value>>,
}

/// The prompt named `name` (static or runtime), or the spec's `-32602`
/// "Unknown prompt".
pub(super) fn find(dispatcher: &Dispatcher, name: &str) -> Result<PromptRef, ErrorObject> {
    dispatcher
        .prompt(name)
        .ok_or_else(|| ErrorObject::unknown_item("prompt", name))
}

/// `-32602` naming the arguments a prompt does take.
pub(super) fn unknown_argument(prompt: &PromptRef, argument: &str) -> ErrorObject {
    let known: Vec<String> = prompt
        .arguments()
        .iter()
        .map(|(name, _)| format!("`{name}`"))
        .collect();
    let expected = if known.is_empty() {
        "it takes no arguments".to_owned()
    } else {
        format!("expected {}", known.join(", "))
    };
    ErrorObject::invalid_params(format!(
        "Unknown argument `{argument}` for prompt {}; {expected}",
        prompt.name()
    ))
}

pub(super) async fn get(
    dispatcher: &Arc<Dispatcher>,
    params: &str,
    scope: Scope,
) -> Result<Bytes, ErrorObject> {
    let GetParams { name, arguments } = super::params(params)?;
    let prompt = find(dispatcher, &name)?;
    let arguments = string_arguments(&prompt, arguments.unwrap_or_default())?;
    let retry = mrtr::read_retry(params)?;
    let arguments_json =
        serde_json::to_string(&arguments).map_err(|_| ErrorObject::internal_error())?;
    let target = Target {
        method: "prompts/get",
        name: prompt.name(),
        arguments: &arguments_json,
    };
    let (rounds, input) = match Rounds::start(
        &dispatcher.sealer,
        target,
        retry,
        &scope,
        StatePolicy::LENIENT,
    )?
    .ready()
    {
        Ok(ready) => ready,
        Err(claiming) => claiming.await?,
    };
    let server_info = dispatcher.server_info.as_deref();
    let context = Context::new(scope, input.clone());
    let layered = dispatcher.layered(ItemKind::Prompt, prompt.name(), || {
        let mut item = Item::new(ItemKind::Prompt, prompt.name());
        item.scopes = prompt.scopes().to_vec();
        item
    });
    let result = match layered {
        None => run_prompt(&prompt, &arguments, context, &input).await?,
        Some(layered) => Box::pin(layered.prompt(dispatcher, &arguments_json, context)).await?,
    };
    let Some(result) = result else {
        return rounds.stopped(&input, server_info);
    };
    let wire = GetResult {
        result_type: COMPLETE,
        description: result.description.as_deref(),
        messages: &result.messages,
        meta: ResultMeta {
            server_info,
            extra: result.meta.as_ref(),
        },
    };
    Ok(Bytes::from(serde_json::to_vec(&Finite(&wire)).map_err(
        |error| {
            tracing::error!(%error, prompt = prompt.name(), "prompt failed to serialize");
            ErrorObject::internal_error()
        },
    )?))
}

/// Runs the prompt's handler; `None` if it suspended on an ask.
pub(super) async fn run_prompt(
    prompt: &PromptRef,
    arguments: &BTreeMap<String, String>,
    context: Context,
    input: &Input,
) -> Result<Option<GetPromptResult>, ErrorObject> {
    let handler = Handler {
        kind: "prompt",
        name: prompt.name(),
    };
    handler.needs(prompt.requires(), &context)?;
    let invocation = PromptInvocation { arguments, context };
    let future = handler
        .start(|| prompt.start(invocation))?
        .map_err(|e| prompt_error(prompt, e))?;
    let Some(result) = run_round(input, handler.finish(future)).await else {
        return Ok(None);
    };
    result?.map_err(|e| prompt_error(prompt, e)).map(Some)
}

/// Arguments are strings on the wire; every required one must be present
/// and no unknown one may be.
fn string_arguments(
    prompt: &PromptRef,
    arguments: BTreeMap<String, Value>,
) -> Result<BTreeMap<String, String>, ErrorObject> {
    let declared = prompt.arguments();
    let mut strings = BTreeMap::new();
    for (name, value) in arguments {
        if !declared.iter().any(|(declared, _)| *declared == name) {
            return Err(unknown_argument(prompt, &name));
        }
        let Value::String(value) = value else {
            return Err(ErrorObject::invalid_params(format!(
                "Invalid argument `{name}` for prompt {}: prompt arguments are strings",
                prompt.name()
            )));
        };
        strings.insert(name, value);
    }
    if let Some((missing, _)) = declared
        .iter()
        .find(|(name, required)| *required && !strings.contains_key(*name))
    {
        return Err(ErrorObject::invalid_params(format!(
            "Missing required argument `{missing}` for prompt {}",
            prompt.name()
        )));
    }
    Ok(strings)
}

fn prompt_error(prompt: &PromptRef, error: PromptError) -> ErrorObject {
    match error {
        PromptError::InvalidArgument { name, message } => ErrorObject::invalid_params(format!(
            "Invalid argument `{name}` for prompt {}: {message}",
            prompt.name()
        )),
        PromptError::Failed(message) => ErrorObject::new(
            crate::protocol::error_code::INTERNAL_ERROR,
            format!("Prompt {} failed: {message}", prompt.name()),
        ),
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct GetResult<'a> {
    result_type: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    description: Option<&'a str>,
    messages: &'a [PromptMessage],
    #[serde(rename = "_meta", skip_serializing_if = "ResultMeta::is_empty")]
    meta: ResultMeta<'a>,
}

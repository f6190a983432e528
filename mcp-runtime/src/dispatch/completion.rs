//! `completion/complete` for prompt arguments and template variables.

use std::collections::BTreeMap;

use bytes::Bytes;
use serde::{Deserialize, Serialize};

use super::Dispatcher;
use super::guard::Handler;
use crate::complete::{ArgumentCompleter, CompletionRequest};
use crate::context::{Context, Scope};
use crate::mrtr::Input;
use crate::protocol::result::{COMPLETE, ResultMeta};
use crate::protocol::{Completion, ErrorObject};
use crate::registry;

#[derive(Deserialize)]
#[serde(tag = "type")]
pub(super) enum Reference {
    #[serde(rename = "ref/prompt")]
    Prompt { name: String },
    #[serde(rename = "ref/resource")]
    Resource { uri: String },
}

#[derive(Deserialize)]
struct Argument {
    name: String,
    value: String,
}

#[derive(Deserialize, Default)]
struct CompletionContext {
    #[serde(default)]
    arguments: BTreeMap<String, String>,
}

#[derive(Deserialize)]
struct CompleteParams {
    #[serde(rename = "ref")]
    reference: Reference,
    argument: Argument,
    #[serde(default)]
    context: Option<CompletionContext>,
}

pub(super) async fn complete(
    dispatcher: &Dispatcher,
    params: &str,
    scope: Scope,
) -> Result<Bytes, ErrorObject> {
    let server_info = dispatcher.server_info.as_deref();
    // Completion cannot ask for input: its input is inert.
    let context = Context::new(scope, Input::default());
    let params: CompleteParams = super::params(params)?;
    let (name, completer) = completer_for(dispatcher, &params.reference, &params.argument.name)?;
    let completion = match completer {
        None => Completion::default(),
        Some(completer) => {
            let handler = Handler {
                kind: "completer",
                name,
            };
            let request = CompletionRequest {
                argument: params.argument.name,
                value: params.argument.value,
                context: params.context.unwrap_or_default().arguments,
                ctx: context,
            };
            let future = handler.start(|| (completer.complete)(request))?;
            handler.finish(future).await?.map_err(|message| {
                ErrorObject::new(
                    crate::protocol::error_code::INTERNAL_ERROR,
                    format!("Completion failed: {message}"),
                )
            })?
        }
    };
    #[derive(Serialize)]
    #[serde(rename_all = "camelCase")]
    struct Wire<'a> {
        result_type: &'static str,
        completion: &'a Completion,
        #[serde(rename = "_meta", skip_serializing_if = "ResultMeta::is_empty")]
        meta: ResultMeta<'a>,
    }
    let wire = Wire {
        result_type: COMPLETE,
        completion: &completion.bounded(),
        meta: ResultMeta {
            server_info,
            extra: None,
        },
    };
    Ok(Bytes::from(
        serde_json::to_vec(&wire).expect("completions serialize"),
    ))
}

/// The item the reference names, and its completer for `argument` (none
/// when the argument exists but nobody completes it).
/// The scopes of what a completion request refers to: completing a
/// prompt's arguments or a template's variables reveals what it serves,
/// so it needs the same scopes. Empty when the reference does not parse or
/// names nothing (the handler then reports the error).
pub(super) fn reference_scopes(dispatcher: &Dispatcher, params: &str) -> Vec<&'static str> {
    #[derive(Deserialize)]
    struct Head {
        #[serde(rename = "ref")]
        reference: Reference,
    }
    let Ok(Head { reference }) = serde_json::from_str::<Head>(params) else {
        return Vec::new();
    };
    let registry = &dispatcher.registry;
    match reference {
        Reference::Prompt { name } => dispatcher
            .prompt(&name)
            .map_or_else(Vec::new, |p| p.scopes().to_vec()),
        Reference::Resource { uri } => registry
            .templates()
            .iter()
            .find(|(e, _)| e.uri == uri)
            .map(|(e, _)| e.scopes)
            .or_else(|| registry.resource(&uri).map(|r| r.scopes))
            .unwrap_or(&[])
            .to_vec(),
    }
}

fn completer_for(
    dispatcher: &Dispatcher,
    reference: &Reference,
    argument: &str,
) -> Result<(&'static str, Option<&'static ArgumentCompleter>), ErrorObject> {
    let registry = &dispatcher.registry;
    match reference {
        Reference::Prompt { name } => {
            let prompt = super::prompts::find(dispatcher, name)?;
            if !prompt.arguments().iter().any(|(name, _)| *name == argument) {
                return Err(super::prompts::unknown_argument(&prompt, argument));
            }
            // A runtime prompt has no completers: an empty completion.
            let Some(prompt) = prompt.entry() else {
                return Ok(("", None));
            };
            Ok((
                prompt.name,
                registry::completer(prompt.completers, argument),
            ))
        }
        Reference::Resource { uri } => {
            let template = registry.templates().iter().find(|(e, _)| e.uri == *uri);
            let Some((entry, parts)) = template else {
                if registry.resource(uri).is_some() {
                    return Err(ErrorObject::invalid_params(format!(
                        "Resource {uri} has no variables to complete"
                    )));
                }
                return Err(ErrorObject::invalid_params(format!(
                    "Unknown resource template: {uri}"
                )));
            };
            let is_variable =
                crate::uri_template::variable_names(parts).any(|name| name == argument);
            if !is_variable {
                return Err(ErrorObject::invalid_params(format!(
                    "Unknown variable `{argument}` for resource template {uri}"
                )));
            }
            Ok((entry.name, registry::completer(entry.completers, argument)))
        }
    }
}

//! `tasks/get`, `tasks/update` and `tasks/cancel`, served through the
//! public extension API like any third-party extension's methods: only
//! clients that declared the extension may call them (`-32021` otherwise),
//! and over HTTP `Mcp-Name` must carry the `taskId`.

use std::sync::Arc;

use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::{EXTENSION_ID, TaskHost, TaskRecord, not_found, owner, plausible_id, store_error};
use crate::changes::{Changes, TaskNotice};
use crate::context::Context;
use crate::extension::{Extension, ExtensionMethod, MethodResult};
use crate::mrtr::answer::check_response;
use crate::protocol::ErrorObject;

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct TaskParams {
    task_id: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct UpdateParams {
    task_id: String,
    input_responses: Value,
}

pub(super) fn extension(runtime: Arc<TaskHost>) -> Extension {
    let get = runtime.clone();
    let update = runtime.clone();
    let cancel = runtime;
    Extension::new(EXTENSION_ID)
        .method(
            ExtensionMethod::new("tasks/get", move |params: TaskParams, ctx: Context| {
                let runtime = get.clone();
                async move { self::get(&runtime, &params.task_id, &ctx).await }
            })
            .named_by("taskId"),
        )
        .method(
            ExtensionMethod::new("tasks/update", move |params: UpdateParams, ctx: Context| {
                let runtime = update.clone();
                async move { self::update(&runtime, params, &ctx).await }
            })
            .named_by("taskId"),
        )
        .method(
            ExtensionMethod::new("tasks/cancel", move |params: TaskParams, ctx: Context| {
                let runtime = cancel.clone();
                async move { self::cancel(&runtime, &params.task_id, &ctx).await }
            })
            .named_by("taskId"),
        )
}

/// The task as `tasks/get` shows it: its fields and its status's payload.
async fn get(runtime: &TaskHost, id: &str, ctx: &Context) -> Result<MethodResult, ErrorObject> {
    if !plausible_id(id) {
        return Err(not_found());
    }
    let owner = owner(ctx.source());
    let record = runtime
        .store()
        .get(id, &owner, runtime.now())
        .await
        .map_err(|error| store_error(&error))?
        .ok_or_else(not_found)?;
    Ok(detailed(&record))
}

fn detailed(record: &TaskRecord) -> MethodResult {
    // Written here, not built as a JSON value: a stored result is copied
    // as the text it is kept as.
    let (object, meta) = super::wire::get_members(record);
    MethodResult::written(object, meta)
}

/// Delivers answers to the task's outstanding requests (others are
/// ignored, as the spec asks) and acknowledges with an empty result. An
/// answer that does not fit its request is refused (`-32602`), and nothing
/// is delivered: the task keeps waiting for a fitting one.
async fn update(
    runtime: &TaskHost,
    params: UpdateParams,
    ctx: &Context,
) -> Result<MethodResult, ErrorObject> {
    let Value::Object(responses) = params.input_responses else {
        return Err(ErrorObject::invalid_params(
            "Invalid params: `inputResponses` must be an object mapping request keys to responses",
        ));
    };
    if !plausible_id(&params.task_id) {
        return Err(not_found());
    }
    let owner = owner(ctx.source());
    let store = runtime.store();
    let record = store
        .get(&params.task_id, &owner, runtime.now())
        .await
        .map_err(|error| store_error(&error))?
        .ok_or_else(not_found)?;
    let answers = fitting_answers(&record, responses)?;
    if answers.is_empty() {
        return Ok(MethodResult::complete(Map::new()));
    }
    // The new state is announced by the task's worker once it takes the
    // answers: every announcement of a task comes from its one worker, in
    // order.
    store
        .respond(&params.task_id, &owner, answers, runtime.now())
        .await
        .map_err(|error| store_error(&error))?
        .ok_or_else(not_found)?;
    Ok(MethodResult::complete(Map::new()))
}

/// The answers to `record`'s outstanding requests, each checked against
/// the request it answers; `-32602` naming the first that does not fit.
///
/// Checked here, while the client waits, rather than by the handler's ask
/// once its worker takes the answer: there, an answer that does not fit
/// stops the handler and fails the task, throwing its work away, for a
/// client's typo. The extension's rationale (SEP-2663, "Ack-only
/// Cancellation") asks for it: "servers **SHOULD** still return errors for
/// clearly invalid requests [...] Returning errors for invalid inputs gives
/// clients a faster signal that something is wrong", and an `ElicitResult`'s
/// `content` "Contains values matching the requested schema" (schema.json).
///
/// Answers to keys that are not outstanding are left out, unchecked: "A
/// server **SHOULD** ignore any `inputResponses` responses mapped to a key
/// that is not currently outstanding for the task" (tasks.md, Task Update
/// Requests). Only checked answers go on, so none can slip past the check
/// under a key asked between this read and the delivery; a key's request
/// never changes ("**MUST NOT** use the same key to refer to two distinct
/// requests"), so the check holds at delivery.
fn fitting_answers(
    record: &TaskRecord,
    responses: Map<String, Value>,
) -> Result<Map<String, Value>, ErrorObject> {
    let mut answers = Map::new();
    for (key, response) in responses {
        let Some(request) = record.input_requests.get(&key) else {
            continue;
        };
        if let Err(problem) = check_response(request, &response) {
            // Worded as a multi round-trip retry's answer that does not fit.
            return Err(ErrorObject::invalid_params(format!(
                "Invalid input response: inputResponses.{key}: {problem}"
            )));
        }
        answers.insert(key, response);
    }
    Ok(answers)
}

/// Asks the task's worker to stop; an empty acknowledgement, also for a
/// task that has ended.
async fn cancel(runtime: &TaskHost, id: &str, ctx: &Context) -> Result<MethodResult, ErrorObject> {
    if !plausible_id(id) {
        return Err(not_found());
    }
    let owner = owner(ctx.source());
    runtime
        .store()
        .cancel(id, &owner, runtime.now())
        .await
        .map_err(|error| store_error(&error))?
        .ok_or_else(not_found)?;
    Ok(MethodResult::complete(json!({})))
}

/// Tells listeners (`subscriptions/listen` with `taskIds`) the task's
/// state, as `tasks/get` would show it.
pub(crate) fn announce(changes: &Changes, record: &TaskRecord) {
    let params = super::wire::notification_params(record);
    changes.task_changed(TaskNotice {
        task_id: record.id.clone(),
        owner: record.owner.clone(),
        terminal: record.status.is_terminal(),
        params: params.into(),
    });
}

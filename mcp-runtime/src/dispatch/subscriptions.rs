//! `subscriptions/listen`: a long-lived request whose answer is a stream of
//! change notifications, acknowledged first and tagged with the
//! subscription's id, ending with a result when the server shuts down.

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use tokio::sync::broadcast::error::RecvError;
use tokio_util::sync::CancellationToken;

use super::envelope::Request;
use crate::changes::{Change, Changes};
use crate::context::Outbox;
use crate::protocol::jsonrpc::notification_frame;
use crate::protocol::result::COMPLETE;
use crate::protocol::{ErrorObject, RequestId};

/// What this server can notify about.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Offered {
    pub(crate) tools: bool,
    pub(crate) prompts: bool,
    pub(crate) resources: bool,
    pub(crate) resource_updates: bool,
    /// `notifications/tasks` (the Tasks extension).
    pub(crate) tasks: bool,
}

impl Offered {
    pub(crate) fn any(self) -> bool {
        self.tools || self.prompts || self.resources || self.resource_updates || self.tasks
    }
}

/// The most task ids one subscription may name.
const MAX_TASK_IDS: usize = 256;

/// What a subscription to task notifications needs: the tasks (to check
/// the caller owns the ids it names), the client's capabilities and the
/// caller.
pub(crate) struct TaskListening<'a> {
    pub(crate) tasks: Option<&'a crate::tasks::Runtime>,
    pub(crate) client: &'a crate::protocol::ClientCapabilities,
    pub(crate) owner: String,
}

impl TaskListening<'_> {
    /// The tasks among `requested` this caller may follow (its own live
    /// tasks), as they are now. `-32021` when the client did not declare
    /// the extension.
    async fn honoured(
        &self,
        requested: Vec<String>,
    ) -> Result<Vec<crate::tasks::TaskRecord>, ErrorObject> {
        use crate::tasks::EXTENSION_ID;
        super::extensions::require_extension(EXTENSION_ID, self.client)?;
        let Some(runtime) = self.tasks else {
            return Ok(Vec::new());
        };
        if requested.len() > MAX_TASK_IDS {
            return Err(ErrorObject::invalid_params(format!(
                "Invalid params: `notifications.taskIds` names more than {MAX_TASK_IDS} tasks"
            )));
        }
        let mut honoured: Vec<crate::tasks::TaskRecord> = Vec::new();
        for id in requested {
            if !crate::tasks::plausible_id(&id) || honoured.iter().any(|task| task.id == id) {
                continue;
            }
            let found = runtime.store().get(&id, &self.owner, runtime.now()).await;
            if let Ok(Some(task)) = found {
                honoured.push(task);
            }
        }
        Ok(honoured)
    }
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Filter {
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    tools_list_changed: bool,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    prompts_list_changed: bool,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    resources_list_changed: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    resource_subscriptions: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    task_ids: Option<Vec<String>>,
}

impl Filter {
    /// The part of the request this server honours.
    fn honoured(self, offered: Offered) -> Filter {
        Filter {
            tools_list_changed: self.tools_list_changed && offered.tools,
            prompts_list_changed: self.prompts_list_changed && offered.prompts,
            resources_list_changed: self.resources_list_changed && offered.resources,
            resource_subscriptions: self
                .resource_subscriptions
                .filter(|_| offered.resource_updates),
            task_ids: self.task_ids,
        }
    }

    /// The notification `change` becomes on this subscription, if it asked.
    fn method_for(&self, change: &Change) -> Option<(&'static str, Option<String>)> {
        match change {
            Change::ToolsListChanged if self.tools_list_changed => {
                Some(("notifications/tools/list_changed", None))
            }
            Change::PromptsListChanged if self.prompts_list_changed => {
                Some(("notifications/prompts/list_changed", None))
            }
            Change::ResourcesListChanged if self.resources_list_changed => {
                Some(("notifications/resources/list_changed", None))
            }
            Change::ResourceUpdated(uri)
                if self
                    .resource_subscriptions
                    .as_ref()
                    .is_some_and(|uris| uris.iter().any(|u| u == uri)) =>
            {
                Some(("notifications/resources/updated", Some(uri.clone())))
            }
            _ => None,
        }
    }
}

#[derive(Deserialize)]
struct ListenParams {
    notifications: Filter,
}

#[derive(Serialize)]
struct Tagged<'a, T: Serialize> {
    #[serde(rename = "_meta")]
    meta: Tag<'a>,
    #[serde(flatten)]
    body: T,
}

#[derive(Serialize)]
struct Tag<'a> {
    #[serde(rename = "io.modelcontextprotocol/subscriptionId")]
    subscription: &'a RequestId,
}

/// `notifications/tasks` for a subscription: the task as `tasks/get`
/// shows it, tagged with the subscription's id.
fn task_notification(params: &str, subscription: &RequestId) -> Vec<u8> {
    let mut params: serde_json::Map<String, serde_json::Value> =
        serde_json::from_str(params).unwrap_or_default();
    let tag = serde_json::json!({"io.modelcontextprotocol/subscriptionId": subscription});
    params.insert("_meta".into(), tag);
    notification_frame("notifications/tasks", &params)
}

/// Serves one subscription until `shutdown` (the final result is returned)
/// or until the caller drops the future (the client cancelled).
pub(crate) async fn listen(
    request: &Request,
    offered: Offered,
    changes: &Changes,
    outbox: &Outbox,
    shutdown: &CancellationToken,
    server_info: Option<&RawValue>,
    tasks: TaskListening<'_>,
) -> Result<Vec<u8>, ErrorObject> {
    let id = &request.id;
    let params: ListenParams = super::params(request.params().unwrap_or("{}"))?;
    let mut filter = params.notifications.honoured(offered);
    // Subscribe before reading the tasks and acknowledging, so that no
    // change after either is missed.
    let mut receiver = changes.subscribe();
    let mut current = Vec::new();
    if let Some(requested) = filter.task_ids.take() {
        current = tasks.honoured(requested).await?;
        filter.task_ids = Some(current.iter().map(|task| task.id.clone()).collect());
    }
    acknowledge(id, &filter, &current, outbox);
    // A task's end is its last notification, even when an older change
    // was queued before the state sent with the acknowledgement.
    let mut ended: Vec<String> = current
        .iter()
        .filter(|task| task.status.is_terminal())
        .map(|task| task.id.clone())
        .collect();
    loop {
        let change = tokio::select! {
            () = shutdown.cancelled() => break,
            change = receiver.recv() => change,
        };
        match change {
            Ok(change) => deliver(&change, &filter, (&tasks.owner, &mut ended), id, outbox),
            Err(RecvError::Lagged(missed)) => {
                tracing::warn!(missed, subscription = %id, "a slow subscription missed changes");
            }
            Err(RecvError::Closed) => break,
        }
    }
    Ok(closed(id, server_info))
}

/// The acknowledgement (the subset honoured), then each followed task's
/// state as it is now, so that a change between the client's last poll
/// and this subscription is not missed.
fn acknowledge(
    id: &RequestId,
    filter: &Filter,
    tasks: &[crate::tasks::TaskRecord],
    outbox: &Outbox,
) {
    #[derive(Serialize)]
    struct Ack<'a> {
        notifications: &'a Filter,
    }
    let ack = Tagged {
        meta: Tag { subscription: id },
        body: Ack {
            notifications: filter,
        },
    };
    outbox.send(notification_frame(
        "notifications/subscriptions/acknowledged",
        &ack,
    ));
    for task in tasks {
        let params = crate::tasks::wire::notification_params(task);
        outbox.send(task_notification(&params, id));
    }
}

/// Sends `change` on the subscription `id` if it asked for it (a task's
/// status only to its owner, and nothing after its end).
fn deliver(
    change: &Change,
    filter: &Filter,
    (owner, ended): (&str, &mut Vec<String>),
    id: &RequestId,
    outbox: &Outbox,
) {
    if let Change::Task(notice) = change {
        let follows = filter
            .task_ids
            .as_ref()
            .is_some_and(|ids| ids.contains(&notice.task_id));
        if follows && notice.owner == owner && !ended.contains(&notice.task_id) {
            if notice.terminal {
                ended.push(notice.task_id.clone());
            }
            outbox.send(task_notification(&notice.params, id));
        }
        return;
    }
    let Some((method, uri)) = filter.method_for(change) else {
        return;
    };
    #[derive(Serialize)]
    struct Updated {
        #[serde(skip_serializing_if = "Option::is_none")]
        uri: Option<String>,
    }
    let params = Tagged {
        meta: Tag { subscription: id },
        body: Updated { uri },
    };
    outbox.send(notification_frame(method, &params));
}

/// The result that ends a subscription gracefully.
fn closed(id: &RequestId, server_info: Option<&RawValue>) -> Vec<u8> {
    #[derive(Serialize)]
    #[serde(rename_all = "camelCase")]
    struct Closed<'a> {
        result_type: &'static str,
        #[serde(rename = "_meta")]
        meta: ClosedMeta<'a>,
    }
    #[derive(Serialize)]
    struct ClosedMeta<'a> {
        #[serde(
            rename = "io.modelcontextprotocol/serverInfo",
            skip_serializing_if = "Option::is_none"
        )]
        server_info: Option<&'a RawValue>,
        #[serde(rename = "io.modelcontextprotocol/subscriptionId")]
        subscription: &'a RequestId,
    }
    serde_json::to_vec(&Closed {
        result_type: COMPLETE,
        meta: ClosedMeta {
            server_info,
            subscription: id,
        },
    })
    .expect("closing result serializes")
}

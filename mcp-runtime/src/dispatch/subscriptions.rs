//! `subscriptions/listen`: a long-lived request whose answer is a stream of
//! change notifications, acknowledged first with the subset the server
//! honours (possibly none of it), tagged with the subscription's id, and
//! ending, when the server tears it down, with `notifications/cancelled`
//! and then a result.
//!
//! What a subscription may ask for is one [`Filter`]; a new kind of
//! notification (an extension's) is one more field there, one more line in
//! [`Filter::honoured`] and one more arm in [`Watching::notification`].

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use tokio::sync::broadcast::error::RecvError;
use tokio_util::sync::CancellationToken;

use super::Dispatcher;
use super::envelope::Request;
use super::tasks::Tasks;
use crate::changes::Change;
use crate::context::Outbox;
use crate::protocol::jsonrpc::notification_frame;
use crate::protocol::result::COMPLETE;
use crate::protocol::{ErrorObject, RequestId};
use crate::registry::Registry;
use crate::security::Principal;
use crate::tasks::Followed;
use crate::uri_template::TemplatePart;

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

/// The `notifications` a client asks for, and (the same shape) the subset
/// the acknowledgement says is honoured.
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
    /// The Tasks extension's: tasks to follow. Resolved against the
    /// caller's own tasks in [`TaskListening::honoured`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    task_ids: Option<Vec<String>>,
}

/// A subscription's resource watches: exact URIs, and templates this
/// server publishes (each the set of URIs it matches).
#[derive(Default)]
struct Resources {
    uris: Vec<String>,
    templates: Vec<&'static [TemplatePart]>,
}

impl Resources {
    fn watches(&self, uri: &str) -> bool {
        self.uris.iter().any(|u| u == uri)
            || self
                .templates
                .iter()
                .any(|parts| crate::uri_template::match_uri(parts, uri).is_some())
    }
}

/// What one subscription delivers, decided once when it opens.
struct Watching<'a> {
    filter: Filter,
    resources: Resources,
    dispatcher: &'a Dispatcher,
    principal: Option<&'a Principal>,
}

impl Filter {
    /// The part of the request this server honours, and the resources it
    /// watches. A `resourceSubscriptions` entry is honoured when it is a
    /// URI, or the `uriTemplate` of one of this server's templates (which
    /// a caller whose token lacks the template's scopes cannot watch); any
    /// other entry (a template the server does not publish: `{` cannot
    /// appear in a URI) is left out of the acknowledgement.
    fn honoured(
        self,
        offered: Offered,
        registry: &Registry,
        principal: Option<&Principal>,
    ) -> (Filter, Resources) {
        let mut resources = Resources::default();
        let subscriptions = self
            .resource_subscriptions
            .filter(|_| offered.resource_updates);
        let honoured = subscriptions.map(|entries| {
            entries
                .into_iter()
                .filter(|entry| {
                    if !entry.contains('{') {
                        resources.uris.push(entry.clone());
                        return true;
                    }
                    let template = registry.templates().iter().find(|(e, _)| e.uri == entry);
                    match template {
                        Some((e, parts)) if principal.is_none_or(|p| p.has_scopes(e.scopes)) => {
                            resources.templates.push(parts);
                            true
                        }
                        _ => false,
                    }
                })
                .collect()
        });
        let filter = Filter {
            tools_list_changed: self.tools_list_changed && offered.tools,
            prompts_list_changed: self.prompts_list_changed && offered.prompts,
            resources_list_changed: self.resources_list_changed && offered.resources,
            resource_subscriptions: honoured,
            task_ids: self.task_ids,
        };
        (filter, resources)
    }
}

impl Watching<'_> {
    /// The notification `change` becomes on this subscription, if it asked.
    fn notification(&self, change: &Change) -> Option<(&'static str, Option<String>)> {
        let filter = &self.filter;
        match change {
            Change::ToolsListChanged if filter.tools_list_changed => {
                Some(("notifications/tools/list_changed", None))
            }
            Change::PromptsListChanged if filter.prompts_list_changed => {
                Some(("notifications/prompts/list_changed", None))
            }
            Change::ResourcesListChanged if filter.resources_list_changed => {
                Some(("notifications/resources/list_changed", None))
            }
            Change::ResourceUpdated(uri) if self.resources.watches(uri) && self.may_read(uri) => {
                Some(("notifications/resources/updated", Some(uri.clone())))
            }
            _ => None,
        }
    }

    /// Whether the caller's token has the scopes reading `uri` needs: a
    /// subscription does not tell anyone about resources they may not read.
    fn may_read(&self, uri: &str) -> bool {
        self.principal
            .is_none_or(|principal| principal.has_scopes(&self.dispatcher.read_scopes(uri)))
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

/// Serves one subscription until `shutdown` (the final result is returned)
/// or until the caller drops the future (the client cancelled).
pub(crate) async fn listen(
    dispatcher: &Dispatcher,
    request: &Request,
    principal: Option<&Principal>,
    tasks: TaskListening<'_>,
    outbox: &Outbox,
    shutdown: &CancellationToken,
) -> Result<Vec<u8>, ErrorObject> {
    let id = &request.id;
    let params: ListenParams = super::params(request.params().unwrap_or("{}"))?;
    let (mut filter, resources) =
        params
            .notifications
            .honoured(dispatcher.offered, &dispatcher.registry, principal);
    // Subscribe before reading the followed tasks and acknowledging, so
    // nothing published after either is missed.
    let mut receiver = dispatcher.changes().subscribe();
    if !dispatcher.changes().connected() {
        return Err(ErrorObject::new(
            crate::protocol::error_code::SERVER_BUSY,
            "Changes cannot be followed now: the shared change bus is reconnecting; retry shortly",
        ));
    }
    let mut current = Vec::new();
    if let Some(requested) = filter.task_ids.take() {
        current = tasks.honoured(requested).await?;
        filter.task_ids = Some(current.iter().map(|task| task.id.clone()).collect());
    }
    acknowledge(id, &filter, &current, outbox);
    let _open = dispatcher.metrics().subscription();
    let mut following = Following::new(&filter, &current, tasks.owner);
    let watching = Watching {
        filter,
        resources,
        dispatcher,
        principal,
    };
    let reason = loop {
        let change = tokio::select! {
            () = shutdown.cancelled() => break "the server is shutting down",
            change = receiver.recv() => change,
        };
        match change {
            Ok(Change::Task(notice)) => following.deliver(&notice, id, outbox),
            // Changes may have been missed: ending the subscription tells
            // the client to read again and listen anew.
            Ok(Change::Interrupted) => {
                tracing::warn!(subscription = %id, "the change bus lost its connection: ending the subscription");
                break "changes may have been missed (the server lost its connection to the other instances): read again and listen anew";
            }
            Err(RecvError::Lagged(missed)) => {
                tracing::warn!(missed, subscription = %id, "a slow subscription missed changes: ending it");
                break "changes were missed (this subscription fell behind): read again and listen anew";
            }
            Ok(change) => {
                if let Some((method, uri)) = watching.notification(&change) {
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
            }
            Err(RecvError::Closed) => break "the server is shutting down",
        }
    };
    Ok(close(id, outbox, dispatcher.server_info.as_deref(), reason))
}

/// The acknowledgement (the subset honoured), then each followed task's
/// state as it is now, so that a change between the client's last poll and
/// this subscription is not missed.
fn acknowledge(id: &RequestId, filter: &Filter, tasks: &[Followed], outbox: &Outbox) {
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
        outbox.send(task_notification(&task.params, id));
    }
}

/// The most task ids one subscription may name.
const MAX_TASK_IDS: usize = 256;

/// What a subscription to task notifications needs: the tasks (to check
/// the caller owns the ids it names), the client's capabilities and the
/// caller.
pub(crate) struct TaskListening<'a> {
    pub(crate) tasks: Option<&'a Tasks>,
    pub(crate) client: &'a crate::protocol::ClientCapabilities,
    pub(crate) owner: String,
}

impl TaskListening<'_> {
    /// The tasks among `requested` this caller may follow (its own live
    /// tasks), as they are now. `-32021` when the client did not declare
    /// the extension.
    async fn honoured(&self, requested: Vec<String>) -> Result<Vec<Followed>, ErrorObject> {
        use crate::tasks::EXTENSION_ID;
        super::extensions::require_extension(EXTENSION_ID, self.client)?;
        let Some(tasks) = self.tasks else {
            return Ok(Vec::new());
        };
        if requested.len() > MAX_TASK_IDS {
            return Err(ErrorObject::invalid_params(format!(
                "Invalid params: `notifications.taskIds` names more than {MAX_TASK_IDS} tasks"
            )));
        }
        let mut ids: Vec<String> = Vec::new();
        for id in requested {
            if crate::tasks::plausible_id(&id) && !ids.contains(&id) {
                ids.push(id);
            }
        }
        Ok(tasks.followed(ids, &self.owner).await)
    }
}

/// The tasks a subscription follows: their owner's, until each ends (a
/// task's end is its last notification, even when an older change was
/// queued before the state sent with the acknowledgement).
struct Following {
    ids: Vec<String>,
    owner: String,
    ended: Vec<String>,
}

impl Following {
    fn new(filter: &Filter, current: &[Followed], owner: String) -> Self {
        Following {
            ids: filter.task_ids.clone().unwrap_or_default(),
            owner,
            ended: current
                .iter()
                .filter(|task| task.ended)
                .map(|task| task.id.clone())
                .collect(),
        }
    }

    fn deliver(&mut self, notice: &crate::changes::TaskNotice, id: &RequestId, outbox: &Outbox) {
        let follows = self.ids.contains(&notice.task_id) && notice.owner == self.owner;
        if !follows || self.ended.contains(&notice.task_id) {
            return;
        }
        if notice.terminal {
            self.ended.push(notice.task_id.clone());
        }
        outbox.send(task_notification(&notice.params, id));
    }
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

/// Tears the subscription down: `notifications/cancelled` naming it, then
/// the final result.
///
/// The two pages disagree: the subscriptions page says the server SHOULD
/// answer the `subscriptions/listen` request with a result when it ends a
/// subscription; the cancellation page says the server MUST send
/// `notifications/cancelled` referencing the `subscriptions/listen`
/// request when it tears the stream down (the schema's
/// `CancelledNotification` says so for stdio). Both are done, on every
/// transport, the notification first: the stricter reading, and the order
/// in which the cancellation still references a request in progress.
fn close(
    id: &RequestId,
    outbox: &Outbox,
    server_info: Option<&RawValue>,
    reason: &'static str,
) -> Vec<u8> {
    #[derive(Serialize)]
    #[serde(rename_all = "camelCase")]
    struct Cancelled<'a> {
        request_id: &'a RequestId,
        reason: &'static str,
    }
    let cancelled = Tagged {
        meta: Tag { subscription: id },
        body: Cancelled {
            request_id: id,
            reason,
        },
    };
    outbox.send(notification_frame("notifications/cancelled", &cancelled));
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

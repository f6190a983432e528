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
}

impl Offered {
    pub(crate) fn any(self) -> bool {
        self.tools || self.prompts || self.resources || self.resource_updates
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

/// Serves one subscription until `shutdown` (the final result is returned)
/// or until the caller drops the future (the client cancelled).
pub(crate) async fn listen(
    request: &Request,
    offered: Offered,
    changes: &Changes,
    outbox: &Outbox,
    shutdown: &CancellationToken,
    server_info: Option<&RawValue>,
) -> Result<Vec<u8>, ErrorObject> {
    let id = &request.id;
    let params: ListenParams = super::params(request.params().unwrap_or("{}"))?;
    let filter = params.notifications.honoured(offered);
    // Subscribe before acknowledging, so nothing published after the
    // acknowledgement is missed.
    let mut receiver = changes.subscribe();
    #[derive(Serialize)]
    struct Ack<'a> {
        notifications: &'a Filter,
    }
    let ack = Tagged {
        meta: Tag { subscription: id },
        body: Ack {
            notifications: &filter,
        },
    };
    outbox.send(notification_frame(
        "notifications/subscriptions/acknowledged",
        &ack,
    ));
    loop {
        let change = tokio::select! {
            () = shutdown.cancelled() => break,
            change = receiver.recv() => change,
        };
        match change {
            Ok(change) => {
                if let Some((method, uri)) = filter.method_for(&change) {
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
            Err(RecvError::Lagged(missed)) => {
                tracing::warn!(missed, subscription = %id, "a slow subscription missed changes");
            }
            Err(RecvError::Closed) => break,
        }
    }
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
    Ok(serde_json::to_vec(&Closed {
        result_type: COMPLETE,
        meta: ClosedMeta {
            server_info,
            subscription: id,
        },
    })
    .expect("closing result serializes"))
}

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
use crate::changes::Change;
use crate::context::Outbox;
use crate::protocol::jsonrpc::notification_frame;
use crate::protocol::result::COMPLETE;
use crate::protocol::{ErrorObject, RequestId};
use crate::registry::Registry;
use crate::security::Principal;
use crate::uri_template::TemplatePart;

/// What this server can notify about.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Offered {
    pub(crate) tools: bool,
    pub(crate) prompts: bool,
    pub(crate) resources: bool,
    pub(crate) resource_updates: bool,
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
    outbox: &Outbox,
    shutdown: &CancellationToken,
) -> Result<Vec<u8>, ErrorObject> {
    let id = &request.id;
    let params: ListenParams = super::params(request.params().unwrap_or("{}"))?;
    let (filter, resources) =
        params
            .notifications
            .honoured(dispatcher.offered, &dispatcher.registry, principal);
    // Subscribe before acknowledging, so nothing published after the
    // acknowledgement is missed.
    let mut receiver = dispatcher.changes.subscribe();
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
    let watching = Watching {
        filter,
        resources,
        dispatcher,
        principal,
    };
    loop {
        let change = tokio::select! {
            () = shutdown.cancelled() => break,
            change = receiver.recv() => change,
        };
        match change {
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
            Err(RecvError::Lagged(missed)) => {
                tracing::warn!(missed, subscription = %id, "a slow subscription missed changes");
            }
            Err(RecvError::Closed) => break,
        }
    }
    Ok(close(id, outbox, dispatcher.server_info.as_deref()))
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
fn close(id: &RequestId, outbox: &Outbox, server_info: Option<&RawValue>) -> Vec<u8> {
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
            reason: "the server is shutting down",
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

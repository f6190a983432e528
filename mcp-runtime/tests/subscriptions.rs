//! `subscriptions/listen` by the spec: acknowledged with the subset the
//! server honours even when that is nothing, resource subscriptions by URI
//! or by one of the server's own templates, and `notifications/cancelled`
//! before the final result when the server ends a subscription. Over the
//! stdio transport in process; every message is checked against the
//! spec's schema.

use mcp_runtime::{Server, ServerBuilder, StdioOptions, resource};
use mcp_test_support::stdio::InMemory;
use mcp_test_support::{assert_valid, assert_valid_notification, request};
use serde_json::{Value, json};

/// A note by id.
#[resource("notes://{id}", mime_type = "text/plain")]
fn note(id: u32) -> String {
    format!("note {id}")
}

/// Every file under a folder: a template that works as a prefix.
#[resource("files:///{+path}", mime_type = "text/plain")]
fn file(path: String) -> String {
    format!("file {path}")
}

/// Runs `script` as the client of `server` over in-memory stdio.
async fn with_stdio<F, Fut>(server: Server, script: F)
where
    F: FnOnce(InMemory) -> Fut,
    Fut: Future<Output = ()>,
{
    let (client, (server_read, server_write)) = InMemory::pair();
    let serve = mcp_test_support::stdio::served(server.serve_streams(
        StdioOptions::new(),
        server_read,
        server_write,
    ));
    tokio::join!(serve, script(client));
}

fn listen(id: u32, notifications: Value) -> String {
    request(
        id,
        "subscriptions/listen",
        json!({"notifications": notifications}),
    )
}

fn acknowledged(id: u32, notifications: Value) -> Value {
    json!({"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged", "params": {
        "_meta": {"io.modelcontextprotocol/subscriptionId": id},
        "notifications": notifications
    }})
}

#[tokio::test]
async fn a_server_that_offers_nothing_acknowledges_an_empty_subset() {
    // Neither list changes nor resource subscriptions were turned on: the
    // request is still answered, with the subset honoured (none of it).
    let server = ServerBuilder::new("subscriptions", "1.0.0")
        .build()
        .unwrap();
    with_stdio(server, |mut client| async move {
        client
            .send(&listen(
                1,
                json!({"toolsListChanged": true, "resourceSubscriptions": ["notes://1"]}),
            ))
            .await;
        let ack = client.receive().await;
        assert_valid_notification(&ack);
        assert_eq!(ack, acknowledged(1, json!({})));
        client.close().await;
        assert_eq!(client.receive().await["method"], "notifications/cancelled");
        let closing = client.receive().await;
        assert_valid("SubscriptionsListenResultResponse", &closing);
    })
    .await;
}

#[tokio::test]
async fn resource_subscriptions_by_uri_or_by_published_template() {
    let server = ServerBuilder::new("subscriptions", "1.0.0")
        .resource_subscriptions()
        .build()
        .unwrap();
    let changes = server.changes();
    with_stdio(server, |mut client| async move {
        let asked = json!({"resourceSubscriptions": [
            "notes://1",
            "files:///{+path}",
            "notes://{id}/{unpublished}",
            "{+anything}"
        ]});
        client.send(&listen(7, asked)).await;
        let ack = client.receive().await;
        assert_valid_notification(&ack);
        // Templates the server does not publish are not honoured: they are
        // left out of the acknowledgement.
        assert_eq!(
            ack,
            acknowledged(
                7,
                json!({"resourceSubscriptions": ["notes://1", "files:///{+path}"]})
            )
        );
        for uri in [
            "notes://2",
            "notes://1",
            "other://x",
            "files:///srv/a/b.txt",
        ] {
            changes.resource_updated(uri);
        }
        for uri in ["notes://1", "files:///srv/a/b.txt"] {
            let updated = client.receive().await;
            assert_valid_notification(&updated);
            assert_eq!(
                updated,
                json!({"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": {
                    "_meta": {"io.modelcontextprotocol/subscriptionId": 7},
                    "uri": uri
                }})
            );
        }
        // Teardown: the cancellation names the subscription, then the
        // result closes it.
        client.close().await;
        let cancelled = client.receive().await;
        assert_valid("CancelledNotification", &cancelled);
        assert_eq!(
            cancelled,
            json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {
                "_meta": {"io.modelcontextprotocol/subscriptionId": 7},
                "requestId": 7,
                "reason": "the server is shutting down"
            }})
        );
        let closing = client.receive().await;
        assert_valid("SubscriptionsListenResultResponse", &closing);
        assert_eq!(closing["id"], 7);
        assert!(client.next_line().await.is_none());
    })
    .await;
}

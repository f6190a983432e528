//! Runtime catalogs over Streamable HTTP: `list_changed` on a
//! subscription's SSE stream as items come and go, and authorization
//! applied to runtime items as to static ones (scopes checked before the
//! handler runs, lists filtered per caller with `hide_unpermitted`).
#![cfg(feature = "http")]

use std::net::SocketAddr;
use std::time::Duration;

use mcp_runtime::auth::{Authorization, TokenVerifier, VerifyError, VerifyFuture};
use mcp_runtime::catalog::{Catalog, NoArguments, RuntimeTool};
use mcp_runtime::security::Principal;
use mcp_runtime::{HttpOptions, ServerBuilder, tool};
use mcp_test_support::http::{self, EventReader, mcp_headers};
use mcp_test_support::{assert_valid, assert_valid_notification, call_tool, request};
use serde_json::json;

/// A static tool anyone may call.
#[tool(annotations(read_only))]
fn open() -> &'static str {
    "open"
}

fn secret_tool() -> RuntimeTool {
    RuntimeTool::new("secret", |_: NoArguments, _ctx| async { "classified" })
        .scopes(["secret:read"])
}

/// Tokens are names: `reader` has no scope, `agent` has `secret:read`.
struct Names;

impl TokenVerifier for Names {
    fn verify<'a>(&'a self, token: &'a str) -> VerifyFuture<'a> {
        Box::pin(async move {
            let scopes: &[&str] = match token {
                "reader" => &[],
                "agent" => &["secret:read"],
                _ => return Err(VerifyError::Signature),
            };
            Ok(Principal::new(token).with_scopes(scopes.iter().copied()))
        })
    }
}

/// Serves `catalog` on a free port in its own thread.
fn serve(catalog: &Catalog, options: impl FnOnce(SocketAddr) -> HttpOptions) -> SocketAddr {
    let server = ServerBuilder::new("catalog-http", "1.0.0")
        .catalog(catalog)
        .build()
        .unwrap();
    // The options name the address, known once the listener is bound.
    let (send, receive) = std::sync::mpsc::channel::<HttpOptions>();
    let address = http::serve_in_thread(move |listener| async move {
        let options = receive.recv().unwrap();
        server
            .serve_http(listener, options, std::future::pending())
            .await
            .unwrap();
    });
    send.send(options(address)).unwrap();
    address
}

#[tokio::test]
async fn list_changes_reach_an_sse_subscription() {
    let catalog = Catalog::new();
    let address = serve(&catalog, |_| {
        HttpOptions::new().keep_alive(Duration::from_secs(60))
    });
    let listen = request(
        "l",
        "subscriptions/listen",
        json!({"notifications": {"toolsListChanged": true}}),
    );
    let response = http::send(
        address,
        "POST",
        "/mcp",
        &mcp_headers(&listen),
        listen.clone(),
    )
    .await;
    assert_eq!(response.status().as_u16(), 200);
    let mut events = EventReader::new(response);
    let ack = events.next().await.unwrap();
    assert_valid_notification(&ack);
    assert_eq!(
        ack["params"]["notifications"],
        json!({"toolsListChanged": true})
    );
    catalog.add_tool(secret_tool()).unwrap();
    // Not asked for: no resources notification comes before the tools one.
    let resource = mcp_runtime::catalog::RuntimeResource::new(
        mcp_runtime::protocol::Resource::new("mem://x", "x"),
        |_| async { "x" },
    );
    catalog.add_resource(resource).unwrap();
    assert!(catalog.remove_tool("secret"));
    for _ in 0..2 {
        let changed = events.next().await.unwrap();
        assert_valid_notification(&changed);
        assert_eq!(
            changed,
            json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed",
                   "params": {"_meta": {"io.modelcontextprotocol/subscriptionId": "l"}}})
        );
    }
    // And the list itself changed on the way.
    let list = request(2, "tools/list", json!({}));
    let reply = http::post(address, &list).await;
    assert_valid("ListToolsResultResponse", &reply.json());
    assert_eq!(reply.json()["result"]["tools"].as_array().unwrap().len(), 1);
}

async fn bearer(address: SocketAddr, token: &str, message: &str) -> http::Reply {
    let mut headers = mcp_headers(message);
    headers.push(("authorization".into(), format!("Bearer {token}")));
    http::request(address, "POST", "/mcp", &headers, message.to_owned()).await
}

#[tokio::test]
async fn runtime_items_are_authorized_and_hidden_like_static_ones() {
    let catalog = Catalog::new();
    catalog.add_tool(secret_tool()).unwrap();
    let address = serve(&catalog, |address| {
        HttpOptions::new().authorization(
            Authorization::new(format!("http://{address}/mcp"))
                .authorization_server("https://auth.example.com")
                .verifier(Names)
                .hide_unpermitted(),
        )
    });
    let names = |reply: &http::Reply| -> Vec<String> {
        let body = reply.json();
        assert_valid("ListToolsResultResponse", &body);
        assert_eq!(body["result"]["cacheScope"], "private");
        body["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_owned())
            .collect()
    };
    let list = request(1, "tools/list", json!({}));
    assert_eq!(names(&bearer(address, "reader", &list).await), ["open"]);
    assert_eq!(
        names(&bearer(address, "agent", &list).await),
        ["open", "secret"]
    );
    // Scopes are checked before the handler runs, as for a #[tool].
    let call = call_tool(2, "secret", json!({}));
    let refused = bearer(address, "reader", &call).await;
    assert_eq!(refused.status, 403);
    assert!(
        refused
            .header("www-authenticate")
            .unwrap_or("")
            .contains(r#"error="insufficient_scope", scope="secret:read""#),
        "{:?}",
        refused.header("www-authenticate")
    );
    let allowed = bearer(address, "agent", &call).await;
    assert_eq!(allowed.json()["result"]["content"][0]["text"], "classified");
}

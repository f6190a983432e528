//! CORS for MCP clients that are web pages, over real sockets: preflights
//! answered for allowed origins only (with the methods and headers MCP
//! uses, `Mcp-Param-*` included), the caller's origin echoed (never `*`,
//! never credentials), a disallowed origin still refused with 403, and a
//! request without an `Origin` answered exactly as before.
#![cfg(feature = "http")]

use std::net::SocketAddr;
use std::time::Duration;

use mcp_runtime::{HttpOptions, ServerBuilder, tool};
use mcp_test_support::http::{self, Reply, post_with};
use mcp_test_support::{assert_valid, call_tool, request};
use serde_json::json;

/// Forecasts the weather; the region is mirrored into `Mcp-Param-Region`.
#[tool]
fn forecast(#[arg(header = "Region")] region: String) -> String {
    format!("sunny in {region}")
}

const APP: &str = "https://app.example.com";

async fn with_http<F, Fut>(client: F)
where
    F: FnOnce(SocketAddr) -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    let server = ServerBuilder::new("cors", "1.0.0").build().unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let options = HttpOptions::new().allow_origin(APP);
    let serve = server.serve_http(listener, options, async {
        let _ = stopped.await;
    });
    let (served, ()) = tokio::join!(
        async { tokio::time::timeout(Duration::from_secs(20), serve).await },
        async {
            client(address).await;
            let _ = stop.send(());
        }
    );
    served.unwrap().unwrap();
}

async fn preflight(address: SocketAddr, path: &str, origin: Option<&str>) -> Reply {
    let mut headers = vec![
        (
            "access-control-request-method".to_owned(),
            "POST".to_owned(),
        ),
        (
            "access-control-request-headers".to_owned(),
            "content-type,mcp-protocol-version,mcp-method,mcp-name,mcp-param-region".to_owned(),
        ),
    ];
    if let Some(origin) = origin {
        headers.push(("origin".to_owned(), origin.to_owned()));
    }
    http::request(address, "OPTIONS", path, &headers, "").await
}

fn list(reply: &Reply, name: &str) -> Vec<String> {
    let value = reply.header(name).unwrap_or_default();
    let mut items: Vec<String> = value
        .split(',')
        .map(|item| item.trim().to_ascii_lowercase())
        .filter(|item| !item.is_empty())
        .collect();
    items.sort();
    items
}

#[tokio::test]
async fn a_preflight_from_an_allowed_origin_gets_the_methods_and_headers_mcp_uses() {
    with_http(|address| async move {
        for origin in [APP, "http://localhost:6274"] {
            let reply = preflight(address, "/mcp", Some(origin)).await;
            assert_eq!(reply.status.as_u16(), 200, "{origin}: {}", reply.body);
            assert_eq!(reply.header("access-control-allow-origin"), Some(origin));
            assert_eq!(reply.header("access-control-allow-credentials"), None);
            // The legacy adapter (default feature `legacy`) adds its
            // methods and its session header.
            let legacy = cfg!(feature = "legacy");
            let methods: &[&str] = match legacy {
                true => &["delete", "get", "post"],
                false => &["post"],
            };
            assert_eq!(list(&reply, "access-control-allow-methods"), methods);
            let mut headers = vec![
                "accept",
                "authorization",
                "content-type",
                "dpop",
                "last-event-id",
                "mcp-method",
                "mcp-name",
                "mcp-param-region",
                "mcp-protocol-version",
            ];
            if legacy {
                headers.push("mcp-session-id");
            }
            assert_eq!(list(&reply, "access-control-allow-headers"), headers);
            assert_eq!(reply.header("access-control-max-age"), Some("3600"));
            assert!(list(&reply, "vary").contains(&"origin".to_owned()));
            assert_eq!(reply.body, "");
        }
    })
    .await;
}

#[tokio::test]
async fn a_preflight_is_refused_as_its_request_would_be() {
    with_http(|address| async move {
        let reply = preflight(address, "/mcp", Some("https://evil.example.com")).await;
        assert_eq!(reply.status.as_u16(), 403);
        assert_eq!(reply.header("access-control-allow-origin"), None);
        let reply = preflight(address, "/mcp", Some("null")).await;
        assert_eq!(reply.status.as_u16(), 403);
        let reply = preflight(address, "/elsewhere", Some(APP)).await;
        assert_eq!(reply.status.as_u16(), 404);
        assert_eq!(reply.header("access-control-allow-origin"), None);
        let headers = [
            ("origin".to_owned(), APP.to_owned()),
            ("host".to_owned(), "evil.example.com".to_owned()),
        ];
        let reply = http::request(address, "OPTIONS", "/mcp", &headers, "").await;
        assert_eq!(reply.status.as_u16(), 403);
        // Without an Origin, OPTIONS is no preflight: the endpoint's 405.
        let reply = preflight(address, "/mcp", None).await;
        assert_eq!(reply.status.as_u16(), 405);
        assert_eq!(reply.header("access-control-allow-origin"), None);
    })
    .await;
}

#[tokio::test]
async fn an_allowed_origin_reads_the_answer_and_the_headers_it_needs() {
    with_http(|address| async move {
        let message = call_tool(1, "forecast", json!({"region": "north"}));
        let origin = [("origin", Some(APP)), ("mcp-param-region", Some("north"))];
        let reply = post_with(address, &message, &origin).await;
        assert_eq!(reply.status.as_u16(), 200, "{}", reply.body);
        assert_eq!(reply.header("access-control-allow-origin"), Some(APP));
        assert_eq!(reply.header("access-control-allow-credentials"), None);
        let mut exposed = vec!["dpop-nonce", "retry-after", "www-authenticate"];
        if cfg!(feature = "legacy") {
            exposed.insert(1, "mcp-session-id");
        }
        assert_eq!(list(&reply, "access-control-expose-headers"), exposed);
        assert!(list(&reply, "vary").contains(&"origin".to_owned()));
        let body = reply.json();
        assert_valid("CallToolResultResponse", &body);
        assert_eq!(body["result"]["content"][0]["text"], "sunny in north");
        // An error answer is readable too (its status and body).
        let reply = post_with(address, &message, &[("origin", Some(APP))]).await;
        assert_eq!(reply.status.as_u16(), 400, "{}", reply.body);
        assert_eq!(reply.header("access-control-allow-origin"), Some(APP));
    })
    .await;
}

#[tokio::test]
async fn a_disallowed_origin_is_still_refused() {
    with_http(|address| async move {
        let message = request(1, "server/discover", json!({}));
        let reply = post_with(
            address,
            &message,
            &[("origin", Some("https://evil.example.com"))],
        )
        .await;
        assert_eq!(reply.status.as_u16(), 403);
        assert_eq!(reply.header("access-control-allow-origin"), None);
        let twice = [("origin", Some(APP)), ("origin", Some(APP))];
        let headers: Vec<(String, String)> = http::mcp_headers(&message)
            .into_iter()
            .chain(
                twice
                    .iter()
                    .map(|(n, v)| ((*n).to_owned(), v.unwrap().to_owned())),
            )
            .collect();
        let reply = http::request(address, "POST", "/mcp", &headers, message.clone()).await;
        assert_eq!(reply.status.as_u16(), 403, "a repeated Origin");
        assert_eq!(reply.header("access-control-allow-origin"), None);
    })
    .await;
}

#[tokio::test]
async fn a_request_without_an_origin_gets_no_cors_headers() {
    with_http(|address| async move {
        let message = request(1, "server/discover", json!({}));
        let reply = http::post(address, &message).await;
        assert_eq!(reply.status.as_u16(), 200);
        for name in [
            "access-control-allow-origin",
            "access-control-expose-headers",
            "vary",
        ] {
            assert_eq!(reply.header(name), None, "{name}");
        }
    })
    .await;
}

//! Server Cards (SEP-2127, draft): the card at `<endpoint>/server-card`
//! validates against the draft's schema (vendored in
//! `tests/support/server-card`, whose invalid examples the same validator
//! refuses), says what `server/discover` says (name, version, title,
//! description, icons, website, revisions), is public (any `Host` and
//! `Origin`, CORS `*`, cached), and an MCP Catalog names it; a card the
//! schema would refuse stops the server from starting.
#![cfg(feature = "http")]

use std::net::SocketAddr;

use mcp_runtime::protocol::{Icon, PROTOCOL_VERSION};
use mcp_runtime::{HttpOptions, ServerBuilder, ServerCard, tool};
use mcp_test_support::http::{self, Reply};
use mcp_test_support::{request, server_card_violations};
use serde_json::{Value, json};

/// Answers.
#[tool]
fn carded() -> String {
    "ok".to_owned()
}

fn builder() -> ServerBuilder {
    ServerBuilder::new("weather", "2.1.0")
        .title("Weather")
        .description("Forecasts and alerts for any city.")
        .website_url("https://example.com/weather")
        .icon(Icon::new("https://example.com/weather.png"))
}

/// A server with `card`, on a free loopback port.
fn serve(card: ServerCard) -> SocketAddr {
    http::serve_in_thread(move |listener| async move {
        let server = builder().build().unwrap();
        let options = HttpOptions::new().server_card(card);
        let never = std::future::pending::<()>();
        server.serve_http(listener, options, never).await.unwrap();
    })
}

async fn get(address: SocketAddr, path: &str, headers: &[(&str, &str)]) -> Reply {
    let headers: Vec<(String, String)> = (headers.iter())
        .map(|(name, value)| ((*name).to_owned(), (*value).to_owned()))
        .collect();
    http::request(address, "GET", path, &headers, "").await
}

fn card() -> ServerCard {
    ServerCard::new("com.example")
        .remote("https://mcp.example.com/mcp")
        .repository("github", "https://github.com/example/weather")
        .catalog()
}

#[tokio::test]
async fn the_card_validates_and_says_what_discover_says() {
    let address = serve(card());
    http::wait_listening(address).await;
    let accept = [("accept", "application/mcp-server-card+json")];
    let reply = get(address, "/mcp/server-card", &accept).await;
    assert_eq!(reply.status.as_u16(), 200, "{}", reply.body);
    assert_eq!(
        reply.headers["content-type"],
        "application/mcp-server-card+json"
    );
    assert_eq!(reply.headers["cache-control"], "public, max-age=3600");
    assert_eq!(reply.headers["access-control-allow-origin"], "*");
    let card: Value = serde_json::from_str(&reply.body).unwrap();
    assert_eq!(server_card_violations(&card), Vec::<String>::new());
    // The adapter's revisions too, when it serves them on the endpoint.
    let legacy: &[&str] = match cfg!(feature = "legacy") {
        true => &["2025-11-25", "2025-06-18", "2025-03-26"],
        false => &[],
    };
    let versions = [&[PROTOCOL_VERSION][..], legacy].concat();
    assert_eq!(
        card,
        json!({
            "$schema": "https://static.modelcontextprotocol.io/schemas/v2/server-card.schema.json",
            "name": "com.example/weather",
            "version": "2.1.0",
            "title": "Weather",
            "description": "Forecasts and alerts for any city.",
            "icons": [{"src": "https://example.com/weather.png"}],
            "websiteUrl": "https://example.com/weather",
            "repository": {"source": "github", "url": "https://github.com/example/weather"},
            "remotes": [{
                "type": "streamable-http",
                "url": "https://mcp.example.com/mcp",
                "supportedProtocolVersions": versions,
            }],
        })
    );

    // The same server's discover: nothing the card says contradicts it.
    let discover = http::post(address, &request(1, "server/discover", json!({}))).await;
    let discover: Value = serde_json::from_str(&discover.body).unwrap();
    let result = &discover["result"];
    let info = &result["_meta"]["io.modelcontextprotocol/serverInfo"];
    assert_eq!(
        card["name"].as_str().unwrap().split('/').nth(1),
        info["name"].as_str()
    );
    for (card_field, info_field) in [
        ("version", "version"),
        ("title", "title"),
        ("description", "description"),
        ("icons", "icons"),
        ("websiteUrl", "websiteUrl"),
    ] {
        assert_eq!(card[card_field], info[info_field], "{card_field}");
    }
    let listed = card["remotes"][0]["supportedProtocolVersions"]
        .as_array()
        .unwrap();
    for version in result["supportedVersions"].as_array().unwrap() {
        assert!(listed.contains(version), "{version} is not on the card");
    }
}

#[tokio::test]
async fn the_card_is_public_and_only_read() {
    let address = serve(card());
    http::wait_listening(address).await;
    // Any Host and Origin: the card is public metadata, CORS `*`.
    let foreign = [
        ("host", "mcp.example.com"),
        ("origin", "https://evil.example"),
    ];
    let reply = get(address, "/mcp/server-card", &foreign).await;
    assert_eq!(reply.status.as_u16(), 200, "{}", reply.body);
    assert_eq!(reply.headers["access-control-allow-origin"], "*");
    assert_eq!(reply.headers["access-control-allow-methods"], "GET");
    let head = http::request(address, "HEAD", "/mcp/server-card", &[], "").await;
    assert_eq!((head.status.as_u16(), head.body.as_str()), (200, ""));
    let preflight = http::request(address, "OPTIONS", "/mcp/server-card", &[], "").await;
    assert_eq!(preflight.status.as_u16(), 204);
    assert_eq!(
        preflight.headers["access-control-allow-headers"],
        "Content-Type"
    );
    let posted = http::request(address, "POST", "/mcp/server-card", &[], "{}").await;
    assert_eq!(posted.status.as_u16(), 405);
    assert_eq!(posted.headers["allow"], "GET, HEAD, OPTIONS");
    // The MCP endpoint itself still checks the Host.
    let refused = get(address, "/mcp", &foreign).await;
    assert_eq!(refused.status.as_u16(), 403, "{}", refused.body);
}

#[tokio::test]
async fn the_catalog_names_the_card() {
    let address = serve(card());
    http::wait_listening(address).await;
    let reply = get(address, "/.well-known/mcp/catalog.json", &[]).await;
    assert_eq!(reply.status.as_u16(), 200, "{}", reply.body);
    assert_eq!(reply.headers["content-type"], "application/json");
    assert_eq!(reply.headers["access-control-allow-origin"], "*");
    let catalog: Value = serde_json::from_str(&reply.body).unwrap();
    assert_eq!(
        catalog,
        json!({
            "specVersion": "draft",
            "entries": [{
                "identifier": "urn:air:example.com:weather",
                "displayName": "Weather",
                "type": "application/mcp-server-card+json",
                "url": "https://mcp.example.com/mcp/server-card",
            }],
        })
    );
    // Without `catalog()`, no catalog.
    let address = serve(ServerCard::new("com.example").remote("https://mcp.example.com/mcp"));
    http::wait_listening(address).await;
    let reply = get(address, "/.well-known/mcp/catalog.json", &[]).await;
    assert_eq!(reply.status.as_u16(), 404);
}

#[test]
fn the_validator_takes_the_valid_examples_and_refuses_the_invalid_ones() {
    let examples =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/support/server-card");
    for (folder, valid) in [("valid", true), ("invalid", false)] {
        let mut seen = 0;
        for entry in std::fs::read_dir(examples.join(folder)).unwrap() {
            let path = entry.unwrap().path();
            let example: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
            let violations = server_card_violations(&example);
            assert_eq!(
                violations.is_empty(),
                valid,
                "{}: {violations:?}",
                path.display()
            );
            seen += 1;
        }
        assert!(seen >= 2, "{folder}: {seen} examples");
    }
}

/// Starts `builder` with `card`; the error it stops with, if any.
async fn start_error(builder: ServerBuilder, card: ServerCard) -> Option<String> {
    let server = builder.build().unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let options = HttpOptions::new().server_card(card);
    let ready = std::future::ready(());
    let started = server.serve_http(listener, options, ready).await;
    started.err().map(|error| {
        assert_eq!(error.kind(), std::io::ErrorKind::InvalidInput);
        error.to_string()
    })
}

#[tokio::test]
async fn a_card_the_schema_would_refuse_stops_the_start() {
    let remote = || ServerCard::new("com.example").remote("https://mcp.example.com/mcp");
    let undescribed = ServerBuilder::new("weather", "1.0.0");
    let error = start_error(undescribed, remote()).await.unwrap();
    assert!(error.contains("needs a description"), "{error}");
    let error = start_error(builder(), ServerCard::new("com.example"))
        .await
        .unwrap();
    assert!(error.contains("needs the URL"), "{error}");
    let error = start_error(
        builder(),
        ServerCard::new("com example").remote("https://x/mcp"),
    )
    .await
    .unwrap();
    assert!(error.contains("reverse-DNS"), "{error}");
    let long = builder().description("x".repeat(101));
    let error = start_error(long, remote()).await.unwrap();
    assert!(error.contains("1 to 100 characters"), "{error}");
    assert_eq!(start_error(builder(), remote()).await, None);
}

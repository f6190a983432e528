//! MCP Apps (`io.modelcontextprotocol/ui`) on the wire: the `_meta` the
//! macros emit for views and the tools linked to them (what the official
//! TypeScript helpers emit), the extension in `server/discover`, and the
//! client's declared support in a handler. Every message is validated
//! against the spec's `schema.json`, every `_meta.ui` against the MCP Apps
//! `schema.json`.

use mcp_runtime::apps::{self, UiCapability};
use mcp_runtime::{ResourceContents, Server, ServerBuilder, Structured, resource, tool};
use mcp_test_support::apps::assert_valid_app;
use mcp_test_support::{assert_valid, meta_with, parse, request};
use serde_json::{Value, json};

/// The sales view, with everything `app(...)` takes.
#[resource(
    "ui://sales/view.html",
    title = "Sales view",
    app(
        csp(
            connect_domains = ["https://api.example.com", "wss://live.example.com"],
            resource_domains = ["https://*.cdn.example.com"],
            frame_domains = ["https://www.youtube.com"],
            base_uri_domains = ["https://cdn.example.com"]
        ),
        permissions(camera, clipboard_write, microphone = false),
        prefers_border = false,
        domain = "a904794854a047f6.claudemcpcontent.com"
    )
)]
fn sales_view() -> &'static str {
    include_str!("apps/view.html")
}

/// A view with nothing but `app`.
#[resource("ui://plain/view.html", app)]
fn plain_view() -> String {
    "<!doctype html><title>Plain</title>".to_owned()
}

/// A view whose handler sets its own `_meta.ui` on its contents, and one
/// more item of another URI.
#[resource("ui://own/view.html", app(prefers_border = true))]
fn own_view() -> Vec<ResourceContents> {
    let mut own = ResourceContents::text("ui://own/view.html", "<p>own</p>");
    if let ResourceContents::Text(text) = &mut own {
        let meta = json!({"ui": {"prefersBorder": false}, "com.example/x": 1});
        text.meta = meta.as_object().cloned();
    }
    let other = ResourceContents::text("ui://own/other.css", "p {}").with_mime_type("text/css");
    vec![own, other]
}

#[derive(serde::Serialize, schemars::JsonSchema)]
struct Sales {
    total: u64,
}

/// Sales: shown in the view by hosts with Apps, as text to the others.
#[tool(ui = "ui://sales/view.html", annotations(read_only))]
fn sales(#[ctx] ui: UiCapability<'_>) -> Structured<Sales> {
    let sales = Sales { total: 42 };
    let text = match ui.supports_apps() {
        true => "Sales: shown in the view.".to_owned(),
        false => format!("Total sales: {}", sales.total),
    };
    Structured::new(sales).with_text(text)
}

/// Refreshes the sales: called by the view only.
#[tool(visibility = ["app"])]
fn refresh_sales() -> Structured<Sales> {
    Structured::new(Sales { total: 43 })
}

/// Both keys, and `meta` of its own.
#[tool(
    ui = "ui://plain/view.html",
    visibility = ["model", "app"],
    meta = r#"{"com.example/tier": "gold"}"#
)]
fn plain() -> &'static str {
    "plain"
}

/// No app at all.
#[tool]
fn unrelated() -> &'static str {
    "unrelated"
}

fn server() -> Server {
    ServerBuilder::new("apps", "1.0.0")
        .without_server_info_in_results()
        .build()
        .unwrap()
}

async fn send(message: String, definition: &str) -> Value {
    let exchange = server().exchange(message).await;
    let response = parse(&exchange.response.unwrap());
    assert_valid(definition, &response);
    response
}

fn tool_meta(tools: &Value, name: &str) -> Value {
    let tool = tools
        .as_array()
        .unwrap()
        .iter()
        .find(|tool| tool["name"] == name)
        .unwrap_or_else(|| panic!("no tool {name}"));
    tool.get("_meta").cloned().unwrap_or(Value::Null)
}

#[tokio::test]
async fn tools_carry_the_ui_meta_the_official_helpers_emit() {
    let response = send(
        request(1, "tools/list", json!({})),
        "ListToolsResultResponse",
    )
    .await;
    let tools = &response["result"]["tools"];
    // registerAppTool: `_meta.ui.resourceUri`, and the older key beside it.
    assert_eq!(
        tool_meta(tools, "sales"),
        json!({
            "ui": {"resourceUri": "ui://sales/view.html"},
            "ui/resourceUri": "ui://sales/view.html"
        })
    );
    assert_eq!(
        tool_meta(tools, "refresh_sales"),
        json!({"ui": {"visibility": ["app"]}})
    );
    assert_eq!(
        tool_meta(tools, "plain"),
        json!({
            "com.example/tier": "gold",
            "ui": {"resourceUri": "ui://plain/view.html", "visibility": ["model", "app"]},
            "ui/resourceUri": "ui://plain/view.html"
        })
    );
    assert_eq!(tool_meta(tools, "unrelated"), Value::Null);
    for name in ["sales", "refresh_sales", "plain"] {
        assert_valid_app("McpUiToolMeta", &tool_meta(tools, name)["ui"]);
    }
}

fn sales_ui() -> Value {
    json!({
        "csp": {
            "connectDomains": ["https://api.example.com", "wss://live.example.com"],
            "resourceDomains": ["https://*.cdn.example.com"],
            "frameDomains": ["https://www.youtube.com"],
            "baseUriDomains": ["https://cdn.example.com"]
        },
        "permissions": {"camera": {}, "clipboardWrite": {}},
        "domain": "a904794854a047f6.claudemcpcontent.com",
        "prefersBorder": false
    })
}

#[tokio::test]
async fn views_are_listed_with_the_app_mime_type_and_their_ui_meta() {
    let response = send(
        request(1, "resources/list", json!({})),
        "ListResourcesResultResponse",
    )
    .await;
    assert_eq!(
        response["result"]["resources"],
        json!([
            {
                "uri": "ui://own/view.html",
                "name": "own_view",
                "description": "A view whose handler sets its own `_meta.ui` on its contents, and one\nmore item of another URI.",
                "mimeType": "text/html;profile=mcp-app",
                "_meta": {"ui": {"prefersBorder": true}}
            },
            {
                "uri": "ui://plain/view.html",
                "name": "plain_view",
                "description": "A view with nothing but `app`.",
                "mimeType": "text/html;profile=mcp-app"
            },
            {
                "uri": "ui://sales/view.html",
                "name": "sales_view",
                "title": "Sales view",
                "description": "The sales view, with everything `app(...)` takes.",
                "mimeType": "text/html;profile=mcp-app",
                "_meta": {"ui": sales_ui()}
            }
        ])
    );
    assert_valid_app("McpUiResourceMeta", &sales_ui());
}

#[tokio::test]
async fn each_read_carries_the_ui_meta_unless_the_handler_set_its_own() {
    let read = |uri: &str| request(1, "resources/read", json!({"uri": uri}));
    let response = send(read("ui://sales/view.html"), "ReadResourceResultResponse").await;
    assert_eq!(
        response["result"]["contents"],
        json!([{
            "uri": "ui://sales/view.html",
            "mimeType": "text/html;profile=mcp-app",
            "text": include_str!("apps/view.html"),
            "_meta": {"ui": sales_ui()}
        }])
    );
    let response = send(read("ui://plain/view.html"), "ReadResourceResultResponse").await;
    assert_eq!(
        response["result"]["contents"],
        json!([{
            "uri": "ui://plain/view.html",
            "mimeType": "text/html;profile=mcp-app",
            "text": "<!doctype html><title>Plain</title>"
        }])
    );
    let response = send(read("ui://own/view.html"), "ReadResourceResultResponse").await;
    assert_eq!(
        response["result"]["contents"],
        json!([
            {
                "uri": "ui://own/view.html",
                "mimeType": "text/html;profile=mcp-app",
                "text": "<p>own</p>",
                "_meta": {"ui": {"prefersBorder": false}, "com.example/x": 1}
            },
            {"uri": "ui://own/other.css", "mimeType": "text/css", "text": "p {}"}
        ])
    );
}

#[tokio::test]
async fn server_discover_advertises_the_extension() {
    let response = send(
        request(1, "server/discover", json!({})),
        "DiscoverResultResponse",
    )
    .await;
    assert_eq!(
        response["result"]["capabilities"]["extensions"],
        json!({"io.modelcontextprotocol/ui": {}})
    );
}

#[tokio::test]
async fn the_extension_added_by_hand_as_well_is_offered_once() {
    let server = ServerBuilder::new("apps", "1.0.0")
        .with(apps::extension())
        .build()
        .expect("the builder's extension replaces the linked one");
    let exchange = server
        .exchange(request(1, "server/discover", json!({})))
        .await;
    let response = parse(&exchange.response.unwrap());
    assert_eq!(
        response["result"]["capabilities"]["extensions"],
        json!({"io.modelcontextprotocol/ui": {}})
    );
}

async fn call_sales(capabilities: Value) -> Value {
    let message = request(
        1,
        "tools/call",
        json!({"name": "sales", "arguments": {}, "_meta": meta_with(capabilities)}),
    );
    let response = send(message, "CallToolResultResponse").await;
    response["result"].clone()
}

#[tokio::test]
async fn a_tool_answers_hosts_without_apps_with_text() {
    let apps = json!({"extensions": {"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html;profile=mcp-app"]}}});
    let result = call_sales(apps).await;
    assert_eq!(
        result["content"],
        json!([{"type": "text", "text": "Sales: shown in the view."}])
    );
    assert_eq!(result["structuredContent"], json!({"total": 42}));

    for without in [
        json!({}),
        json!({"extensions": {"io.modelcontextprotocol/ui": {}}}),
        json!({"extensions": {"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html"]}}}),
    ] {
        let result = call_sales(without.clone()).await;
        assert_eq!(
            result["content"],
            json!([{"type": "text", "text": "Total sales: 42"}]),
            "{without}"
        );
        assert_eq!(result["structuredContent"], json!({"total": 42}));
    }
}

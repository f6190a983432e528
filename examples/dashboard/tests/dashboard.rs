//! The dashboard app on the wire: the view and its link, the report as
//! structured content with a text table for hosts without MCP Apps, and
//! the app-only tool.

use dashboard as _;
use mcp_runtime::{Server, ServerBuilder};
use mcp_test_support::apps::assert_valid_app;
use mcp_test_support::{assert_valid, meta_with, parse, request};
use serde_json::{Value, json};

fn server() -> Server {
    ServerBuilder::new("dashboard", "0.1.0")
        .without_server_info_in_results()
        .build()
        .expect("the view link checks out")
}

async fn send(message: String, definition: &str) -> Value {
    let response = parse(&server().exchange(message).await.response.unwrap());
    assert_valid(definition, &response);
    response
}

async fn call(name: &str, arguments: Value, capabilities: Value) -> Value {
    let params = json!({"name": name, "arguments": arguments, "_meta": meta_with(capabilities)});
    let response = send(request(1, "tools/call", params), "CallToolResultResponse").await;
    response["result"].clone()
}

fn apps() -> Value {
    json!({"extensions": {"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html;profile=mcp-app"]}}})
}

#[tokio::test]
async fn the_report_links_to_the_view_and_the_loader_is_for_views_only() {
    let response = send(
        request(1, "tools/list", json!({})),
        "ListToolsResultResponse",
    )
    .await;
    let tools = response["result"]["tools"].as_array().unwrap();
    let meta = |name: &str| tools.iter().find(|t| t["name"] == name).unwrap()["_meta"].clone();
    assert_eq!(
        meta("sales_report"),
        json!({
            "ui": {"resourceUri": "ui://dashboard/view.html"},
            "ui/resourceUri": "ui://dashboard/view.html"
        })
    );
    assert_eq!(meta("load_week"), json!({"ui": {"visibility": ["app"]}}));
    assert_valid_app("McpUiToolMeta", &meta("sales_report")["ui"]);
    assert_valid_app("McpUiToolMeta", &meta("load_week")["ui"]);

    let read = request(
        1,
        "resources/read",
        json!({"uri": "ui://dashboard/view.html"}),
    );
    let response = send(read, "ReadResourceResultResponse").await;
    let view = &response["result"]["contents"][0];
    assert_eq!(view["mimeType"], "text/html;profile=mcp-app");
    assert_eq!(view["_meta"], json!({"ui": {"prefersBorder": true}}));
    let html = view["text"].as_str().unwrap();
    assert!(html.starts_with("<!doctype html>") && html.contains("callServerTool"));
}

#[tokio::test]
async fn hosts_with_apps_get_the_view_the_others_a_text_table() {
    let structured = json!({
        "week": 1,
        "regions": [
            {"region": "East", "units": 145, "revenue": 3625},
            {"region": "North", "units": 127, "revenue": 3175},
            {"region": "South", "units": 106, "revenue": 2650},
            {"region": "West", "units": 93, "revenue": 2325}
        ],
        "total_revenue": 11775
    });
    let result = call("sales_report", json!({}), apps()).await;
    assert_eq!(result["structuredContent"], structured);
    assert_eq!(
        result["content"],
        json!([{"type": "text", "text": "Sales for week 1 are shown in the dashboard: €11775 in total."}])
    );
    let result = call("sales_report", json!({"week": 1}), json!({})).await;
    assert_eq!(result["structuredContent"], structured);
    assert_eq!(
        result["content"][0]["text"],
        "Sales, week 1\n\nregion | units | revenue\n--- | ---: | ---:\n\
         East | 145 | €3625\nNorth | 127 | €3175\nSouth | 106 | €2650\nWest | 93 | €2325\n\
         total | | €11775"
    );
}

#[tokio::test]
async fn weeks_outside_the_year_are_tool_errors() {
    for (name, week) in [("sales_report", 0), ("load_week", 53)] {
        let result = call(name, json!({"week": week}), apps()).await;
        assert_eq!(result["isError"], true);
        assert_eq!(
            result["content"][0]["text"],
            format!("week {week} does not exist: give a week from 1 to 52")
        );
    }
    let result = call("load_week", json!({"week": 2}), apps()).await;
    assert_eq!(result["structuredContent"]["total_revenue"], 12675);
    assert_eq!(result["content"][0]["text"], "Week 2: €12675 in total.");
}

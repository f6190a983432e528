//! Golden transcripts for `tools/list` and `tools/call`: exact JSON out for
//! every path, every message validated against the spec's `schema.json`.

use mcp_runtime::{
    CacheHint, CacheScope, Content, Context, Json, Logger, Progress, ResourceContents, Server,
    ServerBuilder, Structured, tool,
};
use mcp_test_support::{
    assert_valid, assert_valid_error, assert_valid_notification, call_tool, meta, parse, request,
    spec_example,
};
use serde_json::{Value, json};

/// Echoes the text back.
#[tool(annotations(read_only, open_world = false))]
fn echo(
    /// The text to echo.
    text: String,
) -> String {
    text
}

#[derive(serde::Serialize, schemars::JsonSchema)]
struct Sum {
    sum: i64,
}

/// Adds two integers.
#[tool]
fn add(a: i64, b: i64) -> Structured<Sum> {
    let sum = a + b;
    Structured::new(Sum { sum }).with_text(sum.to_string())
}

/// Always fails.
#[tool]
fn fail() -> Result<String, String> {
    Err("Invalid departure date: must be in the future. Current date is 08/08/2025.".into())
}

/// Panics.
#[tool]
fn boom() -> String {
    panic!("kaboom")
}

/// Reports progress three times.
#[tool]
async fn progress(#[ctx] progress: Progress) -> &'static str {
    progress.report_total(0.0, 2.0);
    progress.report_message(1.0, Some(2.0), "half way");
    progress.report(0.5); // not increasing: dropped
    progress.report_total(2.0, 2.0);
    "done"
}

/// Logs at three levels.
#[tool]
fn chatty(#[ctx] log: Logger) -> &'static str {
    log.debug("details");
    log.info("working");
    log.error(json!({"error": "disk full"}));
    "logged"
}

/// Takes nothing.
#[tool]
fn nothing() -> &'static str {
    "nothing"
}

/// Greets someone, or everyone.
#[tool]
fn greet(
    /// Who to greet.
    name: Option<String>,
) -> String {
    format!("hello {}", name.as_deref().unwrap_or("everyone"))
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Item {
    name: String,
}

/// Counts named items.
#[tool]
fn count(items: Vec<Item>) -> String {
    items
        .iter()
        .map(|i| i.name.len())
        .sum::<usize>()
        .to_string()
}

/// Returns one block of every content type.
#[tool]
fn mixed() -> Vec<Content> {
    vec![
        Content::text("text"),
        Content::image([137u8, 80, 78, 71], "image/png"),
        Content::audio(b"RIFF", "audio/wav"),
        Content::resource_link("file:///project/src/main.rs", "main.rs"),
        Content::resource(
            ResourceContents::text("test://embedded", "embedded text").with_mime_type("text/plain"),
        ),
    ]
}

#[derive(serde::Serialize, schemars::JsonSchema)]
struct Weather {
    temperature: f64,
    conditions: String,
    humidity: u32,
}

/// Weather with the spec example's exact text.
#[tool]
fn weather() -> Structured<Weather> {
    Structured::new(Weather {
        temperature: 22.5,
        conditions: "Partly cloudy".into(),
        humidity: 65,
    })
    .with_text(r#"{"temperature": 22.5, "conditions": "Partly cloudy", "humidity": 65}"#)
}

/// Weather as plain JSON.
#[tool]
fn weather_json() -> Json<Weather> {
    Json(Weather {
        temperature: 1.5,
        conditions: "Rain".into(),
        humidity: 90,
    })
}

/// Decorated with every option.
#[tool(
    name = "meta.tool",
    title = "Meta Tool",
    annotations(title = "Annotated", read_only = false, destructive, idempotent = false, open_world),
    icon(src = "https://example.com/icon.png", mime_type = "image/png", sizes = ["48x48", "96x96"], theme = "light"),
    icon(src = "data:image/svg+xml;base64,PHN2Zy8+", sizes = ["any"]),
    meta = r#"{"com.example/category": "demo", "weight": 3}"#
)]
fn decorated() -> &'static str {
    "decorated"
}

/// Reports what it knows about the request.
#[tool]
fn whoami(#[ctx] ctx: &Context) -> String {
    format!(
        "{} {} {} {}",
        ctx.request_id(),
        ctx.method(),
        ctx.meta().protocol_version,
        ctx.client_info().map_or("anonymous", |c| c.name.as_str())
    )
}

fn server() -> Server {
    ServerBuilder::new("golden", "1.0.0").build().unwrap()
}

fn bare_server() -> Server {
    ServerBuilder::new("golden", "1.0.0")
        .without_server_info_in_results()
        .build()
        .unwrap()
}

/// Sends one request and returns the validated response.
async fn call(server: &Server, message: String) -> Value {
    let exchange = server.exchange(message).await;
    let response = parse(&exchange.response.expect("a response"));
    if response.get("error").is_some() {
        assert_valid_error(&response);
    } else if response["result"].get("tools").is_some() {
        assert_valid("ListToolsResultResponse", &response);
    } else {
        assert_valid("CallToolResultResponse", &response);
        assert_valid("CallToolResult", &response["result"]);
    }
    for notification in &exchange.notifications {
        assert_valid_notification(&parse(notification));
    }
    response
}

async fn result(message: String) -> Value {
    let response = call(&bare_server(), message).await;
    assert!(response.get("error").is_none(), "{response}");
    response["result"].clone()
}

fn text_result(text: &str) -> Value {
    json!({"resultType": "complete", "content": [{"type": "text", "text": text}]})
}

fn tool_error(text: &str) -> Value {
    json!({"resultType": "complete", "content": [{"type": "text", "text": text}], "isError": true})
}

#[tokio::test]
async fn tools_are_listed_sorted_with_closed_schemas() {
    let response = call(&server(), request(1, "tools/list", json!({}))).await;
    let result = &response["result"];
    let names: Vec<&str> = result["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "add",
            "boom",
            "chatty",
            "count",
            "echo",
            "fail",
            "greet",
            "meta.tool",
            "mixed",
            "nothing",
            "progress",
            "weather",
            "weather_json",
            "whoami"
        ]
    );
    assert_eq!(result["ttlMs"], 0);
    assert_eq!(result["cacheScope"], "private");
    assert_eq!(
        result["_meta"],
        json!({"io.modelcontextprotocol/serverInfo": {"name": "golden", "version": "1.0.0"}})
    );
    assert!(result.get("nextCursor").is_none());
    let tool = |name: &str| {
        result["tools"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == name)
            .unwrap()
            .clone()
    };
    assert_eq!(
        tool("echo"),
        json!({
            "name": "echo",
            "description": "Echoes the text back.",
            "inputSchema": {
                "type": "object",
                "additionalProperties": false,
                "properties": {"text": {"type": "string", "description": "The text to echo."}},
                "required": ["text"]
            },
            "annotations": {"readOnlyHint": true, "openWorldHint": false}
        })
    );
    assert_eq!(
        tool("nothing"),
        json!({
            "name": "nothing",
            "description": "Takes nothing.",
            "inputSchema": {"type": "object", "additionalProperties": false, "properties": {}}
        })
    );
    assert_eq!(
        tool("greet")["inputSchema"],
        json!({
            "type": "object",
            "additionalProperties": false,
            "properties": {"name": {"type": "string", "description": "Who to greet."}}
        })
    );
    assert_eq!(
        tool("add"),
        json!({
            "name": "add",
            "description": "Adds two integers.",
            "inputSchema": {
                "type": "object",
                "additionalProperties": false,
                "properties": {
                    "a": {"type": "integer", "format": "int64"},
                    "b": {"type": "integer", "format": "int64"}
                },
                "required": ["a", "b"]
            },
            "outputSchema": {
                "type": "object",
                "properties": {"sum": {"type": "integer", "format": "int64"}},
                "required": ["sum"]
            }
        })
    );
    assert_eq!(
        tool("meta.tool"),
        json!({
            "name": "meta.tool",
            "title": "Meta Tool",
            "description": "Decorated with every option.",
            "inputSchema": {"type": "object", "additionalProperties": false, "properties": {}},
            "annotations": {
                "title": "Annotated",
                "readOnlyHint": false,
                "destructiveHint": true,
                "idempotentHint": false,
                "openWorldHint": true
            },
            "icons": [
                {"src": "https://example.com/icon.png", "mimeType": "image/png", "sizes": ["48x48", "96x96"], "theme": "light"},
                {"src": "data:image/svg+xml;base64,PHN2Zy8+", "sizes": ["any"]}
            ],
            "_meta": {"com.example/category": "demo", "weight": 3}
        })
    );
    for tool in result["tools"].as_array().unwrap() {
        assert_valid("Tool", tool);
        assert!(
            !tool["description"].as_str().unwrap().is_empty(),
            "every tool has a description"
        );
    }
}

#[tokio::test]
async fn three_lists_in_a_row_are_identical() {
    let server = server();
    let first = call(&server, request(1, "tools/list", json!({}))).await;
    for id in 2..4 {
        let again = call(&server, request(id, "tools/list", json!({}))).await;
        assert_eq!(again["result"], first["result"]);
    }
}

#[tokio::test]
async fn pages_are_walked_with_opaque_cursors() {
    let server = ServerBuilder::new("golden", "1.0.0")
        .page_size(4)
        .cache_hints(
            mcp_runtime::CacheHints::new().lists(CacheHint::new(300_000, CacheScope::Public)),
        )
        .build()
        .unwrap();
    let mut names = Vec::new();
    let mut cursor: Option<String> = None;
    let mut pages = 0;
    loop {
        let params = match &cursor {
            Some(c) => json!({"cursor": c}),
            None => json!({}),
        };
        let response = call(&server, request(pages, "tools/list", params)).await;
        let result = &response["result"];
        assert_eq!(result["ttlMs"], 300_000);
        assert_eq!(result["cacheScope"], "public");
        let tools = result["tools"].as_array().unwrap();
        assert!(tools.len() <= 4);
        names.extend(tools.iter().map(|t| t["name"].as_str().unwrap().to_owned()));
        pages += 1;
        match result.get("nextCursor") {
            Some(next) => cursor = Some(next.as_str().unwrap().to_owned()),
            None => break,
        }
    }
    assert_eq!(pages, 4);
    assert_eq!(names.len(), 14);
    let mut sorted = names.clone();
    sorted.sort();
    assert_eq!(names, sorted);

    for bad in [json!("not-a-cursor"), json!(""), json!(7)] {
        let response = call(&server, request(9, "tools/list", json!({"cursor": bad}))).await;
        assert_eq!(response["error"]["code"], -32602, "{bad}");
    }
    let response = call(
        &server,
        request(9, "tools/list", json!({"cursor": "bm9wZQ"})),
    )
    .await;
    assert_eq!(
        response,
        json!({"jsonrpc": "2.0", "id": 9, "error": {"code": -32602, "message": "Invalid cursor"}})
    );
}

#[tokio::test]
async fn text_structured_and_error_results() {
    assert_eq!(
        result(call_tool(1, "echo", json!({"text": "hi"}))).await,
        text_result("hi")
    );
    assert_eq!(
        result(call_tool(2, "add", json!({"a": 2, "b": 3}))).await,
        json!({"resultType": "complete", "content": [{"type": "text", "text": "5"}], "structuredContent": {"sum": 5}})
    );
    assert_eq!(
        result(call_tool(3, "fail", json!({}))).await,
        spec_example("CallToolResult/invalid-tool-input-error.json")
    );
    assert_eq!(
        result(call_tool(4, "weather", json!({}))).await,
        spec_example("CallToolResult/result-with-structured-content.json")
    );
    assert_eq!(
        result(call_tool(5, "weather_json", json!({}))).await,
        json!({
            "resultType": "complete",
            "content": [{"type": "text", "text": r#"{"temperature":1.5,"conditions":"Rain","humidity":90}"#}],
            "structuredContent": {"temperature": 1.5, "conditions": "Rain", "humidity": 90}
        })
    );
}

#[tokio::test]
async fn results_carry_server_info() {
    let response = call(&server(), call_tool("x", "echo", json!({"text": "hi"}))).await;
    assert_eq!(
        response,
        json!({"jsonrpc": "2.0", "id": "x", "result": {
            "resultType": "complete",
            "content": [{"type": "text", "text": "hi"}],
            "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "golden", "version": "1.0.0"}}
        }})
    );
}

#[tokio::test]
async fn every_content_type() {
    assert_eq!(
        result(call_tool(1, "mixed", json!({}))).await["content"],
        json!([
            {"type": "text", "text": "text"},
            {"type": "image", "data": "iVBORw==", "mimeType": "image/png"},
            {"type": "audio", "data": "UklGRg==", "mimeType": "audio/wav"},
            {"type": "resource_link", "uri": "file:///project/src/main.rs", "name": "main.rs"},
            {"type": "resource", "resource": {"uri": "test://embedded", "mimeType": "text/plain", "text": "embedded text"}}
        ])
    );
}

#[tokio::test]
async fn arguments_that_do_not_fit_are_tool_errors_naming_the_field() {
    let cases = [
        (
            "echo",
            json!({"text": 5}),
            "Invalid arguments for tool echo: `text`: invalid type: integer `5`, expected a string",
        ),
        (
            "echo",
            json!({}),
            "Invalid arguments for tool echo: missing field `text`",
        ),
        (
            "echo",
            json!({"text": "a", "extra": 1}),
            "Invalid arguments for tool echo: `extra`: unknown field `extra`, expected `text`",
        ),
        (
            "nothing",
            json!({"x": 1}),
            "Invalid arguments for tool nothing: `x`: unknown field `x`, there are no fields",
        ),
        (
            "add",
            json!({"a": 1, "b": "two"}),
            "Invalid arguments for tool add: `b`: invalid type: string \"two\", expected i64",
        ),
        (
            "add",
            json!({"a": 1.5, "b": 2}),
            "Invalid arguments for tool add: `a`: invalid type: floating point `1.5`, expected i64",
        ),
        (
            "count",
            json!({"items": [{"name": "a"}, {"nom": "b"}]}),
            "Invalid arguments for tool count: `items[1]`: missing field `name`",
        ),
        (
            "greet",
            json!({"name": 3}),
            "Invalid arguments for tool greet: `name`: invalid type: integer `3`, expected a string",
        ),
    ];
    for (tool, arguments, text) in cases {
        assert_eq!(
            result(call_tool(1, tool, arguments.clone())).await,
            tool_error(text),
            "{tool} {arguments}"
        );
    }
}

#[tokio::test]
async fn absent_arguments_mean_an_empty_object_unless_some_are_required() {
    for params in [
        json!({"name": "nothing"}),
        json!({"name": "nothing", "arguments": null}),
    ] {
        assert_eq!(
            result(request(1, "tools/call", params)).await,
            text_result("nothing")
        );
    }
    assert_eq!(
        result(request(1, "tools/call", json!({"name": "greet"}))).await,
        text_result("hello everyone")
    );
    assert_eq!(
        result(call_tool(1, "greet", json!({"name": "Ada"}))).await,
        text_result("hello Ada")
    );
    assert_eq!(
        result(call_tool(1, "greet", json!({"name": null}))).await,
        text_result("hello everyone")
    );
}

#[tokio::test]
async fn malformed_calls_are_invalid_params() {
    let server = server();
    let cases = [
        (
            json!({"name": "echo"}),
            "Missing arguments for tool echo: it has required parameters",
        ),
        (
            json!({"name": "echo", "arguments": null}),
            "Missing arguments for tool echo: it has required parameters",
        ),
        (
            json!({"name": "echo", "arguments": ["hi"]}),
            "Invalid arguments for tool echo: `arguments` must be a JSON object",
        ),
        (
            json!({"name": "nothing", "arguments": "x"}),
            "Invalid arguments for tool nothing: `arguments` must be a JSON object",
        ),
        (
            json!({"name": "invalid_tool_name", "arguments": {}}),
            "Unknown tool: invalid_tool_name",
        ),
        (
            json!({"arguments": {}}),
            "Invalid params: missing field `name`",
        ),
        (
            json!({"name": 5}),
            "Invalid params: `name`: invalid type: integer `5`, expected a string",
        ),
    ];
    for (params, message) in cases {
        let response = call(&server, request(3, "tools/call", params.clone())).await;
        assert_eq!(
            response,
            json!({"jsonrpc": "2.0", "id": 3, "error": {"code": -32602, "message": message}}),
            "{params}"
        );
    }
    let unknown = call(&server, call_tool(3, "invalid_tool_name", json!({}))).await;
    assert_eq!(
        unknown["error"],
        spec_example("InvalidParamsError/unknown-tool.json")
    );
}

#[tokio::test]
async fn a_panicking_tool_is_an_internal_error_and_the_server_keeps_serving() {
    let server = server();
    let response = call(&server, call_tool(7, "boom", json!({}))).await;
    assert_eq!(
        response,
        json!({"jsonrpc": "2.0", "id": 7, "error": {"code": -32603, "message": "Internal error"}})
    );
    let response = call(&server, call_tool(8, "echo", json!({"text": "still here"}))).await;
    assert_eq!(response["result"]["content"][0]["text"], "still here");
}

#[tokio::test]
async fn progress_is_sent_only_with_a_token_and_before_the_result() {
    let server = server();
    let quiet = server.exchange(call_tool(1, "progress", json!({}))).await;
    assert!(quiet.notifications.is_empty());

    let mut params = json!({"name": "progress", "arguments": {}, "_meta": meta()});
    params["_meta"]["progressToken"] = json!("progress-test-1");
    let exchange = server.exchange(request(2, "tools/call", params)).await;
    let notifications: Vec<Value> = exchange.notifications.iter().map(|n| parse(n)).collect();
    for n in &notifications {
        assert_valid_notification(n);
    }
    assert_eq!(
        notifications,
        [
            json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": "progress-test-1", "progress": 0, "total": 2}}),
            json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": "progress-test-1", "progress": 1, "total": 2, "message": "half way"}}),
            json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": "progress-test-1", "progress": 2, "total": 2}}),
        ]
    );
    assert_eq!(
        parse(&exchange.response.unwrap())["result"]["content"][0]["text"],
        "done"
    );
}

#[tokio::test]
async fn log_messages_follow_the_requested_level_and_never_appear_unasked() {
    let server = server();
    let quiet = server.exchange(call_tool(1, "chatty", json!({}))).await;
    assert!(quiet.notifications.is_empty());

    let with_level = |level: &str| {
        let mut params = json!({"name": "chatty", "arguments": {}, "_meta": meta()});
        params["_meta"]["io.modelcontextprotocol/logLevel"] = json!(level);
        request(2, "tools/call", params)
    };
    let exchange = server.exchange(with_level("info")).await;
    let notifications: Vec<Value> = exchange.notifications.iter().map(|n| parse(n)).collect();
    for n in &notifications {
        assert_valid_notification(n);
    }
    assert_eq!(
        notifications,
        [
            json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "working"}}),
            json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "error", "data": {"error": "disk full"}}}),
        ]
    );
    let exchange = server.exchange(with_level("emergency")).await;
    assert!(exchange.notifications.is_empty());

    let discover = parse(
        &server
            .exchange(request(3, "server/discover", json!({})))
            .await
            .response
            .unwrap(),
    );
    assert_eq!(
        discover["result"]["capabilities"],
        json!({"tools": {}, "logging": {}})
    );
}

#[tokio::test]
async fn handlers_see_the_request_context() {
    assert_eq!(
        result(call_tool("req-9", "whoami", json!({}))).await,
        text_result("\"req-9\" tools/call 2026-07-28 test-client")
    );
}

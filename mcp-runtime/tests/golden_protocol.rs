//! Golden transcripts for the protocol layer: envelope, `_meta`, versions,
//! methods and discovery. JSON in, exact JSON out, and every message
//! validated against the spec's `schema.json`.

use mcp_runtime::{Server, ServerBuilder, tool};
use mcp_test_support::{assert_valid, assert_valid_error, meta, parse, request};
use serde_json::{Value, json};

/// Says hello.
#[tool]
fn hello() -> &'static str {
    "hello"
}

fn server() -> Server {
    ServerBuilder::new("golden", "1.2.3")
        .instructions("Be nice.")
        .build()
        .unwrap()
}

async fn error(message: &str) -> Value {
    let exchange = server().exchange(message).await;
    assert!(exchange.notifications.is_empty());
    let response = parse(&exchange.response.expect("a response"));
    assert_valid_error(&response);
    response
}

/// An error response; a `null` id means the id could not be read, and MCP
/// then omits the member (its schema allows no `null` id).
fn error_json(id: Value, code: i64, message: &str) -> Value {
    let mut response = json!({"jsonrpc": "2.0", "error": {"code": code, "message": message}});
    if !id.is_null() {
        response["id"] = id;
    }
    response
}

#[tokio::test]
async fn malformed_json_is_a_parse_error_without_id() {
    assert_eq!(
        error("{\"jsonrpc\": \"2.0\", \"id\": 1,").await,
        error_json(
            Value::Null,
            -32700,
            "Parse error: EOF while parsing a value at line 1 column 27"
        )
    );
    assert_eq!(error("nope").await["error"]["code"], -32700);
}

#[tokio::test]
async fn invalid_requests_are_rejected() {
    let cases = [
        (
            "[]",
            Value::Null,
            "Invalid request: batch requests are not supported; send one message at a time",
        ),
        (
            r#"[{"jsonrpc":"2.0","id":1,"method":"server/discover"}]"#,
            Value::Null,
            "Invalid request: batch requests are not supported; send one message at a time",
        ),
        (
            "42",
            Value::Null,
            "Invalid request: a message must be a JSON object",
        ),
        (
            "null",
            Value::Null,
            "Invalid request: a message must be a JSON object",
        ),
        (
            r#"{"jsonrpc":"2.0","id":null,"method":"server/discover"}"#,
            Value::Null,
            "Invalid request: `id` must be a string or an integer",
        ),
        (
            r#"{"jsonrpc":"2.0","id":1.5,"method":"server/discover"}"#,
            Value::Null,
            "Invalid request: `id` must be a string or an integer",
        ),
        (
            r#"{"jsonrpc":"2.0","id":{},"method":"server/discover"}"#,
            Value::Null,
            "Invalid request: `id` must be a string or an integer",
        ),
        (
            r#"{"jsonrpc":"2.0","method":"server/discover"}"#,
            Value::Null,
            "Invalid request: missing `id`: `server/discover` is a request, and only notifications may omit the id",
        ),
        (
            r#"{"jsonrpc":"2.0","id":7}"#,
            json!(7),
            "Invalid request: missing `method`",
        ),
        (
            r#"{"jsonrpc":"2.0","id":"r","result":{}}"#,
            json!("r"),
            "Invalid request: missing `method`",
        ),
        (
            r#"{"jsonrpc":"1.0","id":8,"method":"server/discover"}"#,
            json!(8),
            "Invalid request: `jsonrpc` must be \"2.0\"",
        ),
        (
            r#"{"id":9,"method":"server/discover"}"#,
            json!(9),
            "Invalid request: `jsonrpc` must be \"2.0\"",
        ),
        (
            r#"{"jsonrpc":"2.0","id":10,"method":["x"]}"#,
            json!(10),
            "Invalid request: invalid type: sequence, expected a string",
        ),
    ];
    for (message, id, text) in cases {
        assert_eq!(
            error(message).await,
            error_json(id, -32600, text),
            "{message}"
        );
    }
}

#[tokio::test]
async fn missing_meta_fields_are_invalid_params() {
    let missing = "missing `params._meta`: every request must carry `io.modelcontextprotocol/protocolVersion` and `io.modelcontextprotocol/clientCapabilities`";
    let cases = [
        (json!({"jsonrpc": "2.0", "id": 101, "method": "server/discover"}), missing.to_owned()),
        (json!({"jsonrpc": "2.0", "id": 101, "method": "server/discover", "params": {}}), missing.to_owned()),
        (json!({"jsonrpc": "2.0", "id": 101, "method": "server/discover", "params": []}), "`params` must be a JSON object".to_owned()),
        (
            json!({"jsonrpc": "2.0", "id": 102, "method": "server/discover", "params": {"_meta": {"io.modelcontextprotocol/clientCapabilities": {}}}}),
            "`params._meta` is missing `io.modelcontextprotocol/protocolVersion`".to_owned(),
        ),
        (
            json!({"jsonrpc": "2.0", "id": 104, "method": "server/discover", "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}}),
            "`params._meta` is missing `io.modelcontextprotocol/clientCapabilities`".to_owned(),
        ),
        (
            json!({"jsonrpc": "2.0", "id": 104, "method": "server/discover", "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": true}}}),
            "invalid `params._meta`: `io.modelcontextprotocol/clientCapabilities`: invalid type: boolean `true`, expected struct ClientCapabilities".to_owned(),
        ),
        (
            json!({"jsonrpc": "2.0", "id": 104, "method": "server/discover", "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": 2026, "io.modelcontextprotocol/clientCapabilities": {}}}}),
            "invalid `params._meta`: `io.modelcontextprotocol/protocolVersion`: invalid type: integer `2026`, expected a string".to_owned(),
        ),
        (
            json!({"jsonrpc": "2.0", "id": 105, "method": "tools/list", "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}, "io.modelcontextprotocol/logLevel": "loud"}}}),
            "invalid `params._meta`: `io.modelcontextprotocol/logLevel`: unknown variant `loud`, expected one of `debug`, `info`, `notice`, `warning`, `error`, `critical`, `alert`, `emergency`".to_owned(),
        ),
    ];
    for (message, text) in cases {
        let id = message["id"].clone();
        assert_eq!(
            error(&message.to_string()).await,
            error_json(id, -32602, &text),
            "{message}"
        );
    }
}

#[tokio::test]
async fn client_info_is_optional() {
    let message = json!({"jsonrpc": "2.0", "id": 105, "method": "server/discover", "params": {"_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}
    }}});
    let response = parse(
        &server()
            .exchange(message.to_string())
            .await
            .response
            .unwrap(),
    );
    assert_eq!(response["result"]["resultType"], "complete");
}

#[tokio::test]
async fn unsupported_versions_list_the_supported_ones() {
    let message = json!({"jsonrpc": "2.0", "id": 301, "method": "server/discover", "params": {"_meta": {
        "io.modelcontextprotocol/protocolVersion": "v999.0.0",
        "io.modelcontextprotocol/clientCapabilities": {}
    }}});
    assert_eq!(
        error(&message.to_string()).await,
        json!({"jsonrpc": "2.0", "id": 301, "error": {"code": -32022, "message": "Unsupported protocol version",
            "data": {"supported": ["2026-07-28"], "requested": "v999.0.0"}}})
    );
}

#[tokio::test]
async fn a_legacy_initialize_learns_which_versions_are_spoken() {
    let message = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "old", "version": "1"}
    }});
    assert_eq!(
        error(&message.to_string()).await,
        json!({"jsonrpc": "2.0", "id": 0, "error": {"code": -32022, "message": "Unsupported protocol version",
            "data": {"supported": ["2026-07-28"], "requested": "2025-11-25"}}})
    );
}

#[tokio::test]
async fn removed_and_unknown_methods_are_not_found() {
    for method in [
        "initialize",
        "ping",
        "logging/setLevel",
        "resources/subscribe",
        "resources/unsubscribe",
        "unknown/method",
        "notifications/cancelled",
    ] {
        assert_eq!(
            error(&request(500, method, json!({}))).await,
            error_json(json!(500), -32601, &format!("Method not found: {method}")),
        );
    }
    // Methods of capabilities this server (tools only) does not advertise
    // say which capability is missing.
    for (method, capability) in [
        ("resources/list", "resources"),
        ("resources/read", "resources"),
        ("resources/templates/list", "resources"),
        ("prompts/list", "prompts"),
        ("prompts/get", "prompts"),
        ("completion/complete", "completions"),
    ] {
        let mut expected = error_json(json!(500), -32601, &format!("Method not found: {method}"));
        expected["error"]["data"] = json!({
            "reason": format!("the server does not advertise the `{capability}` capability")
        });
        assert_eq!(error(&request(500, method, json!({}))).await, expected);
    }
}

#[tokio::test]
async fn discover_reports_versions_capabilities_and_identity() {
    let response = parse(
        &server()
            .exchange(request("discover-1", "server/discover", json!({})))
            .await
            .response
            .unwrap(),
    );
    assert_valid("DiscoverResultResponse", &response);
    assert_eq!(
        response,
        json!({"jsonrpc": "2.0", "id": "discover-1", "result": {
            "resultType": "complete",
            "supportedVersions": ["2026-07-28"],
            "capabilities": {"tools": {}},
            "instructions": "Be nice.",
            "ttlMs": 0,
            "cacheScope": "private",
            "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "golden", "version": "1.2.3"}}
        }})
    );
}

#[tokio::test]
async fn discover_caching_and_identity_are_configurable() {
    let server = ServerBuilder::new("golden", "1.2.3")
        .title("Golden")
        .cache_hints(
            mcp_runtime::CacheHints::new().discover(mcp_runtime::CacheHint::new(
                3_600_000,
                mcp_runtime::CacheScope::Public,
            )),
        )
        .without_server_info_in_results()
        .build()
        .unwrap();
    let response = parse(
        &server
            .exchange(request(1, "server/discover", json!({})))
            .await
            .response
            .unwrap(),
    );
    assert_valid("DiscoverResultResponse", &response);
    assert_eq!(
        response["result"],
        json!({
            "resultType": "complete",
            "supportedVersions": ["2026-07-28"],
            "capabilities": {"tools": {}},
            "ttlMs": 3_600_000,
            "cacheScope": "public"
        })
    );
}

#[tokio::test]
async fn the_spec_discover_example_is_served_verbatim() {
    let example =
        mcp_test_support::spec_example("DiscoverResult/server-capabilities-discovery.json");
    let server = ServerBuilder::new("ExampleServer", "1.0.0")
        .instructions(example["instructions"].as_str().unwrap())
        .cache_hints(
            mcp_runtime::CacheHints::new().discover(mcp_runtime::CacheHint::new(
                3_600_000,
                mcp_runtime::CacheScope::Public,
            )),
        )
        .build()
        .unwrap();
    let response = parse(
        &server
            .exchange(request(1, "server/discover", json!({})))
            .await
            .response
            .unwrap(),
    );
    let mut expected = example;
    // This server has tools but no resources.
    expected["capabilities"] = json!({"tools": {}});
    assert_eq!(response["result"], expected);
}

#[tokio::test]
async fn notifications_get_no_response() {
    for message in [
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "method": "notifications/whatever", "params": {"_meta": meta()}}),
    ] {
        let exchange = server().exchange(message.to_string()).await;
        assert_eq!(exchange, mcp_runtime::Exchange::default(), "{message}");
    }
}

#[tokio::test]
async fn string_and_integer_ids_are_echoed_exactly() {
    for id in [
        json!(0),
        json!(-5),
        json!(9_007_199_254_740_993_i64),
        json!("a\"b\u{e9}"),
    ] {
        let response = parse(
            &server()
                .exchange(request(id.clone(), "server/discover", json!({})))
                .await
                .response
                .unwrap(),
        );
        assert_eq!(response["id"], id);
    }
}

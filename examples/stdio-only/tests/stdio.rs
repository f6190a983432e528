//! The stdio-only binary serves the protocol over stdio like any other:
//! discovery, calls, errors, and a clean exit at end of input. CI runs
//! `cargo test -p stdio-only` on its own, so that these run against the
//! build without default features.

use mcp_test_support::stdio::StdioServer;
use mcp_test_support::{assert_valid, assert_valid_error, call_tool, request};
use serde_json::json;

#[tokio::test]
async fn serves_stdio_without_default_features() {
    let mut server = StdioServer::spawn(env!("CARGO_BIN_EXE_stdio-only"));
    server.send(&request(1, "server/discover", json!({}))).await;
    let discover = server.receive().await;
    assert_valid("DiscoverResultResponse", &discover);
    assert_eq!(discover["result"]["capabilities"], json!({"tools": {}}));
    assert_eq!(
        discover["result"]["_meta"]["io.modelcontextprotocol/serverInfo"],
        json!({"name": "stdio-only", "version": "0.1.0"})
    );

    server
        .send(&call_tool(2, "add", json!({"a": 2, "b": 40})))
        .await;
    let added = server.receive().await;
    assert_valid("CallToolResultResponse", &added);
    assert_eq!(
        added["result"]["content"],
        json!([{"type": "text", "text": "42"}])
    );

    server.send(&request(3, "resources/list", json!({}))).await;
    let missing = server.receive().await;
    assert_valid_error(&missing);
    assert_eq!(missing["error"]["code"], -32601);

    let rest = server.finish().await;
    assert!(rest.is_empty(), "nothing after the answers: {rest:?}");
}

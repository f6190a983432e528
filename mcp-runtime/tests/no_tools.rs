//! A server with nothing registered still answers discovery, advertises no
//! capabilities, and reports every other method as not found.

use mcp_runtime::ServerBuilder;
use mcp_test_support::{assert_valid, assert_valid_error, parse, request};
use serde_json::json;

#[tokio::test]
async fn nothing_registered_means_no_capabilities() {
    let server = ServerBuilder::new("empty", "0.1.0").build().unwrap();
    let discover = parse(
        &server
            .exchange(request(1, "server/discover", json!({})))
            .await
            .response
            .unwrap(),
    );
    assert_valid("DiscoverResultResponse", &discover);
    assert_eq!(discover["result"]["capabilities"], json!({}));
    for method in ["tools/list", "tools/call", "prompts/list", "resources/list"] {
        let response = parse(
            &server
                .exchange(request(2, method, json!({"name": "x"})))
                .await
                .response
                .unwrap(),
        );
        assert_valid_error(&response);
        assert_eq!(
            response,
            json!({"jsonrpc": "2.0", "id": 2, "error": {"code": -32601, "message": format!("Method not found: {method}")}})
        );
    }
}

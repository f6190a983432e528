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
    // The spec's MethodNotFoundError: "a method ... gated behind a server
    // capability the server did not advertise (e.g., calling `prompts/list`
    // when the `prompts` capability was not advertised)". A server that has
    // tools advertises `tools` and lists them; one with none advertises
    // nothing, so `tools/list` is -32601, saying why.
    for (method, capability) in [
        ("tools/list", "tools"),
        ("tools/call", "tools"),
        ("prompts/list", "prompts"),
        ("resources/list", "resources"),
        ("completion/complete", "completions"),
    ] {
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
            json!({"jsonrpc": "2.0", "id": 2, "error": {
                "code": -32601,
                "message": format!("Method not found: {method}"),
                "data": {"reason": format!("the server does not advertise the `{capability}` capability")}
            }})
        );
    }
}

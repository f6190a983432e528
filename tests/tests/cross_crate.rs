//! Tools defined in a separate library crate (`extra-tools`) are served by a
//! binary that links it, without being named anywhere.

use mcp_runtime::ServerBuilder;
use mcp_test_support::{assert_valid, call_tool, parse, request};
use serde_json::json;

// Linking the crate is all it takes; nothing from it is named.
use extra_tools as _;

#[tokio::test]
async fn library_tools_are_registered() {
    let server = ServerBuilder::new("cross", "0.0.0").build().unwrap();
    let list = parse(
        &server
            .exchange(request(1, "tools/list", json!({})))
            .await
            .response
            .unwrap(),
    );
    assert_valid("ListToolsResultResponse", &list);
    let names: Vec<&str> = list["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["library.shout", "reverse"]);

    let reversed = parse(
        &server
            .exchange(call_tool(2, "reverse", json!({"text": "abc"})))
            .await
            .response
            .unwrap(),
    );
    assert_eq!(reversed["result"]["content"][0]["text"], "cba");
    let shout = parse(
        &server
            .exchange(call_tool(3, "library.shout", json!({"text": "hi"})))
            .await
            .response
            .unwrap(),
    );
    assert_eq!(shout["result"]["content"][0]["text"], "HI");
}

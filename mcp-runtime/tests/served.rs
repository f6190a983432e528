//! What a gateway in front of a server can ask it without a request:
//! which methods it serves (`Server::serves`), and the `server/discover`
//! result it answers with (`Server::discover_json`), byte for byte the
//! one a client gets.

use mcp_runtime::extension::{Extension, ExtensionMethod, MethodResult};
use mcp_runtime::{ServerBuilder, tool};
use mcp_test_support::request;
use serde_json::{Value, json};

/// Answers.
#[tool]
fn served_tool() -> String {
    "ok".to_owned()
}

#[tokio::test]
async fn a_server_says_what_it_serves_and_its_discover_result() {
    let extension = Extension::new("com.example/ext").method(ExtensionMethod::new(
        "com.example/ping",
        |_: Value, _: mcp_runtime::Context| async { Ok(MethodResult::complete(json!({}))) },
    ));
    let server = ServerBuilder::new("served", "1.0.0")
        .with(extension)
        .build()
        .unwrap();
    assert!(server.serves("tools/call") && server.serves("server/discover"));
    assert!(server.serves("com.example/ping"), "an extension's method");
    assert!(
        !server.serves("prompts/list"),
        "no prompts, so no prompts/list"
    );
    assert!(!server.serves("made/up") && !server.serves("initialize"));

    let exchanged = server
        .exchange(request(1, "server/discover", json!({})))
        .await;
    let response: Value = serde_json::from_str(&exchanged.response.unwrap()).unwrap();
    let ours: Value = serde_json::from_slice(server.discover_json()).unwrap();
    assert_eq!(ours, response["result"]);
}

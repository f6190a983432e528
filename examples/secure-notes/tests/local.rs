//! Without HTTP authorization (in process here, as on stdio, where
//! credentials come from the environment) scopes are not checked and every
//! caller is the one local owner. The notes are the server's state: each
//! server has its own.

use mcp_runtime::testing::TestClient;
use serde_json::json;

/// A client of a server in this process, with notes of its own.
fn client() -> TestClient {
    let server = mcp_runtime::server!()
        .state(secure_notes::Notes::default())
        .build()
        .unwrap();
    TestClient::with_server(server)
}

#[tokio::test]
async fn scopes_do_not_apply_without_http_authorization() {
    let mut client = client();
    client
        .call_tool("whoami", json!({}))
        .await
        .assert_text("anonymous (no authorization on this transport)");
    client
        .call_tool("write_note", json!({"slug": "todo", "body": "buy milk"}))
        .await
        .assert_text("saved todo");
    client
        .call_tool("list_notes", json!({}))
        .await
        .assert_text("todo");
    let read = client
        .read_resource("secure-notes://note/todo")
        .await
        .text();
    assert_eq!(read, "buy milk");
    client
        .call_tool("write_note", json!({"slug": "", "body": "x"}))
        .await
        .assert_tool_error("the slug must have 1 to 64 characters");
}

#[tokio::test]
async fn each_server_has_its_own_notes() {
    let (mut one, mut other) = (client(), client());
    one.call_tool("write_note", json!({"slug": "todo", "body": "buy milk"}))
        .await
        .assert_text("saved todo");
    other
        .call_tool("list_notes", json!({}))
        .await
        .assert_text("");
    other
        .read_resource("secure-notes://note/todo")
        .await
        .assert_error_code(-32602);
}

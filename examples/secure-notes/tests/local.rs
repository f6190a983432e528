//! Without HTTP authorization (in process here, as on stdio, where
//! credentials come from the environment) scopes are not checked and every
//! caller is the one local owner.

use mcp_runtime::testing::TestClient;
use serde_json::json;

// Names the library, so that its handlers are linked into this test.
use secure_notes as _;

#[tokio::test]
async fn scopes_do_not_apply_without_http_authorization() {
    let mut client = TestClient::new();
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

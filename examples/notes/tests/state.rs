//! The notebook is the server's state: each server has its own (a note
//! added on one is not on another), its completers read it from the
//! request's context, and a server not given one does not build.

use mcp_runtime::testing::TestClient;
use serde_json::json;

/// A client of a server in this process with a fresh notebook.
fn client() -> TestClient {
    let server = mcp_runtime::server!()
        .state(notes::Store::seeded())
        .build()
        .unwrap();
    TestClient::with_server(server)
}

#[tokio::test]
async fn each_server_has_its_own_notebook() {
    let (mut one, mut other) = (client(), client());
    one.call_tool(
        "add_note",
        json!({"slug": "ideas", "title": "Ideas", "body": "Fly."}),
    )
    .await
    .assert_text("saved notes://note/ideas");
    let read = one.read_resource("notes://note/ideas").await.text();
    assert_eq!(read, "# Ideas\n\nFly.\n");
    let completed = one.complete_prompt_argument("summarize", "slug", "i").await;
    assert_eq!(completed.values, ["ideas"]);

    other
        .read_resource("notes://note/ideas")
        .await
        .assert_error_code(-32602);
    let completed = other
        .complete_prompt_argument("summarize", "slug", "i")
        .await;
    assert!(completed.values.is_empty(), "{:?}", completed.values);
    // Both still have the seeded notes.
    let completed = other
        .complete_template_variable("notes://tag/{tag}", "tag", "#h")
        .await;
    assert_eq!(completed.values, ["#home"]);
}

#[test]
fn a_server_without_a_notebook_does_not_build() {
    let error = mcp_runtime::server!().build().unwrap_err().to_string();
    assert!(
        error.contains("takes the state `notes::store::Store`, which this server was not given"),
        "{error}"
    );
}

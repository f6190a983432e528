//! `server!()` links its package's library: this test never names the
//! `mcp_tests` library, yet the tool defined there is served. (A binary
//! links a crate it does not name only through `server!()`; the other test
//! files of this package build their servers with `ServerBuilder::new` and
//! do not see the tool.)

use mcp_runtime::testing::TestClient;
use serde_json::json;

#[tokio::test]
async fn server_macro_serves_the_package_library() {
    let server = mcp_runtime::server!().build().unwrap();
    assert_eq!(server.info().name, "mcp-tests");
    let mut client = TestClient::with_server(server);
    let tools = client.list_tools().await;
    assert_eq!(tools.len(), 1, "{tools:?}");
    assert_eq!(tools[0].name, "package.linked");
    client
        .call_tool("package.linked", json!({}))
        .await
        .assert_text("linked by server!()");
}

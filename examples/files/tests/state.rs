//! The served directory is the server's state: two servers in one process
//! serve two directories, each refusing the other's files, and a server
//! not given one does not build.

use mcp_runtime::files::file_uri;
use mcp_runtime::testing::TestClient;
use serde_json::json;

/// A temporary directory holding `name`.
fn directory(name: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join(name), name).unwrap();
    dir
}

/// A client of a server in this process serving `dir`.
fn client(dir: &tempfile::TempDir) -> TestClient {
    let server = mcp_runtime::server!()
        .state(files::open(dir.path()).unwrap())
        .build()
        .unwrap();
    TestClient::with_server(server)
}

#[tokio::test]
async fn two_servers_serve_two_directories() {
    let (a, b) = (directory("a.txt"), directory("b.txt"));
    let (mut serves_a, mut serves_b) = (client(&a), client(&b));
    serves_a
        .call_tool("tree", json!({}))
        .await
        .assert_text("a.txt (5 bytes)\n");
    serves_b
        .call_tool("tree", json!({}))
        .await
        .assert_text("b.txt (5 bytes)\n");
    let in_b = file_uri(&b.path().canonicalize().unwrap().join("b.txt"));
    assert_eq!(serves_b.read_resource(&in_b).await.text(), "b.txt");
    let refused = serves_a
        .read_resource(&in_b)
        .await
        .assert_error_code(-32602);
    assert!(
        refused.contains("outside the served directories"),
        "{refused}"
    );
}

#[test]
fn a_server_without_a_directory_does_not_build() {
    let error = mcp_runtime::server!().build().unwrap_err().to_string();
    assert!(
        error.contains("takes the state `files::Files`, which this server was not given"),
        "{error}"
    );
}

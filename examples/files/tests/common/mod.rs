//! The example as a real process over HTTP, for the tests that race it
//! against changes to its directory.

use std::net::{SocketAddr, TcpListener};
use std::path::Path;
use std::process::Stdio;

use mcp_test_support::{http, request};
use serde_json::{Value, json};
use tokio::process::{Child, Command};

const BIN: &str = env!("CARGO_BIN_EXE_files");

/// The example served over HTTP on a free loopback port, killed on drop.
pub(crate) struct HttpChild {
    _child: Child,
    pub(crate) address: SocketAddr,
}

/// Serves `dir` over HTTP, once it listens.
pub(crate) async fn serve_http(dir: &Path) -> HttpChild {
    let address = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let child = Command::new(BIN)
        .arg(dir)
        .args(["--http", &address.to_string()])
        // The race tests send thousands of requests from one address.
        .args(["--rate-limit", "0"])
        .env("RUST_LOG", "warn")
        .stdin(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("the example runs");
    http::wait_listening(address).await;
    HttpChild {
        _child: child,
        address,
    }
}

/// The answer to one request.
pub(crate) async fn post(address: SocketAddr, id: u64, method: &str, params: Value) -> Value {
    http::post(address, &request(id, method, params))
        .await
        .json()
}

/// The params that answer `first` (a `write_file` call's question) with a
/// yes.
pub(crate) fn confirmed(path: &str, content: &str, first: &Value) -> Value {
    let requests = first["result"]["inputRequests"].as_object().unwrap();
    let (key, _) = requests.iter().next().unwrap();
    let accept = json!({
        "requestState": first["result"]["requestState"].clone(),
        "inputResponses": {key: {"action": "accept", "content": {"confirm": true}}},
    });
    crate::calls::write(path, content, accept)
}

//! A named pipe (FIFO) in the served directory cannot take the server
//! down. Opening a FIFO for writing blocks until someone opens it for
//! reading; a handler that did so on one of the server's threads held that
//! thread, and as many such calls as the server has threads stopped it
//! answering anything at all. Here clients write to and read a FIFO over
//! HTTP, one per server thread (at least two), and `tools/list` must still
//! answer within a second; the FIFO calls are refused as not regular files,
//! also a FIFO swapped in for a checked file between the question and the
//! write (the opened file is what is checked).

mod calls;
mod common;

use std::net::SocketAddr;
use std::path::Path;
use std::time::Duration;

use calls::write;
use common::{confirmed, post, serve_http};
use mcp_runtime::files::file_uri;
use serde_json::{Value, json};

fn mkfifo(path: &Path) {
    let status = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .expect("mkfifo runs");
    assert!(status.success(), "mkfifo {}", path.display());
}

/// `write_file` of the FIFO, confirmed if the server asks: the final answer.
async fn write_fifo(address: SocketAddr, id: u64) -> Value {
    let first = post(address, id, "tools/call", write("pipe", "x", json!({}))).await;
    if first["result"]["resultType"] != "input_required" {
        return first;
    }
    let accept = confirmed("pipe", "x", &first);
    post(address, id, "tools/call", accept).await
}

/// A client that writes to the FIFO, then reads it: both answers.
async fn fifo_client(address: SocketAddr, id: u64, uri: String) -> (Value, Value) {
    let written = write_fifo(address, id).await;
    let read = post(address, id + 1, "resources/read", json!({"uri": uri})).await;
    (written, read)
}

#[tokio::test]
async fn fifo_calls_are_refused_and_the_server_keeps_answering() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::write(root.join("a.txt"), "a").unwrap();
    mkfifo(&root.join("pipe"));
    let server = serve_http(&root).await;
    let address = server.address;
    let threads = std::thread::available_parallelism().map_or(2, usize::from);
    let mut clients = Vec::new();
    for client in 0..threads.max(2) as u64 {
        let uri = file_uri(&root.join("pipe"));
        clients.push(tokio::spawn(fifo_client(address, 10 * client, uri)));
        // Each call on a connection of its own, accepted by a thread not
        // yet held.
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let listed = tokio::time::timeout(
        Duration::from_secs(1),
        post(address, 1000, "tools/list", json!({})),
    )
    .await
    .expect("tools/list answers within 1 s while clients write to and read a FIFO");
    let names: Vec<&str> = listed["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["search", "tree", "write_file"]);
    for client in clients {
        let (written, read) = tokio::time::timeout(Duration::from_secs(5), client)
            .await
            .expect("the FIFO calls are answered")
            .unwrap();
        assert_eq!(written["result"]["isError"], true, "{written}");
        assert_eq!(
            written["result"]["content"][0]["text"],
            "pipe is not a regular file"
        );
        let message = read["error"]["message"].as_str().unwrap_or_default();
        assert!(message.contains("is not a regular file"), "{read}");
    }
}

#[tokio::test]
async fn a_file_swapped_for_a_fifo_before_the_write_is_refused_not_waited_on() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::write(root.join("swap.txt"), "regular").unwrap();
    let server = serve_http(&root).await;
    let address = server.address;
    // Asked about a regular file...
    let first = post(address, 1, "tools/call", write("swap.txt", "x", json!({}))).await;
    assert_eq!(first["result"]["resultType"], "input_required", "{first}");
    let requests = first["result"]["inputRequests"].as_object().unwrap();
    let (_, asked) = requests.iter().next().unwrap();
    assert_eq!(
        asked["params"]["message"],
        "Overwrite swap.txt with 1 bytes?"
    );
    // ...which is a FIFO by the time the user says yes.
    std::fs::remove_file(root.join("swap.txt")).unwrap();
    mkfifo(&root.join("swap.txt"));
    let accept = confirmed("swap.txt", "x", &first);
    let written = tokio::time::timeout(
        Duration::from_secs(2),
        post(address, 2, "tools/call", accept),
    )
    .await
    .expect("the write is refused, not left waiting for a reader");
    assert_eq!(written["result"]["resultType"], "complete");
    assert_eq!(written["result"]["isError"], true);
    assert_eq!(
        written["result"]["content"],
        json!([{"type": "text", "text": "swap.txt is not a regular file"}])
    );
}

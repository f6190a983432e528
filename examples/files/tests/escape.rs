//! Links cannot lead out of the served directory, however the directory
//! changes while the server works in it. Against the example as a real
//! process, on a real tree:
//!
//! - a hard link inside to a file outside is neither read, nor searched,
//!   nor written through (a write replaces a file, never writes into it);
//! - a directory swapped for a symbolic link to the outside and back, as
//!   fast as the kernel can (`renameat2(RENAME_EXCHANGE)`), for 10 s while
//!   clients read and search through it: not one answer carries the
//!   outside file. Before files were opened beneath the directory's
//!   handle, hundreds did.
#![cfg(target_os = "linux")]

mod calls;
mod common;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use calls::write;
use common::{confirmed, post, serve_http};
use mcp_runtime::files::file_uri;
use rustix::fs::{CWD, RenameFlags, renameat_with};
use serde_json::{Value, json};

/// What no answer may ever carry.
const SECRET: &str = "OUTSIDE-SECRET";

/// `<base>/root` (served) and `<base>/outside/secret.txt`.
struct Tree {
    _temp: tempfile::TempDir,
    root: PathBuf,
    secret: PathBuf,
}

fn tree() -> Tree {
    let temp = tempfile::tempdir().unwrap();
    let base = temp.path().canonicalize().unwrap();
    let (root, outside) = (base.join("root"), base.join("outside"));
    std::fs::create_dir_all(&root).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    let secret = outside.join("secret.txt");
    std::fs::write(&secret, SECRET).unwrap();
    Tree {
        _temp: temp,
        root,
        secret,
    }
}

/// The text of a `resources/read` answer, or its error's message.
fn read_text(answer: &Value) -> String {
    match answer["result"]["contents"][0]["text"].as_str() {
        Some(text) => text.to_owned(),
        None => answer["error"]["message"].as_str().unwrap_or("").to_owned(),
    }
}

fn search(query: &str) -> Value {
    json!({"name": "search", "arguments": {"query": query}})
}

#[tokio::test]
async fn a_hard_link_to_an_outside_file_is_not_read_searched_or_written_through() {
    let tree = tree();
    std::fs::hard_link(&tree.secret, tree.root.join("linked.txt")).unwrap();
    let server = serve_http(&tree.root).await;
    let address = server.address;
    let uri = file_uri(&tree.root.join("linked.txt"));

    let read = post(address, 1, "resources/read", json!({"uri": uri})).await;
    assert_eq!(read["error"]["code"], -32602, "{read}");
    let linked = tree.root.join("linked.txt");
    assert_eq!(
        read["error"]["message"],
        format!(
            "Invalid resource URI {uri}: {} has 2 hard links: it may be a file from outside the served directories",
            linked.display()
        )
    );
    let found = post(address, 2, "tools/call", search(SECRET)).await;
    assert_eq!(found["result"]["structuredContent"]["matches"], json!([]));

    let first = post(
        address,
        3,
        "tools/call",
        write("linked.txt", "x", json!({})),
    )
    .await;
    assert_eq!(
        first["result"]["content"][0]["text"],
        "linked.txt has 2 hard links: it may be a file from outside the served directory",
        "refused before anyone is asked: {first}"
    );
    assert_eq!(std::fs::read_to_string(&tree.secret).unwrap(), SECRET);
}

#[tokio::test]
async fn a_file_hard_linked_out_before_the_write_is_refused_not_written_through() {
    let tree = tree();
    let target = tree.root.join("notes.txt");
    std::fs::write(&target, "mine").unwrap();
    let server = serve_http(&tree.root).await;
    let address = server.address;
    let first = post(
        address,
        1,
        "tools/call",
        write("notes.txt", "new", json!({})),
    )
    .await;
    assert_eq!(first["result"]["resultType"], "input_required", "{first}");
    // While the user is asked, the file becomes a hard link to the secret.
    std::fs::remove_file(&target).unwrap();
    std::fs::hard_link(&tree.secret, &target).unwrap();
    let written = post(
        address,
        2,
        "tools/call",
        confirmed("notes.txt", "new", &first),
    )
    .await;
    assert_eq!(
        written["result"]["content"][0]["text"],
        "notes.txt has 2 hard links: it may be a file from outside the served directory",
        "{written}"
    );
    assert_eq!(std::fs::read_to_string(&tree.secret).unwrap(), SECRET);
}

/// Swaps `a` and `b` (a directory and a symbolic link) until `stop`,
/// counting the swaps.
fn swap_until(a: PathBuf, b: PathBuf, stop: Arc<AtomicBool>, swaps: Arc<AtomicU64>) {
    while !stop.load(Ordering::Relaxed) {
        renameat_with(CWD, &a, CWD, &b, RenameFlags::EXCHANGE).expect("renameat2 exchanges");
        swaps.fetch_add(1, Ordering::Relaxed);
    }
}

/// What a client saw while the tree was being swapped.
#[derive(Default, Debug)]
struct Seen {
    inside: u64,
    refused: u64,
    escapes: u64,
    searches: u64,
}

/// Reads `uri` (and, every tenth time, searches for the secret) until
/// `deadline`.
async fn race_client(address: SocketAddr, uri: String, client: u64, deadline: Instant) -> Seen {
    let mut seen = Seen::default();
    let mut id = client * 1_000_000;
    while Instant::now() < deadline {
        id += 1;
        let read = post(address, id, "resources/read", json!({"uri": uri})).await;
        let text = read_text(&read);
        match text.as_str() {
            "inside" => seen.inside += 1,
            text if text.contains(SECRET) => seen.escapes += 1,
            text if text.ends_with(
                "goes through a symbolic link that leads outside the served directories",
            ) =>
            {
                seen.refused += 1;
            }
            _ => panic!("neither the file, nor the secret, nor a refusal: {read}"),
        }
        if id.is_multiple_of(10) {
            let found = post(address, id, "tools/call", search(SECRET)).await;
            let matches = found["result"]["structuredContent"]["matches"].as_array();
            let matches = matches.unwrap_or_else(|| panic!("a search's answer: {found}"));
            seen.escapes += matches.len() as u64;
            seen.searches += 1;
        }
    }
    seen
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_directory_swapped_for_a_link_out_never_leads_out() {
    let tree = tree();
    let outside = tree.secret.parent().unwrap().to_owned();
    // root/d/secret.txt is "inside"; root/s -> <outside>, whose
    // secret.txt is the secret. Swapped, root/d/secret.txt is the secret.
    std::fs::create_dir(tree.root.join("d")).unwrap();
    std::fs::write(tree.root.join("d/secret.txt"), "inside").unwrap();
    std::os::unix::fs::symlink(&outside, tree.root.join("s")).unwrap();
    let server = serve_http(&tree.root).await;
    let uri = file_uri(&tree.root.join("d/secret.txt"));

    let (stop, swaps) = (
        Arc::new(AtomicBool::new(false)),
        Arc::new(AtomicU64::new(0)),
    );
    let swapper = {
        let (a, b) = (tree.root.join("d"), tree.root.join("s"));
        let (stop, swaps) = (stop.clone(), swaps.clone());
        std::thread::spawn(move || swap_until(a, b, stop, swaps))
    };
    let deadline = Instant::now() + Duration::from_secs(10);
    let clients: Vec<_> = (1..=4)
        .map(|client| tokio::spawn(race_client(server.address, uri.clone(), client, deadline)))
        .collect();
    let mut total = Seen::default();
    for client in clients {
        let seen = client.await.unwrap();
        total.inside += seen.inside;
        total.refused += seen.refused;
        total.escapes += seen.escapes;
        total.searches += seen.searches;
    }
    stop.store(true, Ordering::Relaxed);
    swapper.join().unwrap();
    eprintln!("{total:?} over {} swaps", swaps.load(Ordering::Relaxed));
    assert_eq!(total.escapes, 0, "answers that carried the outside file");
    // The race was real: reads met both trees, and searches ran.
    assert!(total.inside > 0 && total.refused > 0, "{total:?}");
    assert!(total.searches > 0);
    assert_eq!(std::fs::read_to_string(&tree.secret).unwrap(), SECRET);
}

//! The files server as a client sees it, over stdio, on a temporary
//! directory: the listing (paginated, MIME types guessed), reads by URI and
//! by the template, large files cut or refused, search, tree, a confirmed
//! write that cannot leave the directory, and changes on disk announced.
//! Every message is checked against the spec's schema.

mod calls;

use std::path::Path;
use std::time::Duration;

use mcp_runtime::files::file_uri;
use mcp_test_support::stdio::StdioServer;
use mcp_test_support::{assert_valid, assert_valid_notification, request};
use serde_json::{Value, json};

use calls::write;

const BIN: &str = env!("CARGO_BIN_EXE_files");

/// `notes/a.md`, `notes/b.txt`, `logo.png`, `big.txt` (2 MiB of text),
/// `big.bin` (2 MiB of bytes), `many/000.txt` to `many/119.txt`.
fn directory() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir_all(root.join("notes")).unwrap();
    std::fs::create_dir_all(root.join("many")).unwrap();
    std::fs::write(root.join("notes/a.md"), "# A\nhello world\n").unwrap();
    std::fs::write(root.join("notes/b.txt"), "nothing to see\nHELLO again\n").unwrap();
    std::fs::write(root.join("logo.png"), [137u8, 80, 78, 71, 13, 10, 26, 10]).unwrap();
    std::fs::write(root.join("big.txt"), "x".repeat(2 * 1024 * 1024)).unwrap();
    std::fs::write(root.join("big.bin"), vec![0xFFu8; 2 * 1024 * 1024]).unwrap();
    for i in 0..120 {
        std::fs::write(root.join(format!("many/{i:03}.txt")), format!("file {i}")).unwrap();
    }
    dir
}

fn root(dir: &tempfile::TempDir) -> std::path::PathBuf {
    dir.path().canonicalize().unwrap()
}

fn uri(dir: &tempfile::TempDir, relative: &str) -> String {
    file_uri(&root(dir).join(relative))
}

async fn serve(dir: &tempfile::TempDir) -> StdioServer {
    StdioServer::spawn_with(BIN, &[dir.path().to_str().unwrap()])
}

async fn call(server: &mut StdioServer, method: &str, params: Value, definition: &str) -> Value {
    let response = server.call(&request(1, method, params)).await;
    if response.get("error").is_some() {
        mcp_test_support::assert_valid_error(&response);
    } else {
        assert_valid(definition, &response);
    }
    response
}

#[tokio::test]
async fn every_file_is_a_resource_paginated_with_guessed_mime_types() {
    let dir = directory();
    let mut server = serve(&dir).await;
    let mut listed = Vec::new();
    let mut cursor = None::<String>;
    let mut pages = 0;
    loop {
        let params = cursor.map_or_else(|| json!({}), |c| json!({"cursor": c}));
        let page = call(
            &mut server,
            "resources/list",
            params,
            "ListResourcesResultResponse",
        )
        .await;
        pages += 1;
        listed.extend(page["result"]["resources"].as_array().unwrap().clone());
        match page["result"]["nextCursor"].as_str() {
            Some(next) => cursor = Some(next.to_owned()),
            None => break,
        }
    }
    assert_eq!(pages, 2, "125 files in pages of 100");
    assert_eq!(listed.len(), 125);
    let find = |name: &str| listed.iter().find(|r| r["name"] == name).unwrap().clone();
    let note = find("notes/a.md");
    assert_eq!(note["uri"], uri(&dir, "notes/a.md"));
    assert_eq!(note["mimeType"], "text/markdown");
    assert_eq!(note["size"], 16);
    assert!(
        note["annotations"]["lastModified"]
            .as_str()
            .unwrap()
            .ends_with('Z')
    );
    assert_eq!(find("logo.png")["mimeType"], "image/png");
    // Sorted by URI across the pages.
    let uris: Vec<&str> = listed.iter().map(|r| r["uri"].as_str().unwrap()).collect();
    assert!(uris.is_sorted());
    let templates = call(
        &mut server,
        "resources/templates/list",
        json!({}),
        "ListResourceTemplatesResultResponse",
    )
    .await;
    assert_eq!(
        templates["result"]["resourceTemplates"][0]["uriTemplate"],
        "file:///{+path}"
    );
    server.finish().await;
}

#[tokio::test]
async fn reads_by_uri_and_by_template_never_load_a_large_file_whole() {
    let dir = directory();
    let mut server = serve(&dir).await;
    let read = |uri: String| json!({"uri": uri});
    let note = call(
        &mut server,
        "resources/read",
        read(uri(&dir, "notes/a.md")),
        "ReadResourceResultResponse",
    )
    .await;
    assert_eq!(
        note["result"]["contents"][0],
        json!({"uri": uri(&dir, "notes/a.md"), "mimeType": "text/markdown", "text": "# A\nhello world\n"})
    );
    let logo = call(
        &mut server,
        "resources/read",
        read(uri(&dir, "logo.png")),
        "ReadResourceResultResponse",
    )
    .await;
    assert_eq!(logo["result"]["contents"][0]["blob"], "iVBORw0KGgo=");
    // A file the listing does not hold yet is read through the template.
    std::fs::write(root(&dir).join("late.txt"), "late").unwrap();
    let late = call(
        &mut server,
        "resources/read",
        read(uri(&dir, "late.txt")),
        "ReadResourceResultResponse",
    )
    .await;
    assert_eq!(late["result"]["contents"][0]["text"], "late");
    // 2 MiB of text: the first MiB, with a note.
    let big = call(
        &mut server,
        "resources/read",
        read(uri(&dir, "big.txt")),
        "ReadResourceResultResponse",
    )
    .await;
    let contents = &big["result"]["contents"][0];
    assert_eq!(contents["text"].as_str().unwrap().len(), 1024 * 1024);
    assert_eq!(
        contents["_meta"]["com.example.files/truncated"]["sizeBytes"],
        2 * 1024 * 1024
    );
    // 2 MiB of bytes: refused.
    let binary = call(
        &mut server,
        "resources/read",
        read(uri(&dir, "big.bin")),
        "",
    )
    .await;
    assert_eq!(binary["error"]["code"], -32603);
    assert!(
        binary["error"]["message"]
            .as_str()
            .unwrap()
            .contains("over the 1048576-byte limit")
    );
    // Paths that leave the directory: refused, saying why.
    let outside = call(
        &mut server,
        "resources/read",
        read("file:///etc/passwd".into()),
        "",
    )
    .await;
    assert_eq!(outside["error"]["code"], -32602);
    assert!(
        outside["error"]["message"]
            .as_str()
            .unwrap()
            .contains("outside the served directories")
    );
    let dotted = format!("{}/notes/%2e%2e/%2e%2e/x", uri(&dir, ""));
    let climbing = call(&mut server, "resources/read", read(dotted), "").await;
    assert_eq!(climbing["error"]["code"], -32602);
    assert!(
        climbing["error"]["message"]
            .as_str()
            .unwrap()
            .contains("`..`")
    );
    let missing = call(
        &mut server,
        "resources/read",
        read(uri(&dir, "nope.txt")),
        "",
    )
    .await;
    assert_eq!(missing["error"]["data"]["uri"], uri(&dir, "nope.txt"));
    server.finish().await;
}

#[tokio::test]
async fn search_finds_names_and_content_and_tree_shows_the_layout() {
    let dir = directory();
    let mut server = serve(&dir).await;
    let found = call(
        &mut server,
        "tools/call",
        json!({"name": "search", "arguments": {"query": "hello"}}),
        "CallToolResultResponse",
    )
    .await;
    let matches = &found["result"]["structuredContent"]["matches"];
    assert_eq!(
        matches,
        &json!([
            {"path": "notes/a.md", "uri": uri(&dir, "notes/a.md"), "line": 2, "text": "hello world"},
            {"path": "notes/b.txt", "uri": uri(&dir, "notes/b.txt"), "line": 2, "text": "HELLO again"}
        ])
    );
    let by_name = call(
        &mut server,
        "tools/call",
        json!({"name": "search", "arguments": {"query": "LOGO", "content": false}}),
        "CallToolResultResponse",
    )
    .await;
    assert_eq!(
        by_name["result"]["structuredContent"]["matches"][0]["path"],
        "logo.png"
    );
    let bounded = call(
        &mut server,
        "tools/call",
        json!({"name": "search", "arguments": {"query": "file", "limit": 3}}),
        "CallToolResultResponse",
    )
    .await;
    let result = &bounded["result"]["structuredContent"];
    assert_eq!(result["matches"].as_array().unwrap().len(), 3);
    assert_eq!(result["incomplete"], true);
    let tree = call(
        &mut server,
        "tools/call",
        json!({"name": "tree", "arguments": {"path": "notes"}}),
        "CallToolResultResponse",
    )
    .await;
    assert_eq!(
        tree["result"]["content"][0]["text"],
        "a.md (16 bytes)\nb.txt (27 bytes)\n"
    );
    let escape = call(
        &mut server,
        "tools/call",
        json!({"name": "tree", "arguments": {"path": "../"}}),
        "CallToolResultResponse",
    )
    .await;
    assert_eq!(escape["result"]["isError"], true);
    server.finish().await;
}

#[tokio::test]
async fn write_file_asks_first_and_cannot_leave_the_directory() {
    let dir = directory();
    let mut server = serve(&dir).await;
    let round = call(
        &mut server,
        "tools/call",
        write("notes/c.md", "new", json!({})),
        "CallToolResultResponse",
    )
    .await;
    assert_eq!(round["result"]["resultType"], "input_required");
    let requests = round["result"]["inputRequests"].as_object().unwrap();
    let (key, asked) = requests.iter().next().unwrap();
    assert_eq!(asked["params"]["message"], "Create notes/c.md (3 bytes)?");
    assert!(
        !root(&dir).join("notes/c.md").exists(),
        "nothing before the answer"
    );
    let state = round["result"]["requestState"].clone();
    let accept = json!({"requestState": state, "inputResponses": {key: {"action": "accept", "content": {"confirm": true}}}});
    let done = call(
        &mut server,
        "tools/call",
        write("notes/c.md", "new", accept.clone()),
        "CallToolResultResponse",
    )
    .await;
    assert_eq!(
        done["result"]["content"][0]["text"],
        "created notes/c.md (3 bytes)"
    );
    assert_eq!(
        std::fs::read_to_string(root(&dir).join("notes/c.md")).unwrap(),
        "new"
    );
    // The confirmation works once.
    let replayed = call(
        &mut server,
        "tools/call",
        write("notes/c.md", "new", accept),
        "",
    )
    .await;
    assert_eq!(replayed["error"]["code"], -32602);
    // Declined: nothing written.
    let round = call(
        &mut server,
        "tools/call",
        write("notes/d.md", "x", json!({})),
        "CallToolResultResponse",
    )
    .await;
    let state = round["result"]["requestState"].clone();
    let key = round["result"]["inputRequests"]
        .as_object()
        .unwrap()
        .keys()
        .next()
        .unwrap()
        .clone();
    let decline = json!({"requestState": state, "inputResponses": {key: {"action": "decline"}}});
    let declined = call(
        &mut server,
        "tools/call",
        write("notes/d.md", "x", decline),
        "CallToolResultResponse",
    )
    .await;
    assert_eq!(declined["result"]["isError"], true);
    assert!(!root(&dir).join("notes/d.md").exists());
    // Outside: refused before anyone is asked.
    for path in [
        "../escape.txt",
        "/etc/escape.txt",
        "notes/../../escape.txt",
        "C:\\escape.txt",
    ] {
        let refused = call(
            &mut server,
            "tools/call",
            write(path, "x", json!({})),
            "CallToolResultResponse",
        )
        .await;
        assert_eq!(refused["result"]["isError"], true, "{path}");
        assert_eq!(refused["result"]["resultType"], "complete");
    }
    assert!(!dir.path().parent().unwrap().join("escape.txt").exists());
    server.finish().await;
}

#[tokio::test]
async fn changes_on_disk_are_announced() {
    let dir = directory();
    let mut server = serve(&dir).await;
    let watched = uri(&dir, "notes/a.md");
    let listen = request(
        "watch",
        "subscriptions/listen",
        json!({"notifications": {"resourcesListChanged": true, "resourceSubscriptions": [watched, "file:///{+path}"]}}),
    );
    server.send(&listen).await;
    let ack = server.receive().await;
    assert_valid_notification(&ack);
    assert_eq!(
        ack["params"]["notifications"],
        json!({"resourcesListChanged": true, "resourceSubscriptions": [watched, "file:///{+path}"]})
    );
    // Give the watcher a moment to be in place, then create a file.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let created = root(&dir).join("notes/new.md");
    std::fs::write(&created, "fresh").unwrap();
    let mut seen = Vec::new();
    while !(seen.contains(&"notifications/resources/list_changed".to_owned())
        && seen.contains(&format!("updated {}", file_uri(&created))))
    {
        let note = server.receive().await;
        assert_valid_notification(&note);
        assert_eq!(
            note["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
            "watch"
        );
        seen.push(match note["method"].as_str().unwrap() {
            "notifications/resources/updated" => {
                format!("updated {}", note["params"]["uri"].as_str().unwrap())
            }
            other => other.to_owned(),
        });
    }
    // The new file is listed (on the second page: 126 files).
    let first = server.call(&request(2, "resources/list", json!({}))).await;
    let cursor = first["result"]["nextCursor"].clone();
    let second = server
        .call(&request(3, "resources/list", json!({"cursor": cursor})))
        .await;
    let names: Vec<&str> = second["result"]["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"notes/new.md"), "{names:?}");
    server.finish().await;
}

#[test]
fn the_inspector_lists_and_reads_runtime_resources() {
    let dir = directory();
    let path = dir.path().to_str().unwrap();
    let output = std::process::Command::new(BIN)
        .args([path, "list"])
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let listing = String::from_utf8_lossy(&output.stdout);
    assert!(
        listing.contains(&format!("{} [text/markdown]", uri(&dir, "notes/a.md"))),
        "{listing}"
    );
    assert!(listing.contains("Resources (125)"), "{listing}");
    let note = uri(&dir, "notes/a.md");
    let output = std::process::Command::new(BIN)
        .args([path, "read", &note])
        .output()
        .unwrap();
    assert!(output.status.success());
    assert!(String::from_utf8_lossy(&output.stdout).contains("hello world"));
    let _ = Path::new(path);
}

#[tokio::test]
async fn the_listing_stops_sixteen_levels_down_and_the_template_reads_deeper() {
    let dir = tempfile::tempdir().unwrap();
    let deep: String = (1..=16).map(|level| format!("d{level}/")).collect();
    std::fs::create_dir_all(dir.path().join(&deep)).unwrap();
    std::fs::write(dir.path().join("d1/shallow.txt"), "shallow").unwrap();
    // At depth 16 (listed) and 17 (not).
    std::fs::write(dir.path().join(format!("{deep}../last.txt")), "last").unwrap();
    std::fs::write(dir.path().join(format!("{deep}deeper.txt")), "deeper").unwrap();
    let mut server = serve(&dir).await;
    let page = call(
        &mut server,
        "resources/list",
        json!({}),
        "ListResourcesResultResponse",
    )
    .await;
    let names: Vec<&str> = page["result"]["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|resource| resource["name"].as_str().unwrap())
        .collect();
    let last = format!("{}last.txt", &deep[..deep.len() - "d16/".len()]);
    // Sorted by URI.
    assert_eq!(names, [last.as_str(), "d1/shallow.txt"]);
    let deeper = uri(&dir, &format!("{deep}deeper.txt"));
    let read = call(
        &mut server,
        "resources/read",
        json!({"uri": deeper}),
        "ReadResourceResultResponse",
    )
    .await;
    assert_eq!(read["result"]["contents"][0]["text"], "deeper");
    server.finish().await;
}

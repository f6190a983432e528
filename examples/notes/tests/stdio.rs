//! The notes server over stdio: listing, text and binary reads, typed
//! template reads, not-found, prompts with and without arguments, and
//! completion.

use mcp_test_support::stdio::StdioServer;
use mcp_test_support::{assert_valid, assert_valid_error, call_tool, request};
use serde_json::json;

fn spawn() -> StdioServer {
    StdioServer::spawn(env!("CARGO_BIN_EXE_notes"))
}

#[tokio::test]
async fn lists_and_reads() {
    let mut server = spawn();
    let discover = server.call(&request(1, "server/discover", json!({}))).await;
    assert_eq!(
        discover["result"]["capabilities"],
        json!({"tools": {}, "resources": {}, "prompts": {}, "completions": {}})
    );

    let list = server.call(&request(2, "resources/list", json!({}))).await;
    assert_valid("ListResourcesResultResponse", &list);
    let uris: Vec<&str> = list["result"]["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["uri"].as_str().unwrap())
        .collect();
    assert_eq!(uris, ["notes://index", "notes://logo.png"]);

    let templates = server
        .call(&request(3, "resources/templates/list", json!({})))
        .await;
    assert_valid("ListResourceTemplatesResultResponse", &templates);
    assert_eq!(
        templates["result"]["resourceTemplates"],
        json!([
            {"uriTemplate": "notes://note/{slug}", "name": "note", "description": "One note, by its slug.", "mimeType": "text/markdown"},
            {"uriTemplate": "notes://tag/{tag}", "name": "tag", "description": "Every note with a tag.", "mimeType": "text/markdown"}
        ])
    );

    let index = server
        .call(&request(
            4,
            "resources/read",
            json!({"uri": "notes://index"}),
        ))
        .await;
    assert_valid("ReadResourceResultResponse", &index);
    let text = index["result"]["contents"][0]["text"].as_str().unwrap();
    assert!(
        text.starts_with("# Notes\n- [Garden plan](notes://note/garden)"),
        "{text}"
    );

    let logo = server
        .call(&request(
            5,
            "resources/read",
            json!({"uri": "notes://logo.png"}),
        ))
        .await;
    assert_valid("ReadResourceResultResponse", &logo);
    assert_eq!(
        logo["result"],
        json!({
            "resultType": "complete",
            "contents": [{"uri": "notes://logo.png", "mimeType": "image/png",
                "blob": "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII="}],
            "ttlMs": 86_400_000,
            "cacheScope": "public",
            "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "notes", "version": "0.1.0", "title": "Notes"}}
        })
    );

    let note = server
        .call(&request(
            6,
            "resources/read",
            json!({"uri": "notes://note/garden"}),
        ))
        .await;
    assert_eq!(
        note["result"]["contents"][0]["text"],
        "# Garden plan\n\nTomatoes by the fence; basil in pots.\n"
    );
    let tag = server
        .call(&request(
            7,
            "resources/read",
            json!({"uri": "notes://tag/%23home"}),
        ))
        .await;
    assert_eq!(
        tag["result"]["contents"][0]["text"],
        "# ##home\n\n- Garden plan (notes://note/garden)\n- Groceries (notes://note/groceries)\n"
    );

    let missing = server
        .call(&request(
            8,
            "resources/read",
            json!({"uri": "notes://note/nope"}),
        ))
        .await;
    assert_valid_error(&missing);
    assert_eq!(
        missing,
        json!({"jsonrpc": "2.0", "id": 8, "error": {"code": -32602, "message": "Resource not found: notes://note/nope", "data": {"uri": "notes://note/nope"}}})
    );
    assert!(server.finish().await.is_empty());
}

#[tokio::test]
async fn a_tool_changes_what_resources_return() {
    let mut server = spawn();
    let added = server
        .call(&call_tool(
            1,
            "add_note",
            json!({"slug": "ideas", "title": "Ideas", "body": "Fly.", "tags": ["#work"]}),
        ))
        .await;
    assert_eq!(
        added["result"]["content"][0]["text"],
        "saved notes://note/ideas"
    );
    let bad = server
        .call(&call_tool(
            2,
            "add_note",
            json!({"slug": "Bad Slug", "title": "x", "body": "y"}),
        ))
        .await;
    assert_eq!(bad["result"]["isError"], true);
    let note = server
        .call(&request(
            3,
            "resources/read",
            json!({"uri": "notes://note/ideas"}),
        ))
        .await;
    assert_eq!(note["result"]["contents"][0]["text"], "# Ideas\n\nFly.\n");
    assert!(server.finish().await.is_empty());
}

#[tokio::test]
async fn prompts_and_completion() {
    let mut server = spawn();
    let list = server.call(&request(1, "prompts/list", json!({}))).await;
    assert_valid("ListPromptsResultResponse", &list);
    assert_eq!(
        list["result"]["prompts"],
        json!([
            {"name": "brainstorm", "description": "Brainstorms ideas on a topic.", "arguments": [
                {"name": "topic", "description": "What to brainstorm about.", "required": true},
                {"name": "count", "description": "How many ideas (default 5)."}
            ]},
            {"name": "summarize", "description": "Asks the model to summarize a note, with the note embedded.", "arguments": [
                {"name": "slug", "description": "The note to summarize.", "required": true},
                {"name": "style", "description": "How to summarize: `bullets` or `paragraph` (default)."}
            ]}
        ])
    );

    let brainstorm = server
        .call(&request(
            2,
            "prompts/get",
            json!({"name": "brainstorm", "arguments": {"topic": "gardens"}}),
        ))
        .await;
    assert_valid("GetPromptResultResponse", &brainstorm);
    assert_eq!(
        brainstorm["result"]["messages"],
        json!([{"role": "user", "content": {"type": "text", "text": "Brainstorm 5 ideas about gardens. One line each."}}])
    );
    let three = server
        .call(&request(
            3,
            "prompts/get",
            json!({"name": "brainstorm", "arguments": {"topic": "x", "count": "3"}}),
        ))
        .await;
    assert_eq!(
        three["result"]["messages"][0]["content"]["text"],
        "Brainstorm 3 ideas about x. One line each."
    );
    let summarize = server
        .call(&request(
            4,
            "prompts/get",
            json!({"name": "summarize", "arguments": {"slug": "release", "style": "bullets"}}),
        ))
        .await;
    assert_valid("GetPromptResultResponse", &summarize);
    assert_eq!(
        summarize["result"]["messages"][0],
        json!({"role": "user", "content": {"type": "resource", "resource": {"uri": "notes://note/release", "mimeType": "text/markdown", "text": "Tag, build, publish, announce."}}})
    );
    let without = server
        .call(&request(5, "prompts/get", json!({"name": "summarize"})))
        .await;
    assert_eq!(
        without["error"],
        json!({"code": -32602, "message": "Missing required argument `slug` for prompt summarize"})
    );

    let slugs = server
        .call(&request(6, "completion/complete", json!({"ref": {"type": "ref/prompt", "name": "summarize"}, "argument": {"name": "slug", "value": "g"}})))
        .await;
    assert_valid("CompleteResultResponse", &slugs);
    assert_eq!(
        slugs["result"]["completion"],
        json!({"values": ["garden", "groceries"]})
    );
    let tags = server
        .call(&request(7, "completion/complete", json!({"ref": {"type": "ref/resource", "uri": "notes://tag/{tag}"}, "argument": {"name": "tag", "value": "#"}})))
        .await;
    assert_eq!(
        tags["result"]["completion"],
        json!({"values": ["#home", "#spring", "#work"]})
    );
    assert!(server.finish().await.is_empty());
}

//! Per-read metadata (a read's own `ttlMs`, `cacheScope` and `_meta`,
//! overriding what the resource declares; a prompt's `_meta`) and the
//! content builders (every field of a resource link, embedded resources,
//! images and audio with annotations). Every message is validated against
//! the spec's `schema.json`.

use std::time::{Duration, UNIX_EPOCH};

use mcp_runtime::protocol::{Icon, IconTheme, JsonObject, Resource};
use mcp_runtime::{
    Annotations, CacheHint, CacheScope, Content, GetPromptResult, PromptMessage,
    ReadResourceResult, ResourceContents, Role, Server, ServerBuilder, prompt, resource, tool,
};
use mcp_test_support::{assert_valid, parse, request};
use serde_json::{Value, json};

fn meta(value: Value) -> JsonObject {
    match value {
        Value::Object(object) => object,
        _ => unreachable!(),
    }
}

/// Public by declaration: the same for everyone...
#[resource("test://catalog", mime_type = "text/plain", ttl_ms = 60000, cache = public)]
fn catalog() -> &'static str {
    "pens, paper"
}

/// ...except when it is not: declared public, but a read that found the
/// caller's own data marks this result private, for less time, and says
/// why in `_meta`.
#[resource("test://basket/{user}", mime_type = "text/plain", ttl_ms = 60000, cache = public)]
fn basket(user: String) -> ReadResourceResult {
    if user == "anyone" {
        return ReadResourceResult::new([ResourceContents::text("test://basket/anyone", "empty")]);
    }
    ReadResourceResult::new([ResourceContents::text(
        format!("test://basket/{user}"),
        format!("{user}'s basket: 2 pens"),
    )])
    .with_cache_scope(CacheScope::Private)
    .with_ttl_ms(5_000)
    .with_meta(meta(json!({"com.example/owner": user})))
}

/// Both hints at once, and a result `_meta` that tries to replace the
/// runtime's `serverInfo` (it cannot).
#[resource("test://clock", mime_type = "text/plain")]
fn clock() -> ReadResourceResult {
    ReadResourceResult::new([ResourceContents::text("test://clock", "12:00")])
        .with_cache(CacheHint::new(1_000, CacheScope::Public))
        .with_meta(meta(json!({
            "com.example/tick": 1,
            "io.modelcontextprotocol/serverInfo": {"name": "spoofed", "version": "0"}
        })))
}

/// A greeting whose rendering carries its own `_meta`.
#[prompt]
fn greeting(name: String) -> GetPromptResult {
    GetPromptResult::new([PromptMessage::user(format!("Greet {name}."))])
        .with_description("A greeting")
        .with_meta(meta(json!({"com.example/locale": "en"})))
}

/// Every content builder, every field.
#[tool(annotations(read_only))]
fn gallery() -> Vec<Content> {
    let annotations = Annotations::new()
        .audience([Role::User, Role::Assistant])
        .priority(0.8)
        .last_modified_at(UNIX_EPOCH + Duration::from_secs(1_736_694_058));
    let link = Resource::new("file:///project/README.md", "README.md")
        .title("Project Documentation")
        .description("What the project is")
        .mime_type("text/markdown")
        .size(1024)
        .icon(
            Icon::new("https://example.com/doc.png")
                .mime_type("image/png")
                .sizes(["48x48"])
                .theme(IconTheme::Light),
        )
        .annotations(annotations.clone())
        .meta(meta(json!({"com.example/rev": 3})));
    vec![
        Content::link(link),
        Content::resource(
            ResourceContents::text("file:///project/notes.txt", "notes")
                .with_mime_type("text/plain"),
        )
        .with_annotations(Annotations::new().audience([Role::Assistant]))
        .with_meta(meta(json!({"com.example/embedded": true}))),
        Content::image([137u8, 80, 78, 71], "image/png")
            .with_annotations(Annotations::new().priority(1.5)),
        Content::audio([82u8, 73, 70, 70], "audio/wav")
            .with_annotations(Annotations::new().last_modified("2025-01-12T15:00:58Z")),
    ]
}

fn server() -> Server {
    ServerBuilder::new("per-read", "1.0.0")
        .cache_hints(mcp_runtime::CacheHints::new().reads(CacheHint::new(0, CacheScope::Private)))
        .build()
        .unwrap()
}

async fn send(message: String, definition: &str) -> Value {
    let response = parse(&server().exchange(message).await.response.unwrap());
    assert_valid(definition, &response);
    response["result"].clone()
}

async fn read(uri: &str) -> Value {
    let result = send(
        request(1, "resources/read", json!({"uri": uri})),
        "ReadResourceResultResponse",
    )
    .await;
    json!([result["ttlMs"], result["cacheScope"], result["_meta"]])
}

const SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";

#[tokio::test]
async fn a_read_overrides_the_declared_cache_hints_and_adds_meta() {
    let info = json!({"name": "per-read", "version": "1.0.0"});
    // As declared.
    assert_eq!(
        read("test://catalog").await,
        json!([60000, "public", {SERVER_INFO: info}])
    );
    assert_eq!(
        read("test://basket/anyone").await,
        json!([60000, "public", {SERVER_INFO: info}])
    );
    // The read's own: user-specific content inside a public resource.
    assert_eq!(
        read("test://basket/alice").await,
        json!([5000, "private", {SERVER_INFO: info, "com.example/owner": "alice"}])
    );
    // Over the server's default, and serverInfo stays the runtime's.
    assert_eq!(
        read("test://clock").await,
        json!([1000, "public", {SERVER_INFO: info, "com.example/tick": 1}])
    );
}

#[tokio::test]
async fn a_prompt_rendering_carries_its_meta() {
    let result = send(
        request(
            1,
            "prompts/get",
            json!({"name": "greeting", "arguments": {"name": "Ada"}}),
        ),
        "GetPromptResultResponse",
    )
    .await;
    assert_eq!(result["description"], "A greeting");
    assert_eq!(
        result["_meta"],
        json!({SERVER_INFO: {"name": "per-read", "version": "1.0.0"}, "com.example/locale": "en"})
    );
    // Prompt results are not cacheable results: no hints.
    assert!(result.get("ttlMs").is_none() && result.get("cacheScope").is_none());
}

#[tokio::test]
async fn content_builders_fill_every_field() {
    let result = send(
        request(1, "tools/call", json!({"name": "gallery"})),
        "CallToolResultResponse",
    )
    .await;
    let content = &result["content"];
    let annotations = json!({"audience": ["user", "assistant"], "priority": 0.8, "lastModified": "2025-01-12T15:00:58Z"});
    assert_eq!(
        content[0],
        json!({
            "type": "resource_link",
            "uri": "file:///project/README.md",
            "name": "README.md",
            "title": "Project Documentation",
            "description": "What the project is",
            "mimeType": "text/markdown",
            "size": 1024,
            "icons": [{"src": "https://example.com/doc.png", "mimeType": "image/png", "sizes": ["48x48"], "theme": "light"}],
            "annotations": annotations,
            "_meta": {"com.example/rev": 3}
        })
    );
    assert_valid("ResourceLink", &content[0]);
    assert_eq!(
        content[1],
        json!({
            "type": "resource",
            "resource": {"uri": "file:///project/notes.txt", "mimeType": "text/plain", "text": "notes"},
            "annotations": {"audience": ["assistant"]},
            "_meta": {"com.example/embedded": true}
        })
    );
    assert_valid("EmbeddedResource", &content[1]);
    // A priority out of range is clamped into the schema's 0..=1.
    assert_eq!(
        content[2],
        json!({"type": "image", "data": "iVBORw==", "mimeType": "image/png", "annotations": {"priority": 1.0}})
    );
    assert_valid("ImageContent", &content[2]);
    assert_eq!(
        content[3],
        json!({"type": "audio", "data": "UklGRg==", "mimeType": "audio/wav", "annotations": {"lastModified": "2025-01-12T15:00:58Z"}})
    );
    assert_valid("AudioContent", &content[3]);
}

//! Golden transcripts for resources and templates: listing, reading, the
//! template-matching rule, every error path, and caching hints. Every
//! message is validated against the spec's `schema.json`.

use mcp_runtime::{
    CacheHint, CacheScope, Context, Provenance, ResourceContents, Server, ServerBuilder, resource,
};
use mcp_test_support::{assert_valid, assert_valid_error, parse, request, spec_example};
use serde_json::{Value, json};

/// The content of the static text resource.
#[resource(
    "test://static-text",
    name = "static-text",
    title = "Static text",
    mime_type = "text/plain"
)]
fn static_text() -> &'static str {
    "This is the content of the static text resource."
}

/// A one-pixel image.
#[resource(
    "test://static-binary",
    mime_type = "image/png",
    size = 4,
    annotations(audience = ["user", "assistant"], priority = 0.8, last_modified = "2025-01-12T15:00:58Z"),
    icon(src = "https://example.com/png.png", mime_type = "image/png", sizes = ["48x48"])
)]
fn static_binary() -> Vec<u8> {
    vec![137, 80, 78, 71]
}

/// Data for an id.
#[resource("test://template/{id}/data", mime_type = "application/json", ttl_ms = 60000, cache = public)]
fn template_data(id: u64) -> String {
    format!(r#"{{"id":"{id}","templateTest":true,"data":"Data for ID: {id}"}}"#)
}

/// Any file.
#[resource("files:///{+path}", name = "any-file")]
fn any_file(path: String) -> String {
    format!("file {path}")
}

/// The README of a directory: more specific than any file.
#[resource("files:///{dir}/README.md", name = "readme")]
fn readme(dir: String) -> String {
    format!("readme of {dir}")
}

/// A repository file: two variables.
#[resource("repo://{owner}/{name}", name = "repo")]
async fn repo(owner: String, name: String, #[ctx] ctx: &Context) -> String {
    format!("{owner}/{name} via {}", ctx.method())
}

/// Several contents with provenance.
#[resource("test://bundle", name = "bundle")]
fn bundle() -> Vec<ResourceContents> {
    vec![
        ResourceContents::text("test://bundle/a", "first").with_mime_type("text/plain"),
        ResourceContents::blob("test://bundle/b", [1u8, 2, 3])
            .with_mime_type("application/octet-stream")
            .with_provenance(
                Provenance::untrusted("https://example.com/b").retrieved_at("2025-01-12T15:00:58Z"),
            ),
    ]
}

/// Fails to read.
#[resource("test://broken", name = "broken")]
fn broken() -> Result<String, String> {
    Err("disk on fire".into())
}

/// Reads nothing.
#[resource("test://empty", name = "empty")]
fn empty() -> Vec<ResourceContents> {
    Vec::new()
}

/// Claims a bad MIME type.
#[resource("test://liar", name = "liar")]
fn liar() -> ResourceContents {
    ResourceContents::text("test://liar", "x").with_mime_type("not a mime type")
}

/// Too big for a small server.
#[resource("test://big", name = "big")]
fn big() -> String {
    "x".repeat(2000)
}

/// Panics.
#[resource("test://panic", name = "panic")]
fn panicking() -> String {
    panic!("resource panic")
}

fn server() -> Server {
    ServerBuilder::new("golden", "1.0.0")
        .without_server_info_in_results()
        .max_resource_size(1000)
        .build()
        .unwrap()
}

async fn send(server: &Server, message: String, definition: &str) -> Value {
    let exchange = server.exchange(message).await;
    assert!(exchange.notifications.is_empty());
    let response = parse(&exchange.response.unwrap());
    if response.get("error").is_some() {
        assert_valid_error(&response);
    } else {
        assert_valid(definition, &response);
    }
    response
}

async fn read(uri: &str) -> Value {
    send(
        &server(),
        request(1, "resources/read", json!({"uri": uri})),
        "ReadResourceResultResponse",
    )
    .await
}

fn contents(response: &Value) -> &Value {
    &response["result"]["contents"]
}

#[tokio::test]
async fn static_resources_are_listed_by_uri() {
    let response = send(
        &server(),
        request(1, "resources/list", json!({})),
        "ListResourcesResultResponse",
    )
    .await;
    let result = &response["result"];
    let uris: Vec<&str> = result["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["uri"].as_str().unwrap())
        .collect();
    assert_eq!(
        uris,
        [
            "test://big",
            "test://broken",
            "test://bundle",
            "test://empty",
            "test://liar",
            "test://panic",
            "test://static-binary",
            "test://static-text"
        ]
    );
    assert_eq!(
        result["resources"][6],
        json!({
            "uri": "test://static-binary",
            "name": "static_binary",
            "description": "A one-pixel image.",
            "mimeType": "image/png",
            "size": 4,
            "icons": [{"src": "https://example.com/png.png", "mimeType": "image/png", "sizes": ["48x48"]}],
            "annotations": {"audience": ["user", "assistant"], "priority": 0.8, "lastModified": "2025-01-12T15:00:58Z"}
        })
    );
    assert_eq!(
        result["resources"][7],
        json!({
            "uri": "test://static-text",
            "name": "static-text",
            "title": "Static text",
            "description": "The content of the static text resource.",
            "mimeType": "text/plain"
        })
    );
    for resource in result["resources"].as_array().unwrap() {
        assert_valid("Resource", resource);
    }
    assert_eq!(
        (&result["ttlMs"], &result["cacheScope"]),
        (&json!(0), &json!("private"))
    );
}

#[tokio::test]
async fn templates_are_listed_by_template_text() {
    let response = send(
        &server(),
        request(1, "resources/templates/list", json!({})),
        "ListResourceTemplatesResultResponse",
    )
    .await;
    assert_eq!(
        response["result"]["resourceTemplates"],
        json!([
            {"uriTemplate": "files:///{+path}", "name": "any-file", "description": "Any file."},
            {"uriTemplate": "files:///{dir}/README.md", "name": "readme", "description": "The README of a directory: more specific than any file."},
            {"uriTemplate": "repo://{owner}/{name}", "name": "repo", "description": "A repository file: two variables."},
            {"uriTemplate": "test://template/{id}/data", "name": "template_data", "description": "Data for an id.", "mimeType": "application/json"}
        ])
    );
}

#[tokio::test]
async fn text_and_binary_reads() {
    assert_eq!(
        read("test://static-text").await["result"],
        json!({
            "resultType": "complete",
            "contents": [{"uri": "test://static-text", "mimeType": "text/plain", "text": "This is the content of the static text resource."}],
            "ttlMs": 0,
            "cacheScope": "private"
        })
    );
    assert_eq!(
        contents(&read("test://static-binary").await),
        &json!([{"uri": "test://static-binary", "mimeType": "image/png", "blob": "iVBORw=="}])
    );
}

#[tokio::test]
async fn template_reads_bind_typed_variables() {
    let response = read("test://template/123/data").await;
    assert_eq!(
        response["result"],
        json!({
            "resultType": "complete",
            "contents": [{
                "uri": "test://template/123/data",
                "mimeType": "application/json",
                "text": r#"{"id":"123","templateTest":true,"data":"Data for ID: 123"}"#
            }],
            "ttlMs": 60000,
            "cacheScope": "public"
        })
    );
    // `id` is a u64: a value that does not parse means no match.
    for uri in [
        "test://template/abc/data",
        "test://template/-1/data",
        "test://template//data",
    ] {
        assert_eq!(read(uri).await["error"]["code"], -32602, "{uri}");
    }
    assert_eq!(
        contents(&read("repo://rust-lang/rust").await)[0]["text"],
        "rust-lang/rust via resources/read"
    );
    assert_eq!(
        contents(&read("repo://a%20b/c").await)[0]["text"],
        "a b/c via resources/read"
    );
}

#[tokio::test]
async fn the_most_specific_template_wins() {
    assert_eq!(
        contents(&read("files:///docs/README.md").await)[0]["text"],
        "readme of docs"
    );
    assert_eq!(
        contents(&read("files:///docs/deep/README.md").await)[0]["text"],
        "file docs/deep/README.md"
    );
    assert_eq!(
        contents(&read("files:///a/b.txt").await)[0]["text"],
        "file a/b.txt"
    );
}

#[tokio::test]
async fn several_contents_and_provenance() {
    assert_eq!(
        contents(&read("test://bundle").await),
        &json!([
            {"uri": "test://bundle/a", "mimeType": "text/plain", "text": "first"},
            {"uri": "test://bundle/b", "mimeType": "application/octet-stream", "blob": "AQID",
             "_meta": {"rs.mcp-runtime/provenance": {"source": "https://example.com/b", "retrievedAt": "2025-01-12T15:00:58Z", "trusted": false}}}
        ])
    );
}

#[tokio::test]
async fn unknown_uris_are_invalid_params_with_the_uri() {
    for uri in [
        "test://nonexistent-resource-for-conformance-testing",
        "test://empty",
        "other://x",
    ] {
        assert_eq!(
            read(uri).await,
            json!({"jsonrpc": "2.0", "id": 1, "error": {
                "code": -32602,
                "message": format!("Resource not found: {uri}"),
                "data": {"uri": uri}
            }})
        );
    }
}

#[tokio::test]
async fn read_failures_are_errors_with_a_clear_message() {
    let cases = [
        (
            "test://broken",
            "Failed to read resource test://broken: disk on fire",
        ),
        (
            "test://liar",
            "resource test://liar declares an invalid MIME type `not a mime type`",
        ),
        (
            "test://big",
            "the contents of test://big are 2000 bytes, over this server's 1000-byte limit for resources/read",
        ),
        ("test://panic", "Internal error"),
    ];
    for (uri, message) in cases {
        assert_eq!(
            read(uri).await,
            json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32603, "message": message}}),
            "{uri}"
        );
    }
}

#[tokio::test]
async fn malformed_reads_are_invalid_params() {
    for (params, message) in [
        (json!({}), "Invalid params: missing field `uri`"),
        (
            json!({"uri": 5}),
            "Invalid params: `uri`: invalid type: integer `5`, expected a string",
        ),
    ] {
        let response = send(
            &server(),
            request(1, "resources/read", params),
            "ReadResourceResultResponse",
        )
        .await;
        assert_eq!(
            response["error"],
            json!({"code": -32602, "message": message})
        );
    }
}

#[tokio::test]
async fn read_caching_defaults_come_from_the_server() {
    let server = ServerBuilder::new("golden", "1.0.0")
        .cache_hints(mcp_runtime::CacheHints::new().reads(CacheHint::new(5000, CacheScope::Public)))
        .build()
        .unwrap();
    let response = send(
        &server,
        request(1, "resources/read", json!({"uri": "test://static-text"})),
        "ReadResourceResultResponse",
    )
    .await;
    assert_eq!(
        (
            &response["result"]["ttlMs"],
            &response["result"]["cacheScope"]
        ),
        (&json!(5000), &json!("public"))
    );
    assert_eq!(
        response["result"]["_meta"],
        json!({"io.modelcontextprotocol/serverInfo": {"name": "golden", "version": "1.0.0"}})
    );
    // A resource's own hints win.
    let response = send(
        &server,
        request(
            2,
            "resources/read",
            json!({"uri": "test://template/1/data"}),
        ),
        "ReadResourceResultResponse",
    )
    .await;
    assert_eq!(response["result"]["ttlMs"], 60000);
}

#[tokio::test]
async fn the_spec_read_example_round_trips() {
    let example = spec_example("ReadResourceResult/file-resource-contents.json");
    assert_valid("ReadResourceResult", &example);
    let contents: Vec<ResourceContents> =
        serde_json::from_value(example["contents"].clone()).unwrap();
    assert_eq!(
        serde_json::to_value(&contents).unwrap(),
        example["contents"]
    );
}

#[tokio::test]
async fn discover_advertises_resources_without_completions() {
    let response = send(
        &server(),
        request(1, "server/discover", json!({})),
        "DiscoverResultResponse",
    )
    .await;
    // `repo` takes the whole `&Context`, so it may log.
    assert_eq!(
        response["result"]["capabilities"],
        json!({"resources": {}, "logging": {}})
    );
    let response = send(
        &server(),
        request(2, "completion/complete", json!({"ref": {"type": "ref/resource", "uri": "repo://{owner}/{name}"}, "argument": {"name": "owner", "value": "r"}})),
        "CompleteResultResponse",
    )
    .await;
    assert_eq!(response["error"]["code"], -32601);
}

//! Debug builds check a tool's `structuredContent` against its
//! `outputSchema` (feature `debug-checks`; the workspace's tests turn it
//! on through `tests/hostile`): a tool whose
//! `Serialize` disagrees with its `JsonSchema` fails with an internal
//! error naming the path, and the mismatch is logged. Release builds (and
//! builds without the feature) send what the tool returned.

use mcp_runtime::{Json, Server, ServerBuilder, tool};
use mcp_test_support::{assert_valid, call_tool, parse};
use serde_json::{Value, json};

/// A count whose schema says integer, but which serializes as a word: the
/// two derives disagree, as a hand-written `Serialize` lets them.
#[derive(schemars::JsonSchema)]
struct Count {
    count: u32,
}

impl serde::Serialize for Count {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct as _;
        let mut out = serializer.serialize_struct("Count", 1)?;
        let word = ["zero", "one", "two", "three"][self.count.min(3) as usize];
        out.serialize_field("count", word)?;
        out.end()
    }
}

/// Counts, but writes the count as a word.
#[tool(annotations(read_only))]
fn miscount() -> Json<Count> {
    Json(Count { count: 3 })
}

#[derive(serde::Serialize, schemars::JsonSchema)]
struct Total {
    total: u32,
}

/// Counts, as its schema says.
#[tool(annotations(read_only))]
fn count() -> Json<Total> {
    Json(Total { total: 3 })
}

fn server() -> Server {
    ServerBuilder::new("output", "1.0.0")
        .without_server_info_in_results()
        .build()
        .unwrap()
}

async fn call(server: &Server, id: i64, name: &str) -> Value {
    let response = server.exchange(call_tool(id, name, json!({}))).await;
    parse(&response.response.expect("a response"))
}

#[tokio::test]
async fn conforming_structured_content_is_sent() {
    let done = call(&server(), 1, "count").await;
    assert_valid("CallToolResultResponse", &done);
    assert_eq!(
        done,
        json!({"jsonrpc": "2.0", "id": 1, "result": {
            "resultType": "complete",
            "content": [{"type": "text", "text": r#"{"total":3}"#}],
            "structuredContent": {"total": 3}
        }})
    );
}

#[cfg(all(debug_assertions, feature = "debug-checks"))]
#[tokio::test]
async fn structured_content_that_breaks_its_schema_is_an_internal_error() {
    let (capture, _guard) = mcp_test_support::LogCapture::start();

    let server = server();
    // What the client is told: the spec's internal error, naming the path.
    let response = server.exchange(call_tool(7, "miscount", json!({}))).await;
    assert_eq!(
        response.response.as_deref(),
        Some(
            r#"{"jsonrpc":"2.0","id":7,"error":{"code":-32603,"message":"Internal error: the structuredContent of tool miscount does not match its outputSchema at /count: \"three\" is not of type \"integer\" (checked in debug builds)"}}"#
        )
    );
    mcp_test_support::assert_valid_error(&parse(response.response.as_deref().unwrap()));

    // What the developer reads in the log.
    let output = capture.text();
    let line = output
        .lines()
        .find(|l| l.contains("does not match the tool's outputSchema"))
        .unwrap_or_else(|| panic!("no mismatch logged in:\n{output}"));
    assert!(line.contains("ERROR"), "{line}");
    assert!(line.contains("tool=\"miscount\""), "{line}");
    assert!(line.contains("path=\"/count\""), "{line}");
    assert!(
        line.contains("schema_path=/properties/count/type"),
        "{line}"
    );
}

#[cfg(not(all(debug_assertions, feature = "debug-checks")))]
#[tokio::test]
async fn release_builds_send_what_the_tool_returned() {
    let done = call(&server(), 7, "miscount").await;
    assert_eq!(
        done["result"]["structuredContent"],
        json!({"count": "three"})
    );
}

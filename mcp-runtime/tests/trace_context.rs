//! OpenTelemetry trace context in `_meta` is attached to the request's
//! `tracing` span, so handler diagnostics carry it.

use mcp_runtime::{ServerBuilder, tool};
use mcp_test_support::{LogCapture, meta, request};
use serde_json::json;

/// Emits one diagnostic.
#[tool]
fn traced() -> &'static str {
    tracing::info!("inside the handler");
    "ok"
}

#[tokio::test]
async fn traceparent_and_tracestate_reach_the_span() {
    let (capture, _guard) = LogCapture::start();

    let server = ServerBuilder::new("trace", "0.0.0").build().unwrap();
    let mut params = json!({"name": "traced", "arguments": {}, "_meta": meta()});
    params["_meta"]["traceparent"] =
        json!("00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01");
    params["_meta"]["tracestate"] = json!("vendor=opaque");
    let response = server.exchange(request(11, "tools/call", params)).await;
    assert!(response.response.unwrap().contains("\"ok\""));

    let output = capture.text();
    let line = output
        .lines()
        .find(|l| l.contains("inside the handler"))
        .unwrap_or_else(|| panic!("no handler event in:\n{output}"));
    assert!(line.contains("mcp.request{"), "{line}");
    assert!(line.contains("id=11"), "{line}");
    assert!(line.contains("method=\"tools/call\""), "{line}");
    assert!(
        line.contains("traceparent=\"00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01\""),
        "{line}"
    );
    assert!(line.contains("tracestate=\"vendor=opaque\""), "{line}");

    // A malformed traceparent is not attached.
    let mut params = json!({"name": "traced", "arguments": {}, "_meta": meta()});
    params["_meta"]["traceparent"] = json!("garbage");
    let _ = server.exchange(request(12, "tools/call", params)).await;
    let output = capture.text();
    let line = output.lines().rfind(|l| l.contains("id=12")).unwrap();
    assert!(!line.contains("garbage"), "{line}");
}

//! Results true to their schemas: a float JSON cannot hold is an error,
//! never the `null` serde_json would write.

mod common;

use common::{Http, Log, call, post, raw};
use serde_json::{Value, json};

#[test]
fn an_infinite_quotient_is_a_tool_error_not_a_null() {
    let server = Http::start(&[], Log::Counted);
    let address = server.address;
    let head = format!("POST /mcp HTTP/1.1\r\nHost: {address}");
    let body = call(1, "divide", r#"{"a":1e308,"b":1e-308}"#);
    let response = raw(address, &post(&head, "tools/call", Some("divide"), &body));
    assert_eq!(response.status, 200, "{response:?}");
    let answer: Value = serde_json::from_str(&response.body).expect("JSON");
    let result = &answer["result"];
    assert_eq!(result["isError"], json!(true), "{answer}");
    assert!(result.get("structuredContent").is_none(), "{answer}");
    assert_eq!(
        result["content"],
        json!([{"type": "text", "text": "the tool's structured output could not be serialized: inf is not a JSON number (JSON has no NaN or infinity)"}])
    );
    // A finite quotient is unchanged.
    let body = call(2, "divide", r#"{"a":1,"b":4}"#);
    let response = raw(address, &post(&head, "tools/call", Some("divide"), &body));
    let answer: Value = serde_json::from_str(&response.body).expect("JSON");
    assert_eq!(
        answer["result"]["structuredContent"],
        json!(0.25),
        "{answer}"
    );
}

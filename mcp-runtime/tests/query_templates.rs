//! Golden transcripts for resource templates with RFC 6570 form-style
//! query expressions (`{?state,label}`, `{&label}`): listing, reads with
//! the query's variables in any order or left out, percent-decoding,
//! unknown keys refused with `-32602` naming them, and completion of a
//! query variable. Every message is validated against the spec's
//! `schema.json`.

use mcp_runtime::{CompletionRequest, Server, ServerBuilder, resource};
use mcp_test_support::{assert_valid, assert_valid_error, parse, request};
use serde_json::{Value, json};

/// Issues, filtered by state and label.
#[resource("tracker://issues{?state,label}", mime_type = "text/plain", complete(state = states))]
fn issues(state: Option<String>, label: Option<String>) -> String {
    format!(
        "state={} label={}",
        state.as_deref().unwrap_or("any"),
        label.as_deref().unwrap_or("any")
    )
}

fn states(request: &CompletionRequest) -> Vec<&'static str> {
    ["open", "closed"]
        .into_iter()
        .filter(|s| s.starts_with(request.value()))
        .collect()
}

/// One project's issues: a path variable, then a query started and
/// continued; `limit` is typed.
#[resource("tracker://{project}/issues{?limit}{&label}", mime_type = "text/plain")]
fn project_issues(project: String, limit: Option<u32>, label: Option<String>) -> String {
    format!("{project}: {limit:?} {label:?}")
}

/// Searches issues: the query starts in the template's literal text.
#[resource("tracker://search?kind=issue{&q}", mime_type = "text/plain")]
fn search(q: Option<String>) -> String {
    format!("search {q:?}")
}

fn server() -> Server {
    ServerBuilder::new("query-templates", "1.0.0")
        .without_server_info_in_results()
        .build()
        .unwrap()
}

async fn send(message: String, definition: &str) -> Value {
    let exchange = server().exchange(message).await;
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
        request(1, "resources/read", json!({"uri": uri})),
        "ReadResourceResultResponse",
    )
    .await
}

/// The text a read returned.
async fn text(uri: &str) -> String {
    let response = read(uri).await;
    let contents = &response["result"]["contents"];
    assert_eq!(
        contents[0]["uri"], uri,
        "the contents are the URI read: {response}"
    );
    contents[0]["text"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn templates_are_listed_as_written() {
    let response = send(
        request(1, "resources/templates/list", json!({})),
        "ListResourceTemplatesResultResponse",
    )
    .await;
    let templates: Vec<&str> = response["result"]["resourceTemplates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["uriTemplate"].as_str().unwrap())
        .collect();
    assert_eq!(
        templates,
        [
            "tracker://issues{?state,label}",
            "tracker://search?kind=issue{&q}",
            "tracker://{project}/issues{?limit}{&label}"
        ]
    );
}

#[tokio::test]
async fn query_variables_are_optional_in_any_order_and_decoded() {
    assert_eq!(
        read("tracker://issues?state=open").await,
        json!({"jsonrpc": "2.0", "id": 1, "result": {
            "resultType": "complete",
            "contents": [{"uri": "tracker://issues?state=open", "mimeType": "text/plain", "text": "state=open label=any"}],
            "ttlMs": 0,
            "cacheScope": "private"
        }})
    );
    for (uri, expected) in [
        ("tracker://issues", "state=any label=any"),
        (
            "tracker://issues?label=bug&state=open",
            "state=open label=bug",
        ),
        (
            "tracker://issues?label=good%20first%20issue",
            "state=any label=good first issue",
        ),
        ("tracker://mcp/issues", "mcp: None None"),
        (
            "tracker://mcp/issues?label=bug&limit=20",
            "mcp: Some(20) Some(\"bug\")",
        ),
        ("tracker://search?kind=issue", "search None"),
        (
            "tracker://search?kind=issue&q=crash",
            "search Some(\"crash\")",
        ),
    ] {
        assert_eq!(text(uri).await, expected, "{uri}");
    }
}

#[tokio::test]
async fn unknown_query_keys_are_invalid_params_naming_them() {
    assert_eq!(
        read("tracker://issues?stat=open").await,
        json!({"jsonrpc": "2.0", "id": 1, "error": {
            "code": -32602,
            "message": "Invalid resource URI tracker://issues?stat=open: unknown query parameter `stat`; the template tracker://issues{?state,label} takes `state`, `label`",
            "data": {"uri": "tracker://issues?stat=open"}
        }})
    );
    assert_eq!(
        read("tracker://mcp/issues?sort=age&order=asc").await["error"]["message"],
        "Invalid resource URI tracker://mcp/issues?sort=age&order=asc: unknown query parameters `sort`, `order`; the template tracker://{project}/issues{?limit}{&label} takes `limit`, `label`"
    );
}

#[tokio::test]
async fn values_that_do_not_parse_or_repeat_do_not_match() {
    for uri in [
        "tracker://mcp/issues?limit=many",
        "tracker://issues?state=open&state=closed",
        "tracker://search?kind=pr&q=crash",
        "tracker://issues/7",
    ] {
        assert_eq!(
            read(uri).await["error"],
            json!({"code": -32602, "message": format!("Resource not found: {uri}"), "data": {"uri": uri}}),
            "{uri}"
        );
    }
}

#[tokio::test]
async fn query_variables_complete() {
    let response = send(
        request(
            1,
            "completion/complete",
            json!({
                "ref": {"type": "ref/resource", "uri": "tracker://issues{?state,label}"},
                "argument": {"name": "state", "value": "o"}
            }),
        ),
        "CompleteResultResponse",
    )
    .await;
    assert_eq!(
        response["result"]["completion"],
        json!({"values": ["open"]})
    );
}

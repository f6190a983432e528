//! The tracker against a real PostgreSQL, in process: each test builds its
//! own server around its own schema's pool (`ServerBuilder::state`), so
//! several servers live in this one test binary, side by side.

mod common;

use common::TestDb;
use mcp_runtime::{Server, ServerBuilder};
use mcp_test_support::{
    LogCapture, assert_valid, assert_valid_response, call_tool, meta_with, parse, request,
};
use serde_json::{Value, json};

fn server(db: &TestDb) -> Server {
    ServerBuilder::new("tracker", "0.1.0")
        .state(db.pool.clone())
        .build()
        .expect("the tracker builds")
}

async fn call(server: &Server, name: &str, arguments: Value) -> Value {
    let exchange = server.exchange(call_tool(1, name, arguments)).await;
    let response = parse(exchange.response.as_deref().expect("a response"));
    assert_valid_response("CallToolResultResponse", &response);
    response
}

/// The structured result, with its timestamps (which vary) replaced.
fn structured(response: &Value) -> Value {
    assert_eq!(response["result"]["isError"], Value::Null, "{response}");
    let mut value = response["result"]["structuredContent"].clone();
    mask_times(&mut value);
    value
}

fn mask_times(value: &mut Value) {
    match value {
        Value::Object(map) => {
            for (key, field) in map.iter_mut() {
                if key.ends_with("_at") && field.is_string() {
                    *field = json!("<time>");
                } else {
                    mask_times(field);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(mask_times),
        _ => {}
    }
}

fn tool_error(response: &Value) -> &str {
    assert_eq!(response["result"]["isError"], true, "{response}");
    response["result"]["content"][0]["text"].as_str().unwrap()
}

#[tokio::test]
async fn issues_are_created_read_listed_and_commented() {
    let db = TestDb::new().await;
    let server = server(&db);
    let created = call(
        &server,
        "create_issue",
        json!({"title": "Crash on start", "body": "It panics.", "labels": ["bug"]}),
    )
    .await;
    let issue = json!({
        "id": 1, "title": "Crash on start", "body": "It panics.", "state": "open",
        "labels": ["bug"], "author": "local", "created_at": "<time>", "closed_at": null,
        "close_reason": null, "comments": 0
    });
    assert_eq!(structured(&created), issue);
    call(&server, "create_issue", json!({"title": "Docs"})).await;
    let commented = call(
        &server,
        "comment_on_issue",
        json!({"id": 1, "text": "Seen it too."}),
    )
    .await;
    assert_eq!(
        commented["result"]["content"][0]["text"],
        "Commented on issue #1."
    );
    let got = call(&server, "get_issue", json!({"id": 1})).await;
    assert_eq!(structured(&got)["comments"], 1);
    let listed = call(&server, "list_issues", json!({"label": "bug"})).await;
    let ids: Vec<_> = structured(&listed)["issues"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["id"].clone())
        .collect();
    assert_eq!(ids, [json!(1)]);
    let all = call(&server, "list_issues", json!({"state": "open"})).await;
    assert_eq!(structured(&all)["issues"].as_array().unwrap().len(), 2);

    let missing = call(&server, "get_issue", json!({"id": 99})).await;
    assert_eq!(tool_error(&missing), "there is no issue #99");
    let bad = call(&server, "list_issues", json!({"limit": 0})).await;
    assert_eq!(tool_error(&bad), "limit must be between 1 and 100, not 0");
    db.drop_schema().await;
}

/// `tools/call` of `close_issue` with the client able to answer forms.
fn close_message(arguments: Value, retry: Value) -> String {
    let mut params = json!({"name": "close_issue", "arguments": arguments});
    if let Value::Object(retry) = retry {
        params.as_object_mut().unwrap().extend(retry);
    }
    params["_meta"] = meta_with(json!({"elicitation": {"form": {}}}));
    let message = request(1, "tools/call", params);
    assert_valid("CallToolRequest", &parse(&message));
    message
}

/// The first round of closing: the question's key and message, and the
/// state to answer with.
async fn ask_to_close(server: &Server, arguments: &Value) -> (String, String, String) {
    let asked = server
        .exchange(close_message(arguments.clone(), json!({})))
        .await;
    let asked = parse(asked.response.as_deref().unwrap());
    assert_valid_response("CallToolResultResponse", &asked);
    let result = &asked["result"];
    assert_eq!(result["resultType"], "input_required", "{asked}");
    let (key, question) = result["inputRequests"]
        .as_object()
        .unwrap()
        .iter()
        .next()
        .unwrap();
    assert_eq!(question["method"], "elicitation/create");
    let message = question["params"]["message"].as_str().unwrap().to_owned();
    let state = result["requestState"].as_str().unwrap().to_owned();
    (key.clone(), message, state)
}

fn answer(key: &str, state: &str, close: bool) -> Value {
    json!({
        "inputResponses": {key: {"action": "accept", "content": {"close": close}}},
        "requestState": state,
    })
}

#[tokio::test]
async fn closing_asks_the_user_first_and_a_state_closes_once() {
    let db = TestDb::new().await;
    let server = server(&db);
    call(&server, "create_issue", json!({"title": "Flaky test"})).await;
    let arguments = json!({"id": 1, "reason": "fixed"});
    let (key, message, state) = ask_to_close(&server, &arguments).await;
    assert_eq!(key, "confirm_close");
    assert_eq!(message, "Close issue #1 \u{201c}Flaky test\u{201d}?");
    // Still open until the user answers; a "no" leaves it open.
    let got = call(&server, "get_issue", json!({"id": 1})).await;
    assert_eq!(structured(&got)["state"], "open");
    let declined = server
        .exchange(close_message(
            arguments.clone(),
            answer(&key, &state, false),
        ))
        .await;
    let declined = parse(declined.response.as_deref().unwrap());
    assert_eq!(
        tool_error(&declined),
        "issue #1 was left open: the user did not confirm"
    );
    // The state was single use (a destructive tool): asked again, "yes".
    let (key, _, state) = ask_to_close(&server, &arguments).await;
    let closed = server
        .exchange(close_message(arguments.clone(), answer(&key, &state, true)))
        .await;
    let closed = parse(closed.response.as_deref().unwrap());
    assert_valid_response("CallToolResultResponse", &closed);
    let closed = structured(&closed);
    assert_eq!(
        (
            &closed["state"],
            &closed["close_reason"],
            &closed["closed_at"]
        ),
        (&json!("closed"), &json!("fixed"), &json!("<time>"))
    );
    // The same answer again is refused, and nothing closes twice.
    let replayed = server
        .exchange(close_message(arguments.clone(), answer(&key, &state, true)))
        .await;
    let replayed = parse(replayed.response.as_deref().unwrap());
    assert_eq!(replayed["error"]["code"], -32602, "{replayed}");
    let again = call(&server, "close_issue", arguments).await;
    assert_eq!(tool_error(&again), "issue #1 is closed already");
    db.drop_schema().await;
}

#[tokio::test]
async fn a_close_confirmed_for_an_issue_changed_meanwhile_closes_nothing() {
    let db = TestDb::new().await;
    let server = server(&db);
    call(&server, "create_issue", json!({"title": "Flaky test"})).await;
    let arguments = json!({"id": 1, "reason": "fixed"});
    let (key, message, state) = ask_to_close(&server, &arguments).await;
    assert_eq!(message, "Close issue #1 \u{201c}Flaky test\u{201d}?");
    // Another client retitles the issue while the user reads the question.
    sqlx::query("UPDATE issues SET title = 'Flaky test: all of CI is red' WHERE id = 1")
        .execute(&db.pool)
        .await
        .unwrap();
    let confirmed = server
        .exchange(close_message(arguments.clone(), answer(&key, &state, true)))
        .await;
    let confirmed = parse(confirmed.response.as_deref().unwrap());
    assert_valid_response("CallToolResultResponse", &confirmed);
    assert_eq!(
        tool_error(&confirmed),
        "issue #1 changed while the user was deciding (it is now \u{201c}Flaky test: all of CI is red\u{201d}); \
         nothing was changed: call close_issue again to confirm it as it is now"
    );
    let got = call(&server, "get_issue", json!({"id": 1})).await;
    assert_eq!(structured(&got)["state"], "open");

    // Called again, the user is shown the issue as it is now, and that
    // confirmation closes it.
    let (key, message, state) = ask_to_close(&server, &arguments).await;
    assert_eq!(
        message,
        "Close issue #1 \u{201c}Flaky test: all of CI is red\u{201d}?"
    );
    let closed = server
        .exchange(close_message(arguments.clone(), answer(&key, &state, true)))
        .await;
    let closed = parse(closed.response.as_deref().unwrap());
    assert_valid_response("CallToolResultResponse", &closed);
    let closed = structured(&closed);
    assert_eq!(
        (&closed["state"], &closed["title"]),
        (&json!("closed"), &json!("Flaky test: all of CI is red"))
    );
    db.drop_schema().await;
}

#[tokio::test]
async fn a_close_confirmed_for_an_issue_closed_meanwhile_is_already_closed() {
    let db = TestDb::new().await;
    let server = server(&db);
    call(&server, "create_issue", json!({"title": "Docs"})).await;
    let arguments = json!({"id": 1});
    let (key, _, state) = ask_to_close(&server, &arguments).await;
    sqlx::query("UPDATE issues SET state = 'closed' WHERE id = 1")
        .execute(&db.pool)
        .await
        .unwrap();
    let confirmed = server
        .exchange(close_message(arguments, answer(&key, &state, true)))
        .await;
    let confirmed = parse(confirmed.response.as_deref().unwrap());
    assert_valid_response("CallToolResultResponse", &confirmed);
    assert_eq!(tool_error(&confirmed), "issue #1 is closed already");
    db.drop_schema().await;
}

#[tokio::test]
async fn several_servers_in_one_process_keep_to_their_own_database() {
    let (first, second) = (TestDb::new().await, TestDb::new().await);
    let (one, two) = (server(&first), server(&second));
    call(&one, "create_issue", json!({"title": "only in the first"})).await;
    let listed = call(&two, "list_issues", json!({})).await;
    assert_eq!(structured(&listed), json!({"issues": []}));
    let listed = call(&one, "list_issues", json!({})).await;
    assert_eq!(
        structured(&listed)["issues"][0]["title"],
        "only in the first"
    );
    let schemas = (first.schema.clone(), second.schema.clone());
    first.drop_schema().await;
    second.drop_schema().await;
    assert!(!common::schema_exists(&schemas.0).await);
    assert!(!common::schema_exists(&schemas.1).await);
}

#[tokio::test]
async fn the_issue_resource_and_the_triage_prompt_read_the_database() {
    let db = TestDb::new().await;
    let server = server(&db);
    call(
        &server,
        "create_issue",
        json!({"title": "Slow list", "body": "Takes 3 s.", "labels": ["perf"]}),
    )
    .await;
    call(
        &server,
        "comment_on_issue",
        json!({"id": 1, "text": "Index it."}),
    )
    .await;
    let read = server
        .exchange(request(
            1,
            "resources/read",
            json!({"uri": "tracker://issues/1"}),
        ))
        .await;
    let read = parse(read.response.as_deref().unwrap());
    assert_valid_response("ReadResourceResultResponse", &read);
    let text = read["result"]["contents"][0]["text"].as_str().unwrap();
    assert!(
        text.starts_with("# #1 Slow list\n\nopen · opened by local on "),
        "{text}"
    );
    assert!(
        text.ends_with(" · labels: perf\n\nTakes 3 s.\n\n---\n**local** on ")
            || text.contains("\n\n---\n**local** on "),
        "{text}"
    );
    assert!(text.ends_with(":\n\nIndex it."), "{text}");
    let missing = server
        .exchange(request(
            1,
            "resources/read",
            json!({"uri": "tracker://issues/7"}),
        ))
        .await;
    let missing = parse(missing.response.as_deref().unwrap());
    assert_eq!(missing["error"]["code"], -32602, "{missing}");

    call(
        &server,
        "create_issue",
        json!({"title": "Typo", "labels": ["docs"]}),
    )
    .await;
    let list = |uri: &str| {
        let message = request(1, "resources/read", json!({"uri": uri}));
        let server = &server;
        async move {
            let read = parse(server.exchange(message).await.response.as_deref().unwrap());
            assert_valid_response("ReadResourceResultResponse", &read);
            read
        }
    };
    let all = list("tracker://issues").await;
    assert_eq!(
        all["result"]["contents"][0]["text"],
        "# Issues\n\n- #2 Typo (open, docs)\n- #1 Slow list (open, perf)"
    );
    let perf = list("tracker://issues?label=perf&state=open").await;
    assert_eq!(
        perf["result"]["contents"][0]["text"],
        "# Issues\n\n- #1 Slow list (open, perf)"
    );
    let closed = list("tracker://issues?state=closed").await;
    assert_eq!(
        closed["result"]["contents"][0]["text"],
        "# Issues\n\nNo issues."
    );
    let bad = list("tracker://issues?state=done").await;
    assert_eq!(bad["error"]["code"], -32602, "{bad}");
    assert_eq!(
        bad["error"]["message"],
        "Invalid resource URI tracker://issues?state=done: state is `open` or `closed`, not `done`"
    );

    let missing = server
        .exchange(request(
            1,
            "prompts/get",
            json!({"name": "triage", "arguments": {"id": "9"}}),
        ))
        .await;
    let missing = parse(missing.response.as_deref().unwrap());
    assert_valid_response("GetPromptResultResponse", &missing);
    assert_eq!(missing["error"]["code"], -32602, "{missing}");
    let prompt = server
        .exchange(request(
            1,
            "prompts/get",
            json!({"name": "triage", "arguments": {"id": "1"}}),
        ))
        .await;
    let prompt = parse(prompt.response.as_deref().unwrap());
    assert_valid_response("GetPromptResultResponse", &prompt);
    let text = prompt["result"]["messages"][0]["content"]["text"]
        .as_str()
        .unwrap();
    assert!(text.starts_with("Triage this issue"), "{text}");
    assert!(text.contains("# #1 Slow list"), "{text}");
    db.drop_schema().await;
}

#[tokio::test]
async fn an_outage_is_a_clear_tool_error_and_no_secret_is_told_or_logged() {
    let (logs, _guard) = LogCapture::start();
    // Nothing listens on port 1; the password must appear nowhere.
    let url = "postgres://tracker:hunter2-secret@127.0.0.1:1/tracker";
    // The pool's settings, with a shorter wait for a connection (3 s in
    // the server) to keep the test short.
    let pool = tracker::db::pool_options()
        .acquire_timeout(std::time::Duration::from_millis(300))
        .connect_lazy_with(url.parse().unwrap());
    let server = ServerBuilder::new("tracker", "0.1.0")
        .state(pool)
        .build()
        .unwrap();
    let exchange = server
        .exchange(call_tool(1, "create_issue", json!({"title": "x"})))
        .await;
    let frame = exchange.response.unwrap();
    let response = parse(&frame);
    assert_valid_response("CallToolResultResponse", &response);
    assert_eq!(
        response["result"],
        json!({
            "resultType": "complete",
            "content": [{"type": "text", "text": "the issue database is unavailable right now; nothing was changed, try again shortly"}],
            "isError": true,
        })
        .as_object()
        .map(|expected| {
            let mut with_meta = expected.clone();
            if let Some(meta) = response["result"].get("_meta") {
                with_meta.insert("_meta".into(), meta.clone());
            }
            Value::Object(with_meta)
        })
        .unwrap()
    );
    let read = server
        .exchange(request(
            1,
            "resources/read",
            json!({"uri": "tracker://issues/1"}),
        ))
        .await
        .response
        .unwrap();
    assert!(read.contains("the issue database is unavailable"), "{read}");
    let logged = logs.text();
    assert!(
        logged.contains("the issue database is unavailable"),
        "the outage is logged: {logged}"
    );
    for text in [&frame, &read, &logged] {
        assert!(!text.contains("hunter2"), "a secret leaked: {text}");
    }
}

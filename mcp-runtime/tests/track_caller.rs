//! A failed `TestClient` assertion is reported at the test's line, not
//! inside the framework (`#[track_caller]` through the helpers).
#![cfg(feature = "client")]

use std::cell::RefCell;
use std::panic::{self, AssertUnwindSafe};

use mcp_runtime::testing::TestClient;
use mcp_runtime::{ElicitForm, Elicitation, Json, tool};
use serde_json::json;

/// Echoes the text.
#[tool(annotations(read_only))]
fn echo(text: String) -> String {
    text
}

#[derive(serde::Serialize, schemars::JsonSchema)]
struct Sum {
    sum: i64,
}

/// Adds.
#[tool(annotations(read_only))]
fn add(a: i64, b: i64) -> Json<Sum> {
    Json(Sum { sum: a + b })
}

#[derive(serde::Deserialize, schemars::JsonSchema, ElicitForm)]
struct Confirm {
    /// Sure?
    confirm: bool,
}

/// Asks first.
#[tool(annotations(read_only))]
fn ask(#[elicit("Sure?")] answer: Elicitation<Confirm>) -> String {
    format!(
        "{}",
        matches!(answer, Elicitation::Accepted(Confirm { confirm: true }))
    )
}

thread_local! {
    static LOCATION: RefCell<Option<(String, u32)>> = const { RefCell::new(None) };
}

/// Where the panic `check` raises is reported.
fn reported_at(check: impl FnOnce()) -> (String, u32) {
    LOCATION.with(|l| l.borrow_mut().take());
    let outcome = panic::catch_unwind(AssertUnwindSafe(check));
    assert!(outcome.is_err(), "the check did not fail");
    LOCATION
        .with(|l| l.borrow_mut().take())
        .expect("the hook saw the panic")
}

/// Asserts that `$check` fails, and that the failure is reported at the
/// line of this file that says `fails_here!(...)`.
macro_rules! fails_here {
    ($check:expr) => {
        assert_eq!(
            reported_at(|| {
                let _ = $check;
            }),
            (file!().to_owned(), line!())
        )
    };
}

#[test]
fn failed_assertions_point_at_the_test() {
    panic::set_hook(Box::new(|info| {
        let location = info.location().map(|l| (l.file().to_owned(), l.line()));
        LOCATION.with(|l| *l.borrow_mut() = location);
    }));
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut client = TestClient::new().elicitation();
    let mut call = |name: &str, arguments| runtime.block_on(client.call_tool(name, arguments));

    let echoed = call("echo", json!({"text": "hi"}));
    fails_here!(echoed.assert_text("bye"));
    let echoed = call("echo", json!({"text": "hi"}));
    fails_here!(echoed.assert_tool_error("no"));
    let echoed = call("echo", json!({"text": "hi"}));
    fails_here!(echoed.input_required());
    let echoed = call("echo", json!({"text": "hi"}));
    fails_here!(echoed.error());
    let echoed = call("echo", json!({"text": "hi"}));
    fails_here!(echoed.structured::<Sum2>());
    let missing = call("nope", json!({}));
    fails_here!(missing.complete());
    let missing = call("nope", json!({}));
    fails_here!(missing.text());
    let added = call("add", json!({"a": 1, "b": 2}));
    fails_here!(added.structured::<Vec<u8>>());
    let added = call("add", json!({"a": 1, "b": 2}));
    fails_here!(added.assert_error_code(-32602));
    let round = call("ask", json!({})).input_required();
    fails_here!(round.sampling("answer"));
    fails_here!(round.elicitation("other"));
    let _ = panic::take_hook();
}

#[derive(serde::Deserialize, Debug)]
#[allow(dead_code, reason = "only deserialized")]
struct Sum2 {
    total: i64,
}

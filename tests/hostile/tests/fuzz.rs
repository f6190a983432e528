//! A seeded mutation fuzzer over stdio and Streamable HTTP: valid
//! 2026-07-28 requests (every quickstart tool, resources, prompts, both
//! rounds of a multi round-trip call, notifications) are mutated in their
//! structure, their bytes and (on HTTP) their headers, and every answer
//! must be well-formed JSON-RPC 2.0 that conforms to the spec's schema,
//! within 5 s, from a server that neither panics nor answers 5xx (or 429:
//! it runs without a rate limit).
//!
//! 10,000 cases per transport by default; `MCP_FUZZ_CASES=N` for more,
//! `MCP_FUZZ_SEED=S` to repeat a run (the seed is printed either way) and
//! `MCP_FUZZ_SEED=S MCP_FUZZ_CASE=I` to replay case `I` alone, printing
//! what was sent and answered.

mod common;
#[path = "fuzz/corpus.rs"]
mod corpus;
#[path = "fuzz/http.rs"]
mod http;
#[path = "fuzz/judge.rs"]
mod judge;
#[path = "fuzz/mutate.rs"]
mod mutate;
#[path = "fuzz/run.rs"]
mod run;
#[path = "fuzz/stdio.rs"]
mod stdio;

use std::time::Instant;

use run::Settings;

#[test]
fn mutated_requests_over_stdio_get_well_formed_answers() {
    let settings = Settings::from_env();
    let started = Instant::now();
    stdio::run(&settings).report("stdio", &settings, started);
}

#[test]
fn mutated_requests_over_http_get_well_formed_answers() {
    let settings = Settings::from_env();
    let started = Instant::now();
    http::run(&settings).report("http", &settings, started);
}

/// The seeds themselves are valid: each is answered with a result (or,
/// for the few that ask for what is not there, a plain error), so the
/// fuzzer starts from requests that reach the handlers.
#[test]
fn every_seed_is_answered_as_it_should_be_unmutated() {
    let errors = [
        ("tools/list cursor", -32602),
        ("read missing note", -32602),
        ("complete", -32601),
    ];
    for (name, answer, checked) in stdio::unmutated() {
        assert_eq!(checked, Ok(()), "{name}: {answer:?}");
        let Some(answer) = answer else {
            assert!(
                matches!(name, "cancelled" | "progress"),
                "{name} got no answer"
            );
            continue;
        };
        match errors.iter().find(|(error, _)| *error == name) {
            Some((_, code)) => assert_eq!(answer["error"]["code"], *code, "{name}: {answer}"),
            None => assert!(answer.get("result").is_some(), "{name}: {answer}"),
        }
        let text = &answer["result"]["content"][0]["text"];
        match name {
            "confirm_delete round 1" => {
                assert_eq!(answer["result"]["resultType"], "input_required", "{answer}")
            }
            "confirm_delete accepted" => assert_eq!(text, "deleted /tmp/x", "{answer}"),
            "confirm_delete declined" => {
                assert_eq!(text, "kept /tmp/x: the user declined", "{answer}")
            }
            "countdown" => assert_eq!(text, "liftoff", "{answer}"),
            _ => {}
        }
    }
}

/// The judge refuses what a broken server could send, so that the
/// fuzzer's zero counts mean something.
#[test]
fn the_judge_refuses_malformed_answers() {
    let list = |_: &serde_json::Value| Some("tools/list".to_owned());
    let valid = r#"{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","tools":[],"ttlMs":0,"cacheScope":"private"}}"#;
    judge::message(valid.as_bytes(), list).expect("a valid answer");
    let error = r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"bad"}}"#;
    assert!(judge::message(error.as_bytes(), list).is_ok());
    for bad in [
        &b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"x\":\"\xff\"}}"[..],
        b"not json",
        b"[]",
        br#"{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete"}}"#,
        br#"{"jsonrpc":"1.0","id":1,"result":{"resultType":"complete","tools":[],"ttlMs":0,"cacheScope":"private"}}"#,
        br#"{"id":1,"result":{"resultType":"complete","tools":[],"ttlMs":0,"cacheScope":"private"}}"#,
        br#"{"jsonrpc":"2.0","id":1.5,"result":{"resultType":"complete","tools":[],"ttlMs":0,"cacheScope":"private"}}"#,
        br#"{"jsonrpc":"2.0","id":null,"result":{"resultType":"complete","tools":[],"ttlMs":0,"cacheScope":"private"}}"#,
        br#"{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","tools":[],"ttlMs":0,"cacheScope":"private"},"error":{"code":1,"message":""}}"#,
        br#"{"jsonrpc":"2.0","id":1}"#,
        br#"{"jsonrpc":"2.0","id":1,"result":[]}"#,
        br#"{"jsonrpc":"2.0","id":1,"error":{"code":"-32602","message":"bad"}}"#,
        br#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602}}"#,
        br#"{"jsonrpc":"2.0","id":1,"error":{"code":-32020,"message":"a header"},"extra":1}"#,
        br#"{"jsonrpc":"2.0","id":1,"error":{"code":-32022,"message":"no data"}}"#,
        br#"{"jsonrpc":"2.0","method":"notifications/unheard_of"}"#,
        br#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}"#,
        br#"{"jsonrpc":"2.0","id":2,"method":"elicitation/create","params":{}}"#,
    ] {
        assert!(judge::message(bad, list).is_err(), "{}", String::from_utf8_lossy(bad));
    }

    let request = br#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}"#;
    let response = |status: u16, media: &str, body: &str| common::Response {
        status,
        head: format!("HTTP/1.1 {status} X\r\ncontent-type: {media}"),
        body: body.to_owned(),
    };
    let judge = |response: &common::Response| {
        http::judge_status(request, response, &mut run::Tally::default())
    };
    assert!(judge(&response(200, "application/json", valid)).is_ok());
    assert!(judge(&response(400, "application/json", error)).is_ok());
    assert!(judge(&response(415, "text/plain; charset=utf-8", "send JSON")).is_ok());
    let stream = format!(
        "data: {{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{{\"progressToken\":1,\"progress\":1}}}}\n\ndata: {valid}\n\n"
    );
    assert!(judge(&response(200, "text/event-stream", &stream)).is_ok());
    let other_id = valid.replace(r#""id":1"#, r#""id":2"#);
    for bad in [
        response(
            500,
            "application/json",
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"Internal error"}}"#,
        ),
        response(503, "text/plain", "busy"),
        response(429, "text/plain", "slow down"),
        response(302, "text/plain", ""),
        response(202, "application/json", ""),
        response(200, "text/html", valid),
        response(200, "application/json", &other_id),
        response(400, "application/json", valid),
        response(200, "application/json", error),
        response(
            400,
            "application/json",
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"no such method"}}"#,
        ),
        response(400, "text/plain", "bad"),
        response(
            200,
            "text/event-stream",
            &format!("{stream}data: {valid}\n\n"),
        ),
        response(
            200,
            "text/event-stream",
            "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":1,\"progress\":1}}\n\n",
        ),
    ] {
        assert!(judge(&bad).is_err(), "{bad:?}");
    }
}

/// Found by the fuzzer (seed 0xd4acd4423a6d544e, case 5377 of the HTTP
/// run, against mcp-runtime at b31110a): a legacy-era POST without a
/// session whose `params` nest deeper than `serde_json::Value` reads was
/// answered 200 (`-32602`, with the legacy adapter's statuses), where
/// every other sessionless legacy request is refused with 400, as the
/// 2025-11-25 transport says: `legacy/http/post.rs` read the params
/// before it checked for the session.
#[test]
fn a_sessionless_legacy_request_with_unreadable_params_is_a_400() {
    let server = common::Http::start(&[], common::Log::Counted);
    let address = server.address;
    let nested = format!("{}{}", "[".repeat(200), "]".repeat(200));
    for params in ["{}".to_owned(), format!(r#"{{"x":{nested}}}"#)] {
        let body = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{params}}}"#);
        let request = format!(
            "POST /mcp HTTP/1.1\r\nHost: {address}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2025-11-25\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        );
        let response = common::raw(address, request.as_bytes());
        assert_eq!(response.status, 400, "{params}: {response:?}");
    }
}

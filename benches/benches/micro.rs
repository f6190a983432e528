//! Criterion micro-benchmarks of the request path's pieces, in process:
//!
//! ```sh
//! cargo bench -p mcp-bench --bench micro
//! ```
//!
//! `dispatch/*` runs whole requests through the dispatcher (no transport);
//! the others time one step each: parsing the envelope and `_meta`,
//! deserializing tool arguments, serving the 51-tool list, sealing and
//! opening `requestState`, validating HTTP headers, and building the
//! registry of 10,000 tools.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use http::{HeaderMap, HeaderValue};
use mcp_runtime::__private::bench::{HeaderBench, StateBench, build_registry_of, parse_request};
use mcp_runtime::Server;
use serde::Deserialize;
use serde_json::{Map, Value, json};

include!(concat!(env!("OUT_DIR"), "/tools50.rs"));

/// Echoes the text back.
#[mcp_runtime::tool(annotations(read_only))]
fn echo(text: String) -> String {
    text
}

/// Looks a record up in a region; `region` is mirrored into a header.
#[mcp_runtime::tool]
fn lookup(#[arg(header = "Region")] region: String, id: u64) -> String {
    format!("{region}/{id}")
}

fn request(method: &str, mut params: Value) -> String {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}
    });
    json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).to_string()
}

fn server() -> Server {
    mcp_runtime::ServerBuilder::new("bench", "1.0.0")
        .build()
        .expect("the registry builds")
}

fn dispatch(c: &mut Criterion) {
    let server = server();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a runtime");
    let mut group = c.benchmark_group("dispatch");
    for (name, message) in [
        (
            "tools/call echo",
            request(
                "tools/call",
                json!({"name": "echo", "arguments": {"text": "hello"}}),
            ),
        ),
        ("tools/list (51 tools)", request("tools/list", json!({}))),
        ("server/discover", request("server/discover", json!({}))),
    ] {
        // Checked once: a benchmark of an error path would measure nothing.
        let exchange = runtime.block_on(server.exchange(message.clone()));
        let response = exchange.response.expect("a response");
        assert!(
            response.contains("\"resultType\":\"complete\""),
            "{name}: {response}"
        );
        group.bench_function(name, |b| {
            b.iter(|| runtime.block_on(server.exchange(black_box(message.clone()))));
        });
    }
    group.finish();
}

fn envelope(c: &mut Criterion) {
    let server = server();
    let message = request(
        "tools/call",
        json!({"name": "echo", "arguments": {"text": "hello"}}),
    );
    assert!(parse_request(&server, &message));
    c.bench_function("envelope and _meta", |b| {
        b.iter(|| parse_request(&server, black_box(&message)));
    });
}

/// The shape of a typical tool's arguments, as the macro generates them.
#[derive(Deserialize)]
#[allow(dead_code, reason = "only deserialized")]
struct Arguments {
    query: String,
    limit: Option<u32>,
    tags: Vec<String>,
    strict: bool,
    ratio: f64,
}

fn arguments(c: &mut Criterion) {
    let good = r#"{"query":"rust mcp","limit":20,"tags":["a","b","c"],"strict":true,"ratio":0.5}"#;
    let bad = r#"{"query":"rust mcp","limit":20,"tags":["a",7],"strict":true,"ratio":0.5}"#;
    assert!(mcp_runtime::__private::parse_arguments::<Arguments>(good).is_ok());
    assert!(mcp_runtime::__private::parse_arguments::<Arguments>(bad).is_err());
    let mut group = c.benchmark_group("arguments");
    group.bench_function("valid", |b| {
        b.iter(|| mcp_runtime::__private::parse_arguments::<Arguments>(black_box(good)));
    });
    group.bench_function("invalid (with error path)", |b| {
        b.iter(|| mcp_runtime::__private::parse_arguments::<Arguments>(black_box(bad)));
    });
    group.finish();
}

fn request_state(c: &mut Criterion) {
    let arguments = r#"{"path": "/tmp/x"}"#;
    let mut steps = Map::new();
    steps.insert(
        "answer".into(),
        json!({"action": "accept", "content": {"confirm": true}}),
    );
    let bench = StateBench::new("confirm_delete", arguments, steps);
    let state = bench.seal();
    assert!(bench.open(&state, arguments));
    assert!(bench.open(&state, r#"{ "path":"/tmp/x" }"#));
    assert!(!bench.open(&state, r#"{"path": "/etc"}"#));
    let mut group = c.benchmark_group("requestState");
    group.bench_function("seal", |b| b.iter(|| bench.seal()));
    group.bench_function("open", |b| {
        b.iter(|| bench.open(black_box(&state), black_box(arguments)));
    });
    group.finish();
}

fn headers(c: &mut Criterion) {
    let server = server();
    let base = |method: &str| {
        let mut headers = HeaderMap::new();
        headers.insert(
            "mcp-protocol-version",
            HeaderValue::from_static("2026-07-28"),
        );
        headers.insert(
            "mcp-method",
            HeaderValue::from_str(method).expect("a header value"),
        );
        headers
    };
    let echo = HeaderBench::new(
        &server,
        &request(
            "tools/call",
            json!({"name": "echo", "arguments": {"text": "hello"}}),
        ),
    );
    let mut echo_headers = base("tools/call");
    echo_headers.insert("mcp-name", HeaderValue::from_static("echo"));
    let lookup = HeaderBench::new(
        &server,
        &request(
            "tools/call",
            json!({"name": "lookup", "arguments": {"region": "eu-west", "id": 7}}),
        ),
    );
    let mut lookup_headers = base("tools/call");
    lookup_headers.insert("mcp-name", HeaderValue::from_static("lookup"));
    lookup_headers.insert("mcp-param-region", HeaderValue::from_static("eu-west"));
    assert!(echo.check(&echo_headers));
    assert!(lookup.check(&lookup_headers));
    let mut wrong = lookup_headers.clone();
    wrong.insert("mcp-param-region", HeaderValue::from_static("us-east"));
    assert!(!lookup.check(&wrong));
    let mut group = c.benchmark_group("headers");
    group.bench_function("tools/call", |b| {
        b.iter(|| echo.check(black_box(&echo_headers)))
    });
    group.bench_function("tools/call with a mirrored parameter", |b| {
        b.iter(|| lookup.check(black_box(&lookup_headers)));
    });
    group.finish();
}

/// The startup work of a 10,000-tool server: schemas, list pages,
/// `server/discover` (copies of this file's 52 tools under distinct names).
fn registry(c: &mut Criterion) {
    let builder = mcp_runtime::ServerBuilder::new("micro", "0.0.0");
    let mut group = c.benchmark_group("registry build");
    group.sample_size(10);
    group.bench_function("10,000 tools", |b| {
        b.iter_with_large_drop(|| build_registry_of(10_000, &builder));
    });
    group.finish();
}

criterion_group!(
    benches,
    dispatch,
    envelope,
    arguments,
    request_state,
    headers,
    registry
);
criterion_main!(benches);

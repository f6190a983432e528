//! What the tests of every transport and era share: the requests a client
//! of `com.example/ping` sends, the exact answers the server gives, and a
//! server on a loopback port for the HTTP tests.
#![allow(
    dead_code,
    reason = "each test binary uses the helpers its transport and era need"
)]

use std::net::SocketAddr;
use std::time::Duration;

use mcp_runtime::HttpOptions;
use mcp_test_support::{assert_valid_response, meta_with};
use serde_json::{Value, json};

pub(crate) use mcp_extension_example::ID;

/// The server's identity, as every modern result's `_meta` carries it.
pub(crate) fn server_info() -> Value {
    json!({"name": "mcp-extension-example", "version": env!("CARGO_PKG_VERSION")})
}

/// The `_meta` of a modern request from a client that declared the
/// extension, plus the members of `extra` (such as `progressToken`).
pub(crate) fn negotiated_meta(extra: Value) -> Value {
    let mut meta = meta_with(json!({"extensions": {ID: {}}}));
    if let Value::Object(extra) = extra {
        for (key, value) in extra {
            meta[key] = value;
        }
    }
    meta
}

/// A modern request from a client that declared the extension.
pub(crate) fn negotiated(id: impl Into<Value>, method: &str, params: Value) -> String {
    negotiated_with(id, method, params, json!({}))
}

/// A modern request from a client that declared the extension, with more
/// `_meta` members.
pub(crate) fn negotiated_with(
    id: impl Into<Value>,
    method: &str,
    mut params: Value,
    extra_meta: Value,
) -> String {
    params["_meta"] = negotiated_meta(extra_meta);
    mcp_test_support::request(id, method, params)
}

/// A modern request from a client that declared no capabilities at all.
pub(crate) fn plain(id: impl Into<Value>, method: &str, params: Value) -> String {
    mcp_test_support::request(id, method, params)
}

/// A modern result response: `result` plus the server's identity.
pub(crate) fn result(id: impl Into<Value>, mut result: Value) -> Value {
    result["_meta"] = json!({"io.modelcontextprotocol/serverInfo": server_info()});
    json!({"jsonrpc": "2.0", "id": id.into(), "result": result})
}

/// An error response.
pub(crate) fn error(id: impl Into<Value>, error: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id.into(), "error": error})
}

/// The `server/discover` answer: tools (the `pong` tool) and the extension
/// with its settings.
pub(crate) fn discover(id: impl Into<Value>) -> Value {
    result(
        id,
        json!({
            "resultType": "complete",
            "supportedVersions": ["2026-07-28"],
            "capabilities": {"tools": {}, "extensions": {ID: {"maxLength": 64}}},
            "ttlMs": 0,
            "cacheScope": "private",
        }),
    )
}

/// The members of the pong for `message`.
pub(crate) fn pong_members(message: &str) -> Value {
    json!({"resultType": "pong", "echo": message, "length": message.chars().count()})
}

/// `com.example/ping`'s answer to `message`.
pub(crate) fn pong(id: impl Into<Value>, message: &str) -> Value {
    result(id, pong_members(message))
}

/// `pings/stats`' answer.
pub(crate) fn stats(id: impl Into<Value>, pings: u64, cancelled_waits: u64) -> Value {
    result(
        id,
        json!({"resultType": "complete", "pings": pings, "cancelledWaits": cancelled_waits}),
    )
}

/// The `pong` tool's answer to `message`.
pub(crate) fn pong_tool(id: impl Into<Value>, message: &str) -> Value {
    result(
        id,
        json!({
            "resultType": "complete",
            "content": [{"type": "text", "text": format!("pong: {message}")}],
        }),
    )
}

/// `-32021` naming the extension.
pub(crate) fn missing_extension(id: impl Into<Value>) -> Value {
    error(
        id,
        json!({
            "code": -32021,
            "message": "Missing required client capability",
            "data": {"requiredCapabilities": {"extensions": {ID: {}}}},
        }),
    )
}

/// `-32601` for `method`.
pub(crate) fn not_found(id: impl Into<Value>, method: &str) -> Value {
    error(
        id,
        json!({"code": -32601, "message": format!("Method not found: {method}")}),
    )
}

/// `-32602` with `message` (and no data).
pub(crate) fn invalid_params(id: impl Into<Value>, message: &str) -> Value {
    error(id, json!({"code": -32602, "message": message}))
}

/// `-32602` for a message over `maxLength`.
pub(crate) fn too_long(id: impl Into<Value>, length: usize) -> Value {
    error(
        id,
        json!({
            "code": -32602,
            "message": format!(
                "Invalid params: `message` is {length} characters long, more than maxLength (64)"
            ),
            "data": {"maxLength": 64, "length": length},
        }),
    )
}

/// The notifications a ping of `message` sends before its answer, when
/// the request has `progressToken: token` and asks for `info` messages.
pub(crate) fn ping_notifications(token: Value, message: &str) -> [Value; 3] {
    let progress = |step: u32| {
        json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": {
            "progressToken": token, "progress": step, "total": 2
        }})
    };
    let log = json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {
        "level": "info",
        "logger": ID,
        "data": format!("ping of {} character(s)", message.chars().count()),
    }});
    [progress(1), log, progress(2)]
}

/// Validates a response to an extension method: an error by its code, a
/// result as the generic `JSONRPCResultResponse` (the core schema does not
/// know an extension's results, only that a result has a `resultType`).
pub(crate) fn assert_valid_extension_response(response: &Value) {
    assert_valid_response("JSONRPCResultResponse", response);
}

/// `response` as a legacy client sees it: the same as the modern one but
/// for `_meta` (the modern revision's `serverInfo` key), which the legacy
/// revisions leave to the server, so the comparison leaves it out.
pub(crate) fn without_result_meta(mut response: Value) -> Value {
    if let Some(Value::Object(result)) = response.get_mut("result") {
        result.remove("_meta");
    }
    response
}

/// The legacy answer corresponding to the modern `response`: without
/// `resultType: "complete"` (an extension's own type stays) and `_meta`.
pub(crate) fn legacy(response: Value) -> Value {
    let mut response = without_result_meta(response);
    if let Some(result) = response["result"].as_object_mut()
        && result["resultType"] == "complete"
    {
        result.remove("resultType");
    }
    response
}

/// Runs `client` against the example server on a fresh loopback port with
/// the options `options` makes for that address, then shuts the server
/// down and waits for it to drain.
pub(crate) async fn with_http<O, F, Fut>(options: O, client: F)
where
    O: FnOnce(SocketAddr) -> HttpOptions,
    F: FnOnce(SocketAddr) -> Fut,
    Fut: Future<Output = ()>,
{
    let server = mcp_extension_example::server().build().unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let options = options(address).shutdown_grace(Duration::from_millis(500));
    let serve = server.serve_http(listener, options, async {
        let _ = stopped.await;
    });
    let run = async {
        client(address).await;
        let _ = stop.send(());
    };
    let (served, ()) = tokio::join!(tokio::time::timeout(Duration::from_secs(30), serve), run);
    served
        .expect("the server drains and stops")
        .expect("no server error");
}

/// The notification `com.example/wait` sends as it starts, when the
/// request has `progressToken: token`.
pub(crate) fn wait_started(token: Value) -> Value {
    json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": {
        "progressToken": token, "progress": 0
    }})
}

/// The revision a legacy (initialize-handshake) client speaks.
pub(crate) const LEGACY_VERSION: &str = "2025-11-25";

/// A legacy request: no `_meta` is needed, the session carries it all.
pub(crate) fn legacy_request(id: i64, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

/// The answer to a legacy client's `initialize` (id 0): the extension is
/// advertised with its settings under `capabilities.extensions`.
pub(crate) fn legacy_initialize_result() -> Value {
    json!({"jsonrpc": "2.0", "id": 0, "result": {
        "protocolVersion": LEGACY_VERSION,
        "capabilities": {
            "tools": {},
            "extensions": {ID: {"maxLength": 64}},
            "logging": {}
        },
        "serverInfo": server_info()
    }})
}

/// A legacy client with a session open, over stdio or HTTP.
pub(crate) trait LegacyClient {
    /// Sends request `id` and returns its response, validated with the
    /// result against `definition` (errors by the envelope).
    async fn request(&mut self, id: i64, method: &str, params: Value, definition: &str) -> Value;
}

/// What a session that negotiated the extension gets: pongs (`resultType:
/// "pong"` kept), the tool and the stats, each without `_meta`.
pub(crate) async fn assert_pongs_and_the_tool(client: &mut impl LegacyClient) {
    let hi = json!({"message": "hi"});
    let ping = client.request(1, "com.example/ping", hi, "Result").await;
    assert_eq!(without_result_meta(ping), legacy(pong(1, "hi")));
    let params = json!({"name": "pong", "arguments": {"message": "hi"}});
    let tool = client
        .request(2, "tools/call", params, "CallToolResult")
        .await;
    assert_eq!(without_result_meta(tool), legacy(pong_tool(2, "hi")));
    let stats_response = client.request(3, "pings/stats", json!({}), "Result").await;
    assert_eq!(without_result_meta(stats_response), legacy(stats(3, 1, 0)));
}

/// What a session that did not negotiate the extension gets: its methods
/// and its tool refused with `-32021` naming it, `pings/stats` answered
/// anyway, and `-32601` for an unknown method.
pub(crate) async fn assert_refused_without_the_extension(client: &mut impl LegacyClient) {
    let hi = json!({"message": "hi"});
    let ping = client.request(1, "com.example/ping", hi, "Result").await;
    assert_eq!(ping, missing_extension(1));
    let params = json!({"name": "pong", "arguments": {"message": "hi"}});
    let tool = client
        .request(2, "tools/call", params, "CallToolResult")
        .await;
    assert_eq!(tool, missing_extension(2));
    let stats_response = client.request(3, "pings/stats", json!({}), "Result").await;
    assert_eq!(without_result_meta(stats_response), legacy(stats(3, 0, 0)));
    let nope = client
        .request(4, "com.example/nope", json!({}), "Result")
        .await;
    assert_eq!(nope, not_found(4, "com.example/nope"));
}

/// Polls `pings/stats` (ids 2 to 99) until it counts one cancelled wait,
/// and checks the whole answer then.
pub(crate) async fn assert_one_cancelled_legacy_wait(client: &mut impl LegacyClient) {
    for id in 2..100 {
        let response = client.request(id, "pings/stats", json!({}), "Result").await;
        if response["result"]["cancelledWaits"] == 1 {
            assert_eq!(without_result_meta(response), legacy(stats(id, 0, 1)));
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("the wait never saw its cancellation");
}

//! Health probes for orchestrators (`HttpOptions::probes`): liveness while
//! the process serves; readiness while the server can take requests, not
//! once it is shutting down (its requests in flight still finish) nor while
//! its shared backend does not answer. Neither goes through authorization,
//! the `Host` check or the rate limit, and neither says more than its word.
#![cfg(all(feature = "http", feature = "client"))]

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use mcp_runtime::auth::{Authorization, TokenVerifier, VerifyError, VerifyFuture};
use mcp_runtime::plugin::{self, SharedParts};
use mcp_runtime::security::Principal;
use mcp_runtime::{HttpOptions, ServerBuilder, tool};
use mcp_test_support::call_tool;
use mcp_test_support::http::{self, Reply};
use serde_json::{Value, json};
use tokio::sync::oneshot;

/// Answers after `millis` milliseconds.
#[tool]
async fn slow(millis: u64) -> String {
    tokio::time::sleep(Duration::from_millis(millis)).await;
    "done".to_owned()
}

/// Accepts no token: every MCP request is 401.
struct Nobody;

impl TokenVerifier for Nobody {
    fn verify<'a>(&'a self, _: &'a str) -> VerifyFuture<'a> {
        Box::pin(async { Err::<Principal, _>(VerifyError::Signature) })
    }
}

/// A server on a free port, with the probes at `/healthz` and `/readyz`,
/// a backend whose readiness is `backend`, and `extra` options; it stops
/// when `stop` fires.
fn serve(
    backend: Arc<AtomicBool>,
    extra: impl FnOnce(HttpOptions) -> HttpOptions + Send + 'static,
    stop: oneshot::Receiver<()>,
) -> SocketAddr {
    http::serve_in_thread(move |listener| async move {
        let shared = plugin::from_fn(move |setup| {
            setup.shared_state(move |_| {
                let backend = backend.clone();
                Ok(SharedParts::new().ready_when(move || backend.load(Ordering::SeqCst)))
            });
        });
        let server = ServerBuilder::new("probes", "1.0.0")
            .with(shared)
            .build()
            .unwrap();
        let options = extra(HttpOptions::new().probes("/healthz", "/readyz"));
        let stop = async move {
            let _ = stop.await;
        };
        server.serve_http(listener, options, stop).await.unwrap();
    })
}

async fn get(address: SocketAddr, path: &str, headers: &[(String, String)]) -> Reply {
    http::request(address, "GET", path, headers, "").await
}

fn assert_probe(reply: &Reply, status: u16, body: &str) {
    assert_eq!(reply.status.as_u16(), status, "{}", reply.body);
    assert_eq!(reply.body, body);
    assert_eq!(reply.headers["cache-control"], "no-store");
    assert_eq!(reply.headers["content-type"], "text/plain; charset=utf-8");
}

#[tokio::test]
async fn probes_answer_without_authorization_or_a_known_host() {
    let (_stop, stopped) = oneshot::channel();
    let address = serve(
        Arc::new(AtomicBool::new(true)),
        |options| {
            options
                .authorization(
                    Authorization::new("http://127.0.0.1/mcp")
                        .authorization_server("https://auth.example.com")
                        .verifier(Nobody),
                )
                .rate_limit(0.001, 1)
        },
        stopped,
    );
    http::wait_listening(address).await;
    // An orchestrator calls by the pod's address: a Host the MCP endpoint
    // refuses, no token, and more often than the rate limit allows.
    let by_address = [("host".to_owned(), "10.0.0.7:8080".to_owned())];
    for _ in 0..3 {
        assert_probe(&get(address, "/healthz", &by_address).await, 200, "ok");
        assert_probe(&get(address, "/readyz", &by_address).await, 200, "ready");
    }
    // The MCP endpoint itself still checks both.
    let refused = http::request(address, "GET", "/mcp", &by_address, "").await;
    assert_eq!(refused.status.as_u16(), 403, "{}", refused.body);
    let unauthorized = http::post(address, &call_tool(1, "slow", json!({"millis": 1}))).await;
    assert_eq!(unauthorized.status.as_u16(), 401, "{}", unauthorized.body);
    // Only GET and HEAD are probes; other paths stay unknown.
    let posted = http::request(address, "POST", "/readyz", &[], "").await;
    assert_eq!(posted.status.as_u16(), 404);
    let head = http::request(address, "HEAD", "/readyz", &[], "").await;
    assert_eq!((head.status.as_u16(), head.body.as_str()), (200, ""));
}

#[tokio::test]
async fn readiness_follows_the_shared_backend() {
    let backend = Arc::new(AtomicBool::new(true));
    let (_stop, stopped) = oneshot::channel();
    let address = serve(backend.clone(), |options| options, stopped);
    http::wait_listening(address).await;
    assert_probe(&get(address, "/readyz", &[]).await, 200, "ready");
    backend.store(false, Ordering::SeqCst);
    assert_probe(&get(address, "/readyz", &[]).await, 503, "not ready");
    // Alive all the same: restarting it would not bring the backend back.
    assert_probe(&get(address, "/healthz", &[]).await, 200, "ok");
    backend.store(true, Ordering::SeqCst);
    assert_probe(&get(address, "/readyz", &[]).await, 200, "ready");
}

/// A keep-alive connection to `address`.
async fn connection(
    address: SocketAddr,
) -> hyper::client::conn::http1::SendRequest<http_body_util::Full<bytes::Bytes>> {
    let stream = tokio::net::TcpStream::connect(address).await.unwrap();
    let (sender, connection) =
        hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream))
            .await
            .unwrap();
    tokio::spawn(connection);
    sender
}

#[tokio::test]
async fn readiness_flips_first_when_the_server_stops_and_requests_in_flight_finish() {
    let (stop, stopped) = oneshot::channel();
    let delay = |options: HttpOptions| options.drain_delay(Duration::from_millis(800));
    let address = serve(Arc::new(AtomicBool::new(true)), delay, stopped);
    http::wait_listening(address).await;
    let mut probe = connection(address).await;
    let ask = |path: &str| {
        hyper::Request::get(path)
            .header("host", address.to_string())
            .body(http_body_util::Full::new(bytes::Bytes::new()))
            .unwrap()
    };
    assert_eq!(
        probe.send_request(ask("/readyz")).await.unwrap().status(),
        200
    );
    let call = call_tool(1, "slow", json!({"millis": 1500}));
    let in_flight = tokio::spawn(async move { http::post(address, &call).await });
    tokio::time::sleep(Duration::from_millis(300)).await;
    stop.send(()).unwrap();
    tokio::time::sleep(Duration::from_millis(100)).await;
    // Not ready at once; still serving, new connections too, while load
    // balancers notice.
    let draining = probe.send_request(ask("/readyz")).await.unwrap();
    assert_eq!(draining.status(), 503, "not ready once stopping");
    assert_probe(&get(address, "/readyz", &[]).await, 503, "not ready");
    assert_probe(&get(address, "/healthz", &[]).await, 200, "ok");
    // Then no new connection is accepted.
    tokio::time::sleep(Duration::from_millis(1000)).await;
    assert!(tokio::net::TcpStream::connect(address).await.is_err());
    let answered = in_flight.await.unwrap();
    assert_eq!(answered.status.as_u16(), 200, "{}", answered.body);
    let body: Value = serde_json::from_str(&answered.body).unwrap();
    assert_eq!(body["result"]["content"][0]["text"], "done");
}

//! The readiness probe follows Redis: an instance whose Redis does not
//! answer reports itself not ready, so that a load balancer sends its
//! requests elsewhere; with Redis up, it is ready once connected.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use mcp_runtime::{HttpOptions, ServerBuilder};
use mcp_runtime_redis::RedisConfig;
use mcp_test_support::http;
use mcp_test_support::redis::{dead_address, unique_prefix, url};

fn serve(config: RedisConfig) -> SocketAddr {
    http::serve_in_thread(move |listener| async move {
        let server = ServerBuilder::new("probes", "1.0.0")
            .with(config)
            .build()
            .unwrap();
        let options = HttpOptions::new().probes("/healthz", "/readyz");
        let _ = server
            .serve_http(listener, options, std::future::pending())
            .await;
    })
}

/// The readiness probe's status within `wait`, once it is `want`.
async fn readiness(address: SocketAddr, want: u16, wait: Duration) -> u16 {
    let deadline = Instant::now() + wait;
    loop {
        let status = http::request(address, "GET", "/readyz", &[], "")
            .await
            .status
            .as_u16();
        if status == want || Instant::now() > deadline {
            return status;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn an_instance_whose_redis_does_not_answer_is_not_ready() {
    let config = RedisConfig::new(dead_address())
        .key_prefix(unique_prefix("probes-dead"))
        .connect_timeout(Duration::from_millis(100));
    let address = serve(config);
    http::wait_listening(address).await;
    // Not ready, and it stays so: nothing to connect to.
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(readiness(address, 200, Duration::ZERO).await, 503);
    let alive = http::request(address, "GET", "/healthz", &[], "").await;
    assert_eq!((alive.status.as_u16(), alive.body.as_str()), (200, "ok"));
}

#[tokio::test]
async fn an_instance_is_ready_once_connected_to_redis() {
    let address = serve(RedisConfig::new(url()).key_prefix(unique_prefix("probes-up")));
    http::wait_listening(address).await;
    assert_eq!(readiness(address, 200, Duration::from_secs(5)).await, 200);
}

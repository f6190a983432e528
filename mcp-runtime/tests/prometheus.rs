//! The Prometheus endpoint of the `otel` feature, in a process of its own
//! (it sets OpenTelemetry's global providers): it listens on an address of
//! its own, answers `GET /metrics` with the text format, refuses `Host`
//! names that are not loopback on a loopback address, a foreign `Origin`,
//! other paths and other methods, and stops with the telemetry. Python's
//! `prometheus_client` parses a real server's scrape in `tests/otel`.
#![cfg(feature = "otel")]

use std::io::{Read as _, Write as _};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use mcp_runtime::metrics::{self, Refusal};
use mcp_runtime::otel::Otel;

/// Sends `head` (without the blank line) and returns the status and body.
fn get(address: SocketAddr, head: &str) -> (u16, String) {
    let mut stream = TcpStream::connect(address).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    write!(stream, "{head}\r\nConnection: close\r\n\r\n").unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    let status = answer[9..12].parse().unwrap();
    let body = answer.split_once("\r\n\r\n").unwrap().1.to_owned();
    (status, body)
}

#[test]
fn the_endpoint_serves_the_metrics_on_its_own_address_and_refuses_the_rest() {
    let telemetry = Otel::new()
        .without_otlp()
        .prometheus("127.0.0.1:0")
        .install()
        .unwrap();
    let address = telemetry.prometheus_address().unwrap();
    assert!(address.ip().is_loopback() && address.port() != 0);

    let (status, text) = get(address, "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1");
    assert_eq!(status, 200, "{text}");
    let counted = metrics::snapshot().refusals;
    for (refusal, count) in counted {
        let line = format!(
            "mcp_runtime_refusals_total{{http_response_status_code=\"{}\",reason=\"{}\",otel_scope_name=\"mcp-runtime\"}} {count}",
            refusal.status(),
            refusal.reason()
        );
        assert!(text.contains(&line), "no `{line}` in:\n{text}");
    }
    assert_eq!(counted.len(), Refusal::ALL.len());
    for family in [
        "# TYPE mcp_runtime_refusals_total counter",
        "# TYPE mcp_runtime_redis_errors_total counter",
        "# TYPE mcp_runtime_tasks_running gauge",
        "# TYPE mcp_runtime_subscriptions_open gauge",
    ] {
        assert!(text.contains(family), "no `{family}` in:\n{text}");
    }

    let refused = [
        ("GET /metrics HTTP/1.1\r\nHost: evil.example", 403),
        (
            "GET /metrics HTTP/1.1\r\nHost: localhost:9464\r\nOrigin: http://evil.example",
            403,
        ),
        ("GET /other HTTP/1.1\r\nHost: localhost", 404),
        (
            "POST /metrics HTTP/1.1\r\nHost: [::1]\r\nContent-Length: 0",
            405,
        ),
    ];
    for (head, wanted) in refused {
        assert_eq!(get(address, head).0, wanted, "{head}");
    }

    drop(telemetry);
    assert!(
        TcpStream::connect_timeout(&address, Duration::from_secs(2)).is_err(),
        "the endpoint still listens after the telemetry stopped"
    );
}

#[test]
fn a_taken_address_is_an_error_at_startup() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address = taken.local_addr().unwrap();
    let error = Otel::new()
        .without_otlp()
        .prometheus(address.to_string())
        .install()
        .unwrap_err();
    let message = error.to_string();
    assert!(
        message.contains("Prometheus endpoint cannot listen on")
            && message.contains(&address.to_string()),
        "{message}"
    );
}

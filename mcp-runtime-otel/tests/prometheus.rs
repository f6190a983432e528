//! The Prometheus endpoint: it listens on an address of its own, answers `GET /metrics` with the text format, refuses `Host`
//! names that are not loopback on a loopback address, a foreign `Origin`,
//! other paths and other methods, and stops with the telemetry; idle and
//! half-sent sockets from several loopback addresses (Linux routes all of
//! 127/8 to `lo`) neither outlive the head timeout nor keep a scraper out.
//! Python's `prometheus_client` parses a real server's scrape in
//! `tests/otel`.
use std::io::{Read as _, Write as _};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpSocket;

use mcp_runtime::metrics::Refusal;
use mcp_runtime_otel::Otel;

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
    // The export reads the counters of the servers it is given to.
    let server = mcp_runtime::ServerBuilder::new("scraped", "1.0.0")
        .with(&telemetry)
        .build()
        .unwrap();

    let (status, text) = get(address, "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1");
    assert_eq!(status, 200, "{text}");
    let counted = server.metrics().snapshot().refusals;
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
        "# TYPE mcp_runtime_shared_store_errors_total counter",
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

/// A connection to `address` from the loopback address `from`.
async fn connect_from(from: &str, address: SocketAddr) -> tokio::net::TcpStream {
    let socket = TcpSocket::new_v4().unwrap();
    socket.bind(format!("{from}:0").parse().unwrap()).unwrap();
    socket.connect(address).await.unwrap()
}

/// Half a request head: never finished.
const HALF_HEAD: &[u8] = b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ";

/// Whether the server has closed `stream` (end of file, or reset), looking
/// without waiting.
fn closed(stream: &tokio::net::TcpStream) -> bool {
    let mut byte = [0_u8; 1];
    match stream.try_read(&mut byte) {
        Ok(0) => true,
        Ok(_) => false,
        Err(error) => error.kind() != std::io::ErrorKind::WouldBlock,
    }
}

/// Sends a whole scrape (kept alive) on `stream`; its status and body.
async fn scrape(stream: &mut tokio::net::TcpStream) -> (u16, String) {
    stream
        .write_all(b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        .await
        .unwrap();
    let mut answer = Vec::new();
    let mut buffer = [0_u8; 16 * 1024];
    loop {
        let read = stream.read(&mut buffer).await.unwrap();
        assert_ne!(read, 0, "closed before its answer");
        answer.extend_from_slice(&buffer[..read]);
        let text = String::from_utf8_lossy(&answer);
        let Some((head, body)) = text.split_once("\r\n\r\n") else {
            continue;
        };
        let length: usize = (head.lines())
            .find_map(|line| line.strip_prefix("content-length: "))
            .expect("a content-length")
            .parse()
            .unwrap();
        if body.len() == length {
            return (head[9..12].parse().unwrap(), body.to_owned());
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn half_sent_heads_from_a_few_addresses_do_not_keep_a_scraper_out() {
    let telemetry = Otel::new()
        .without_otlp()
        .prometheus("127.0.0.1:0")
        .install()
        .unwrap();
    let address = telemetry.prometheus_address().unwrap();

    // Four addresses, eight half-sent heads each: twice the 16 slots.
    let mut flood = Vec::new();
    for from in ["127.0.0.2", "127.0.0.3", "127.0.0.4", "127.0.0.5"] {
        for _ in 0..8 {
            let mut stream = connect_from(from, address).await;
            stream.write_all(HALF_HEAD).await.unwrap();
            flood.push((from, stream));
        }
    }
    // The pool is full (each address holds its 4 slots); a scrape from
    // 127.0.0.1 is answered at once, in the slot of a biggest holder.
    let started = Instant::now();
    let mut scraper = connect_from("127.0.0.1", address).await;
    let answered = tokio::time::timeout(Duration::from_secs(3), scrape(&mut scraper)).await;
    let (status, body) = answered.expect("the scrape was answered within 3 s, under the flood");
    assert_eq!(status, 200);
    assert!(
        body.contains("# TYPE mcp_runtime_refusals_total counter"),
        "{body}"
    );
    assert!(started.elapsed() < Duration::from_secs(3));

    // Each address's connections past its 4 were closed at once, well
    // before the 5 s head timeout, and one more gave its slot to the
    // scraper.
    let open = |from: &str| {
        (flood.iter())
            .filter(|(source, stream)| *source == from && !closed(stream))
            .count()
    };
    let deadline = Instant::now() + Duration::from_secs(3);
    while flood.iter().filter(|(_, stream)| closed(stream)).count() < 17
        && Instant::now() < deadline
    {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let mut held: Vec<usize> = ["127.0.0.2", "127.0.0.3", "127.0.0.4", "127.0.0.5"]
        .map(open)
        .to_vec();
    held.sort_unstable();
    assert_eq!(held, [3, 4, 4, 4]);
    drop(telemetry);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_without_a_complete_head_within_5_s_is_closed() {
    let telemetry = Otel::new()
        .without_otlp()
        .prometheus("127.0.0.1:0")
        .install()
        .unwrap();
    let address = telemetry.prometheus_address().unwrap();

    let half_sent = async {
        let started = Instant::now();
        let mut stream = connect_from("127.0.0.6", address).await;
        stream.write_all(HALF_HEAD).await.unwrap();
        let mut rest = Vec::new();
        let read = tokio::time::timeout(Duration::from_secs(20), stream.read_to_end(&mut rest));
        let read = read.await.expect("closed within 20 s");
        // Closed without an answer (or reset).
        assert!(read.is_err() || rest.is_empty(), "{rest:?}");
        started.elapsed()
    };
    // Idle after a whole scrape on a kept-alive connection: the same limit.
    let idle = async {
        let mut stream = connect_from("127.0.0.7", address).await;
        assert_eq!(scrape(&mut stream).await.0, 200);
        let started = Instant::now();
        let mut rest = Vec::new();
        let read = tokio::time::timeout(Duration::from_secs(20), stream.read_to_end(&mut rest));
        let read = read.await.expect("closed within 20 s");
        assert!(read.is_err() || rest.is_empty(), "{rest:?}");
        started.elapsed()
    };
    let (half_sent, idle) = tokio::join!(half_sent, idle);
    // A bound check, with slack for a loaded machine: not before about
    // 5 s (the idle limit may start counting a moment before the client
    // has read the answer), and long before the 30 s a connection may last.
    for (what, elapsed) in [("half-sent", half_sent), ("idle", idle)] {
        assert!(
            elapsed >= Duration::from_millis(4500) && elapsed < Duration::from_secs(15),
            "{what} connection closed after {elapsed:?}"
        );
    }
    drop(telemetry);
}

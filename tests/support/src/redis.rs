//! The Redis the shared-state tests run against: `MCP_TEST_REDIS_URL` if
//! set (`.ci/run` sets it, starting a server of its own where the machine
//! has none), else the machine's at `127.0.0.1:6379`.

use std::io::{Read as _, Write as _};
use std::net::TcpStream;
use std::time::Duration;

/// The environment variable naming the tests' Redis.
pub const URL_ENV: &str = "MCP_TEST_REDIS_URL";

/// The Redis URL to test against.
///
/// # Panics
///
/// When neither `MCP_TEST_REDIS_URL` nor `127.0.0.1:6379` answers `PING`:
/// the tests need a real Redis (`.ci/run` provides one).
pub fn url() -> String {
    let url = std::env::var(URL_ENV).unwrap_or_else(|_| "redis://127.0.0.1:6379".to_owned());
    let address = url
        .trim_start_matches("redis://")
        .split('/')
        .next()
        .unwrap_or_default()
        .rsplit('@')
        .next()
        .unwrap_or_default()
        .to_owned();
    assert!(
        answers_ping(&address),
        "the shared-state tests need Redis at {url}: start one (`redis-server --port 6379 --save ''`) or set {URL_ENV}; .ci/run does this by itself"
    );
    url
}

/// Whether a Redis at `address` answers `PING`.
pub fn answers_ping(address: &str) -> bool {
    let Ok(addresses) = std::net::ToSocketAddrs::to_socket_addrs(address) else {
        return false;
    };
    addresses.into_iter().any(|address| {
        let Ok(mut stream) = TcpStream::connect_timeout(&address, Duration::from_secs(1)) else {
            return false;
        };
        let _ = stream.set_read_timeout(Some(Duration::from_secs(1)));
        let mut reply = [0_u8; 7];
        stream.write_all(b"PING\r\n").is_ok()
            && stream.read_exact(&mut reply).is_ok()
            && &reply == b"+PONG\r\n"
    })
}

/// A key prefix no other test (or run) uses.
pub fn unique_prefix(test: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!("mcp-test:{test}:{}:{nanos}:", std::process::id())
}

/// A loopback address where nothing listens (for an unreachable Redis).
pub fn dead_address() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("binds a port");
    let address = listener.local_addr().expect("has an address");
    drop(listener);
    format!("redis://{address}")
}

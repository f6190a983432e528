//! Strict HTTP framing and authority checks: requests a lax reading would
//! serve as if they came from loopback, or would read encoded bodies as
//! plain JSON, are refused with the status the RFCs give.

mod common;

use common::{DISCOVER, Http, Log, discover, post, raw};

fn server() -> Http {
    Http::start(&[], Log::Counted)
}

#[test]
fn a_well_formed_request_is_served() {
    let server = server();
    let response = discover(server.address);
    assert_eq!(response.status, 200, "{response:?}");
}

#[test]
fn a_repeated_missing_or_malformed_host_is_a_400() {
    let server = server();
    let address = server.address;
    let heads = [
        format!("POST /mcp HTTP/1.1\r\nHost: {address}\r\nHost: evil.com"),
        "POST /mcp HTTP/1.1\r\nX-Nothing: here".to_owned(),
        "POST /mcp HTTP/1.1\r\nHost: [[localhost]]".to_owned(),
        "POST /mcp HTTP/1.1\r\nHost: localhost..".to_owned(),
        "POST /mcp HTTP/1.1\r\nHost: localhost:99999999999".to_owned(),
        "POST /mcp HTTP/1.1\r\nHost: [::1".to_owned(),
        "POST /mcp HTTP/1.1\r\nHost: ".to_owned(),
    ];
    for head in heads {
        let response = raw(address, &post(&head, "server/discover", None, DISCOVER));
        assert_eq!(response.status, 400, "{head:?}: {response:?}");
    }
}

#[test]
fn an_absolute_form_target_is_checked_by_its_own_authority() {
    let server = server();
    let address = server.address;
    let head = "POST http://evil.com/mcp HTTP/1.1\r\nHost: localhost";
    let response = raw(address, &post(head, "server/discover", None, DISCOVER));
    assert_eq!(response.status, 403, "{response:?}");
    let head = format!("POST http://{address}/mcp HTTP/1.1\r\nHost: localhost");
    let response = raw(address, &post(&head, "server/discover", None, DISCOVER));
    assert_eq!(response.status, 200, "{response:?}");
}

#[test]
fn a_repeated_or_malformed_origin_is_a_403() {
    let server = server();
    let address = server.address;
    for origins in [
        vec![format!("http://{address}"), "http://evil.com".to_owned()],
        vec!["http://[::1".to_owned()],
        vec!["http://[[::1]]".to_owned()],
        vec!["http://localhost..".to_owned()],
        vec!["http://localhost:99999999999".to_owned()],
    ] {
        let mut head = format!("POST /mcp HTTP/1.1\r\nHost: {address}");
        for origin in &origins {
            head.push_str(&format!("\r\nOrigin: {origin}"));
        }
        let response = raw(address, &post(&head, "server/discover", None, DISCOVER));
        assert_eq!(response.status, 403, "{origins:?}: {response:?}");
        assert!(response.body.contains("Origin not allowed"), "{response:?}");
    }
    let head = format!("POST /mcp HTTP/1.1\r\nHost: {address}\r\nOrigin: http://{address}");
    let response = raw(address, &post(&head, "server/discover", None, DISCOVER));
    assert_eq!(response.status, 200, "{response:?}");
}

/// `DISCOVER` in one chunk.
fn chunked(head: &str) -> Vec<u8> {
    format!(
        "{head}\r\nContent-Type: application/json\r\nAccept: application/json\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: server/discover\r\nConnection: close\r\n\r\n{:x}\r\n{DISCOVER}\r\n0\r\n\r\n",
        DISCOVER.len()
    )
    .into_bytes()
}

#[test]
fn a_body_in_a_transfer_coding_besides_chunked_is_a_501() {
    let server = server();
    let address = server.address;
    let plain = format!("POST /mcp HTTP/1.1\r\nHost: {address}\r\nTransfer-Encoding: chunked");
    assert_eq!(raw(address, &chunked(&plain)).status, 200);
    for coding in ["gzip, chunked", "deflate,chunked"] {
        let head = format!("POST /mcp HTTP/1.1\r\nHost: {address}\r\nTransfer-Encoding: {coding}");
        let response = raw(address, &chunked(&head));
        assert_eq!(response.status, 501, "{coding}: {response:?}");
    }
}

#[test]
fn a_content_coded_body_is_a_415_that_says_identity() {
    let server = server();
    let address = server.address;
    for coding in ["gzip", "br", "identity, gzip"] {
        let head = format!("POST /mcp HTTP/1.1\r\nHost: {address}\r\nContent-Encoding: {coding}");
        let response = raw(address, &post(&head, "server/discover", None, DISCOVER));
        assert_eq!(response.status, 415, "{coding}: {response:?}");
        assert_eq!(response.header("accept-encoding"), Some("identity"));
    }
    let head = format!("POST /mcp HTTP/1.1\r\nHost: {address}\r\nContent-Encoding: identity");
    let response = raw(address, &post(&head, "server/discover", None, DISCOVER));
    assert_eq!(response.status, 200, "{response:?}");
}

//! A small HTTP client for tests of the Streamable HTTP transport: exact
//! control over headers and bodies, and incremental reading of SSE streams.

use std::net::SocketAddr;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt as _, Full};
use hyper::body::Incoming;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use serde_json::Value;
use tokio::io::AsyncWriteExt as _;
use tokio::net::TcpStream;

use crate::parse;

const PATIENCE: Duration = Duration::from_secs(10);

/// A finished response.
#[derive(Debug)]
pub struct Reply {
    /// The status.
    pub status: StatusCode,
    /// The headers.
    pub headers: hyper::HeaderMap,
    /// The whole body as text.
    pub body: String,
}

impl Reply {
    /// A header's value.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// The body as JSON.
    pub fn json(&self) -> Value {
        parse(&self.body)
    }

    /// The JSON-RPC messages of an SSE body, in order.
    pub fn events(&self) -> Vec<Value> {
        sse_messages(&self.body)
    }
}

/// The JSON-RPC messages carried by `data:` lines of an SSE body.
pub fn sse_messages(body: &str) -> Vec<Value> {
    body.split("\n\n")
        .filter_map(|event| {
            let data: Vec<&str> = event
                .lines()
                .filter_map(|line| line.strip_prefix("data:"))
                .map(str::trim_start)
                .collect();
            (!data.is_empty()).then(|| parse(&data.join("\n")))
        })
        .collect()
}

/// The headers a conforming client sends with `message` (a JSON-RPC
/// request): content type, accept, protocol version, method and name.
pub fn mcp_headers(message: &str) -> Vec<(String, String)> {
    let value: Value = serde_json::from_str(message).unwrap_or_default();
    let mut headers = vec![
        ("content-type".to_owned(), "application/json".to_owned()),
        (
            "accept".to_owned(),
            "application/json, text/event-stream".to_owned(),
        ),
    ];
    if let Some(version) =
        value["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"].as_str()
    {
        headers.push(("mcp-protocol-version".to_owned(), version.to_owned()));
    }
    if let Some(method) = value["method"].as_str() {
        headers.push(("mcp-method".to_owned(), method.to_owned()));
        let name = match method {
            "tools/call" | "prompts/get" => value["params"]["name"].as_str(),
            "resources/read" => value["params"]["uri"].as_str(),
            // The Tasks extension's methods name their task.
            "tasks/get" | "tasks/update" | "tasks/cancel" => value["params"]["taskId"].as_str(),
            _ => None,
        };
        if let Some(name) = name {
            headers.push(("mcp-name".to_owned(), name.to_owned()));
        }
    }
    headers
}

/// Headers to replace (`Some`) or remove (`None`) in a request, by name
/// in any case.
pub type Overrides<'a> = &'a [(&'a str, Option<&'a str>)];

/// The headers a conforming client sends with `message`, changed by
/// `overrides` in order: each removes every header of its name, then adds
/// its value if it has one.
pub fn mcp_headers_with(message: &str, overrides: Overrides<'_>) -> Vec<(String, String)> {
    let mut headers = mcp_headers(message);
    for (name, value) in overrides {
        headers.retain(|(n, _)| !n.eq_ignore_ascii_case(name));
        if let Some(value) = value {
            headers.push(((*name).to_owned(), (*value).to_owned()));
        }
    }
    headers
}

/// Waits (up to 5 s) until something listens on `address`, a port a child
/// process was told to bind. A connection to itself does not count: with
/// nothing listening yet, a connect whose ephemeral source port happens to
/// be `address`'s own port "succeeds" (TCP simultaneous open) and then
/// holds the port the child was about to bind.
///
/// # Panics
/// When nothing listens within 5 s.
pub async fn wait_listening(address: SocketAddr) {
    for _ in 0..200 {
        if let Ok(stream) = TcpStream::connect(address).await
            && stream.local_addr().ok() != Some(address)
        {
            return;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("nothing listens on {address}");
}

/// Sends one request on a fresh connection and returns the response head;
/// the body can then be read whole or event by event.
pub async fn send(
    address: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(String, String)],
    body: impl Into<Bytes>,
) -> Response<Incoming> {
    let stream = TcpStream::connect(address).await.expect("connects");
    let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .expect("HTTP handshake");
    tokio::spawn(connection);
    let mut request = Request::builder().method(method).uri(path);
    let mut has_host = false;
    for (name, value) in headers {
        has_host |= name.eq_ignore_ascii_case("host");
        request = request.header(name.as_str(), value.as_str());
    }
    if !has_host {
        request = request.header("host", address.to_string());
    }
    let request = request
        .body(Full::new(body.into()))
        .expect("request builds");
    tokio::time::timeout(PATIENCE, sender.send_request(request))
        .await
        .expect("a response head in time")
        .expect("the server answers")
}

/// Sends one request and reads the whole response.
pub async fn request(
    address: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(String, String)],
    body: impl Into<Bytes>,
) -> Reply {
    let response = send(address, method, path, headers, body).await;
    let status = response.status();
    let headers = response.headers().clone();
    let body = tokio::time::timeout(PATIENCE, response.into_body().collect())
        .await
        .expect("the whole body in time")
        .expect("the body reads")
        .to_bytes();
    Reply {
        status,
        headers,
        body: String::from_utf8(body.to_vec()).expect("UTF-8 body"),
    }
}

/// POSTs a JSON-RPC message to `/mcp` with the headers a conforming client
/// sends.
pub async fn post(address: SocketAddr, message: &str) -> Reply {
    request(
        address,
        "POST",
        "/mcp",
        &mcp_headers(message),
        message.to_owned(),
    )
    .await
}

/// POSTs a JSON-RPC message to `/mcp` with the headers a conforming client
/// sends, changed by `overrides`.
pub async fn post_with(address: SocketAddr, message: &str, overrides: Overrides<'_>) -> Reply {
    let headers = mcp_headers_with(message, overrides);
    request(address, "POST", "/mcp", &headers, message.to_owned()).await
}

/// POSTs `message` to `/mcp` on a raw connection (the head, with the
/// headers a conforming client sends, then the body), waits `after`, and
/// drops the connection without reading anything: a client that hangs up
/// on its request in flight.
pub async fn send_then_drop(address: SocketAddr, message: &str, after: Duration) {
    let mut head = format!(
        "POST /mcp HTTP/1.1\r\nhost: {address}\r\ncontent-length: {}\r\n",
        message.len()
    );
    for (name, value) in mcp_headers(message) {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    let mut socket = TcpStream::connect(address).await.expect("connects");
    socket
        .write_all(head.as_bytes())
        .await
        .expect("the head is sent");
    socket
        .write_all(message.as_bytes())
        .await
        .expect("the body is sent");
    tokio::time::sleep(after).await;
    drop(socket);
}

/// Reads SSE events from a streaming response as they arrive.
#[derive(Debug)]
pub struct EventReader {
    body: Incoming,
    buffer: String,
}

impl EventReader {
    /// Reads the body of `response` event by event.
    pub fn new(response: Response<Incoming>) -> Self {
        EventReader {
            body: response.into_body(),
            buffer: String::new(),
        }
    }

    /// The next event's raw text (comments included), or `None` at the end.
    pub async fn next_raw(&mut self) -> Option<String> {
        loop {
            if let Some(end) = self.buffer.find("\n\n") {
                let event = self.buffer[..end].to_owned();
                self.buffer.drain(..end + 2);
                return Some(event);
            }
            let frame = tokio::time::timeout(PATIENCE, self.body.frame())
                .await
                .expect("an event in time")?
                .expect("the stream reads");
            if let Ok(data) = frame.into_data() {
                self.buffer
                    .push_str(std::str::from_utf8(&data).expect("UTF-8 events"));
            }
        }
    }

    /// The next JSON-RPC message, skipping comments, or `None` at the end.
    pub async fn next(&mut self) -> Option<Value> {
        loop {
            let event = self.next_raw().await?;
            if let Some(message) = sse_messages(&format!("{event}\n\n")).pop() {
                return Some(message);
            }
        }
    }
}

/// Runs `serve` on a listener bound to a free loopback port, in a thread
/// of its own with its own runtime (so that a test's runtime is free to be
/// the client), and returns the address.
pub fn serve_in_thread<F, Fut>(serve: F) -> SocketAddr
where
    F: FnOnce(tokio::net::TcpListener) -> Fut + Send + 'static,
    Fut: std::future::Future<Output = ()>,
{
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap();
    listener.set_nonblocking(true).unwrap();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async move {
            serve(tokio::net::TcpListener::from_std(listener).unwrap()).await;
        });
    });
    address
}

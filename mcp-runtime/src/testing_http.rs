//! A server under test on real Streamable HTTP: what only the HTTP
//! transport does (authorization's `401` and `403` with their
//! `WWW-Authenticate` challenges, the metadata endpoints, headers) is
//! tested through the same [`TestClient`] as everything else.

use std::net::SocketAddr;

use tokio::sync::oneshot;

use super::TestClient;
use crate::client::Remote;
use crate::server::Server;
use crate::transport::http::HttpOptions;

/// A [`Server`] served over HTTP on a free loopback port, in a thread of
/// its own (with its own runtime, so that the test's runtime is free to
/// be the client), until it is dropped. Made by [`serve_http`].
#[derive(Debug)]
pub struct HttpTestServer {
    address: SocketAddr,
    stop: Option<oneshot::Sender<()>>,
}

/// Serves `server` over Streamable HTTP on `127.0.0.1` at a free port.
/// `options` is given the address, for the settings that name it (the
/// resource URI of [`Authorization`](crate::auth::Authorization)).
///
/// ```rust,standalone_crate
/// use mcp_runtime::testing::serve_http;
/// use mcp_runtime::{HttpOptions, ServerBuilder};
///
/// /// Says hello.
/// #[mcp_runtime::tool]
/// fn hello() -> &'static str {
///     "hello"
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let server = ServerBuilder::new("hello", "1.0.0").build().unwrap();
/// let served = serve_http(server, |_address| HttpOptions::new());
/// let mut client = served.client();
/// client.call_tool("hello", serde_json::json!({})).await.assert_text("hello");
/// # }
/// ```
///
/// # Panics
///
/// If no loopback port can be bound, or the options do not start a server
/// (a configuration error, reported at startup as
/// [`serve_http`](Server::serve_http) does).
pub fn serve_http(
    server: Server,
    options: impl FnOnce(SocketAddr) -> HttpOptions,
) -> HttpTestServer {
    let listener = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap_or_else(|error| panic!("cannot bind a loopback port: {error}"));
    let address = listener
        .local_addr()
        .unwrap_or_else(|error| panic!("the bound port has no address: {error}"));
    let options = options(address);
    let (stop, stopped) = oneshot::channel::<()>();
    let (started, starting) = std::sync::mpsc::channel::<std::io::Result<()>>();
    std::thread::spawn(move || {
        if let Err(error) = serve_until(server, listener, options, stopped, &started) {
            // Told to the test while it waits for the start; later, the
            // thread just ends.
            let _ = started.send(Err(error));
        }
    });
    match starting.recv() {
        Ok(Ok(())) => {}
        Ok(Err(error)) => panic!("the server does not start: {error}"),
        Err(_) => panic!("the server's thread ended before it started"),
    }
    HttpTestServer {
        address,
        stop: Some(stop),
    }
}

/// Serves on `listener` in a runtime of this thread until `stopped`,
/// telling `started` once the listener is taken (or why it is not).
fn serve_until(
    server: Server,
    listener: std::net::TcpListener,
    options: HttpOptions,
    stopped: oneshot::Receiver<()>,
    started: &std::sync::mpsc::Sender<std::io::Result<()>>,
) -> std::io::Result<()> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async move {
        listener.set_nonblocking(true)?;
        let listener = tokio::net::TcpListener::from_std(listener)?;
        // The options are checked before the first connection is
        // accepted: an error comes back to the test at once.
        let endpoint = server.endpoint(options)?;
        let _ = started.send(Ok(()));
        crate::transport::http::server::serve_on(listener, endpoint, async {
            let _ = stopped.await;
        })
        .await
    })
}

impl HttpTestServer {
    /// Where it listens.
    pub fn address(&self) -> SocketAddr {
        self.address
    }

    /// Its MCP endpoint, `http://127.0.0.1:<port>/mcp`.
    pub fn url(&self) -> String {
        format!("http://{}/mcp", self.address)
    }

    /// A client of its MCP endpoint, sending no credentials.
    ///
    /// # Panics
    ///
    /// Never for the URL this server has.
    pub fn client(&self) -> TestClient<Remote> {
        let remote = Remote::new(&self.url())
            .unwrap_or_else(|error| panic!("the test server's URL is refused: {error}"));
        TestClient::with_transport(remote)
    }

    /// A client sending `Authorization: Bearer <token>` with every request.
    pub fn client_with_token(&self, token: &str) -> TestClient<Remote> {
        let remote = Remote::new(&self.url())
            .unwrap_or_else(|error| panic!("the test server's URL is refused: {error}"))
            .header("Authorization", &format!("Bearer {token}"));
        TestClient::with_transport(remote)
    }
}

impl Drop for HttpTestServer {
    /// Stops the server. Its thread is not waited for: it drains the
    /// connections still open, which a test need not wait on.
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

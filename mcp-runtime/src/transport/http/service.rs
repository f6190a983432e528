//! The MCP endpoint as a `tower::Service`, to mount in an axum `Router` (or
//! any tower stack) next to your own routes and behind your own middleware.
//!
//! Handlers need not be `Send`, so they run on this service's worker threads
//! (each a single-threaded runtime); the service itself is `Send + Sync`
//! and its futures are `Send`, as routers require.

use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll};

use bytes::Bytes;
use http::{Request, Response};
use http_body::Body;
use http_body_util::BodyExt as _;
use http_body_util::combinators::UnsyncBoxBody;
use tokio::sync::{mpsc, oneshot};
use tokio::task::LocalSet;

use super::body::McpBody;
use super::endpoint::Endpoint;
use super::pipeline::{self, BoxError};
use super::respond;

type Job = (
    Request<UnsyncBoxBody<Bytes, BoxError>>,
    oneshot::Sender<Response<McpBody>>,
);

/// The client's address, for rate limiting, the per-client cap on requests
/// in progress, and handlers. Insert it as a request extension in front of
/// [`McpService`] (for example from axum's `ConnectInfo`); without it,
/// both per-client limits are off.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PeerAddr(pub SocketAddr);

/// The MCP endpoint as a `Send` tower service. Mount it at your MCP path;
/// it does not check the path itself.
#[derive(Clone)]
pub struct McpService {
    workers: Arc<[mpsc::UnboundedSender<Job>]>,
    next: Arc<AtomicUsize>,
}

impl std::fmt::Debug for McpService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpService")
            .field("workers", &self.workers.len())
            .finish_non_exhaustive()
    }
}

impl McpService {
    /// The endpoint as a service, served by `options.workers` threads
    /// (default: one per core) that live as long as the service.
    pub(crate) fn new(endpoint: Endpoint) -> std::io::Result<McpService> {
        let workers = match endpoint.options.workers {
            0 => std::thread::available_parallelism().map_or(1, usize::from),
            n => n,
        };
        let endpoint = Arc::new(endpoint.embedded());
        let mut senders = Vec::with_capacity(workers);
        for index in 0..workers {
            let (sender, jobs) = mpsc::unbounded_channel();
            let endpoint = endpoint.clone();
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()?;
            std::thread::Builder::new()
                .name(format!("mcp-service-{index}"))
                .spawn(move || LocalSet::new().block_on(&runtime, work(jobs, endpoint)))?;
            senders.push(sender);
        }
        Ok(McpService {
            workers: senders.into(),
            next: Arc::new(AtomicUsize::new(0)),
        })
    }
}

/// Runs jobs until the service (every sender) is dropped.
async fn work(mut jobs: mpsc::UnboundedReceiver<Job>, endpoint: Arc<Endpoint>) {
    while let Some((request, mut reply)) = jobs.recv().await {
        let endpoint = endpoint.clone();
        tokio::task::spawn_local(async move {
            let peer = request.extensions().get::<PeerAddr>().map(|p| p.0);
            let client = match peer.map(|peer| endpoint.clients.request(peer.ip())) {
                Some(Err(_)) => {
                    let _ = reply.send(respond::client_busy(endpoint.metrics()));
                    return;
                }
                Some(Ok(client)) => Some(client),
                None => None,
            };
            let handle = pipeline::handle(endpoint, request, peer);
            tokio::select! {
                response = handle => {
                    let response = match client {
                        Some(client) => response.map(|body| body.holding(client)),
                        None => response,
                    };
                    let _ = reply.send(response);
                }
                // The caller gave up (the client disconnected): dropping
                // the pipeline cancels the handler.
                () = reply.closed() => {}
            }
        });
    }
}

impl<B> tower_service::Service<Request<B>> for McpService
where
    B: Body<Data = Bytes> + Send + 'static,
    B::Error: Into<BoxError>,
{
    type Response = Response<McpBody>;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Response<McpBody>, Infallible>> + Send>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        let index = self.next.fetch_add(1, Ordering::Relaxed) % self.workers.len();
        let worker = self.workers[index].clone();
        let request = request.map(|body| body.map_err(Into::into).boxed_unsync());
        Box::pin(async move {
            let (reply, response) = oneshot::channel();
            if worker.send((request, reply)).is_err() {
                return Ok(unavailable());
            }
            Ok(response.await.unwrap_or_else(|_| unavailable()))
        })
    }
}

/// The worker is gone (it panicked): the service cannot answer.
fn unavailable() -> Response<McpBody> {
    let mut response = Response::new(McpBody::full(Bytes::from_static(
        b"MCP service unavailable",
    )));
    *response.status_mut() = http::StatusCode::SERVICE_UNAVAILABLE;
    response
}

//! Listening: worker threads, each with a single-threaded runtime, accepting
//! from one socket (with one worker, the calling thread serves); graceful
//! shutdown on SIGINT/SIGTERM.
//!
//! One runtime per core keeps each request on the thread that accepted it,
//! which is what lets handlers be `!Send`, and avoids cross-thread wake-ups.

use std::convert::Infallible;
use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;

use futures_util::FutureExt as _;
use futures_util::future::Either;
use http::{Request, Response};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::LocalSet;

use super::body::McpBody;
use super::connections::{Activity, Connections, Tracked};
use super::endpoint::Endpoint;
use super::socket::Socket;
use super::{pipeline, respond};
use crate::diagnostics::REFUSALS;
use crate::transport::signals::ShutdownSignals;

/// What the HTTP server does once asked to stop.
const DRAINING: &str = "no new connections, draining requests in flight";

/// Serves Streamable HTTP on the endpoint's address until SIGINT or
/// SIGTERM, then stops accepting, closes subscriptions and lets requests in
/// flight finish (up to the shutdown grace period). Blocks the calling
/// thread; runs its own runtimes (one per available core, on worker
/// threads; with a single core, on the calling thread).
///
/// `listening` is told the bound address and the endpoint's path once the
/// server is about to serve.
pub(crate) fn run(endpoint: Endpoint, listening: impl FnOnce(SocketAddr, &str)) -> io::Result<()> {
    let signals = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    run_on(&signals, endpoint, listening)
}

/// [`run`] with `signals` as the calling thread's runtime: the one `run()`
/// ran the start-up hook on, so that what the hook spawned (a pool's
/// maintenance) keeps running while the workers serve.
pub(crate) fn run_on(
    signals: &tokio::runtime::Runtime,
    endpoint: Endpoint,
    listening: impl FnOnce(SocketAddr, &str),
) -> io::Result<()> {
    let options = &endpoint.options;
    let listener = std::net::TcpListener::bind(options.bind)?;
    listener.set_nonblocking(true)?;
    let address = listener.local_addr()?;
    warn_if_exposed(address);
    warn_if_resource_elsewhere(options, address);
    let workers = match options.workers {
        0 => std::thread::available_parallelism().map_or(1, usize::from),
        n => n,
    };
    let endpoint = Arc::new(endpoint);
    // The signal handlers are installed before anything is served (and
    // before the line that says so): a SIGTERM sent as soon as the server
    // answers must drain it, not kill it.
    let shutdown = {
        let _context = signals.enter();
        ShutdownSignals::install()?
    };
    tracing::info!(%address, path = %endpoint.options.path, "serving MCP over HTTP");
    listening(address, &endpoint.options.path);
    if workers == 1 {
        // One worker: the calling thread serves and watches the signals
        // itself, so the process has a single thread (which also spares the
        // kernel the file reference counting it does on every socket call
        // of a multi-threaded process).
        return serve(signals, listener, endpoint, Some(shutdown));
    }
    let threads = (0..workers)
        .map(|index| {
            let (listener, endpoint) = (listener.try_clone()?, endpoint.clone());
            std::thread::Builder::new()
                .name(format!("mcp-http-{index}"))
                .spawn(move || worker(listener, endpoint))
        })
        .collect::<io::Result<Vec<_>>>()?;
    signals.block_on(async {
        shutdown.received(DRAINING).await;
        endpoint.stop().await;
    });
    for thread in threads {
        if let Ok(Err(error)) = thread.join() {
            tracing::warn!(%error, "HTTP worker ended with an error");
        }
    }
    Ok(())
}

/// Serves Streamable HTTP on `listener` from the current thread until
/// `shutdown` completes, then drains like [`run`].
pub(crate) async fn serve_on(
    listener: TcpListener,
    endpoint: Endpoint,
    shutdown: impl Future<Output = ()>,
) -> io::Result<()> {
    warn_if_resource_elsewhere(&endpoint.options, listener.local_addr()?);
    let endpoint = Arc::new(endpoint);
    let stopping = endpoint.clone();
    LocalSet::new()
        .run_until(async move {
            let accepting = spawn_accept_loop(listener, endpoint);
            tokio::select! {
                result = accepting => result,
                () = async { shutdown.await; stopping.stop().await; std::future::pending().await } => Ok(()),
            }
        })
        .await
}

fn worker(listener: std::net::TcpListener, endpoint: Arc<Endpoint>) -> io::Result<()> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    serve(&runtime, listener, endpoint, None)
}

/// Serves `listener` on `runtime` until shutdown; with `signals`, this
/// thread also turns SIGINT/SIGTERM into that shutdown.
fn serve(
    runtime: &tokio::runtime::Runtime,
    listener: std::net::TcpListener,
    endpoint: Arc<Endpoint>,
    signals: Option<ShutdownSignals>,
) -> io::Result<()> {
    LocalSet::new().block_on(runtime, async move {
        let listener = TcpListener::from_std(listener)?;
        if let Some(signals) = signals {
            let stopping = endpoint.clone();
            tokio::task::spawn_local(async move {
                signals.received(DRAINING).await;
                stopping.stop().await;
            });
        }
        spawn_accept_loop(listener, endpoint).await
    })
}

/// Runs [`accept_loop`] as a task of the current `LocalSet`. The future a
/// `LocalSet` runs until is polled again whenever any of its tasks wakes,
/// that is for every request: a join handle costs little to poll, the
/// accept loop's `select!` hundreds of instructions.
async fn spawn_accept_loop(listener: TcpListener, endpoint: Arc<Endpoint>) -> io::Result<()> {
    tokio::task::spawn_local(accept_loop(listener, endpoint))
        .await
        .unwrap_or_else(|failed| Err(io::Error::other(failed)))
}

/// Accepts connections until shutdown, then waits (up to the grace period)
/// for the connections to finish what they are doing.
async fn accept_loop(listener: TcpListener, endpoint: Arc<Endpoint>) -> io::Result<()> {
    // The head timeout and graceful shutdown are ours (see `connections`),
    // not hyper's: hyper gets no timer, which also keeps it from applying
    // its own default head timeout.
    let connections = Connections::start(endpoint.options.header_timeout);
    let mut http = http1::Builder::new();
    http.keep_alive(true)
        // hyper queues an answer's head and body as they are; `Socket`
        // joins them into one `write` through a buffer the thread shares
        // (see there for why neither of hyper's own choices).
        .writev(true);
    loop {
        tokio::select! {
            () = endpoint.shutdown().cancelled() => break,
            accepted = listener.accept() => {
                let (stream, peer) = match accepted {
                    Ok(accepted) => accepted,
                    Err(error) => {
                        // Out of file descriptors and the like: back off
                        // rather than spin.
                        tracing::warn!(%error, "accept failed");
                        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                        continue;
                    }
                };
                let client = match endpoint.clients.connect(peer.ip()) {
                    Ok(client) => client,
                    Err(_) => {
                        refuse_connection(stream, peer, endpoint.metrics());
                        continue;
                    }
                };
                let _ = stream.set_nodelay(true);
                let activity = connections.connection(Some(client));
                let service = service(endpoint.clone(), activity.clone(), peer);
                let connection = http.serve_connection(Socket::new(stream), service);
                let serving = activity.clone().serve(connection).map(move |served| {
                    if let Err(error) = served {
                        tracing::debug!(%error, %peer, "connection ended with an error");
                    }
                });
                let task = tokio::task::spawn_local(serving);
                connections.watch(&activity, task.abort_handle());
            }
        }
    }
    // Closed now, not when the drain ends: a client connecting meanwhile
    // is refused at once (and tries another instance) rather than left in
    // the backlog until the process exits.
    drop(listener);
    let grace = endpoint.options.shutdown_grace;
    if tokio::time::timeout(grace, connections.drain())
        .await
        .is_err()
    {
        tracing::warn!(
            ?grace,
            "requests still running after the shutdown grace period were dropped"
        );
    }
    Ok(())
}

/// What hyper calls for each request of the connection `activity` tracks:
/// the pipeline, unless the client already has as many requests in
/// progress as one client may.
fn service(
    endpoint: Arc<Endpoint>,
    activity: Rc<Activity>,
    peer: SocketAddr,
) -> impl hyper::service::Service<
    Request<Incoming>,
    Response = Response<Tracked<McpBody>>,
    Error = Infallible,
> {
    service_fn(move |request| {
        let request_in_progress = activity.begin();
        // Combinators, not an `async` block: one would keep a copy of the
        // request next to the pipeline's, and hyper moves this future
        // (each byte of it) into its task for every request.
        let answering = match request_in_progress.admitted() {
            true => Either::Left(pipeline::handle(endpoint.clone(), request, Some(peer))),
            false => {
                REFUSALS.client.note(|suppressed| {
                    tracing::warn!(%peer, suppressed, "refused a request: its client has as many in progress as one client may");
                });
                Either::Right(std::future::ready(respond::client_busy(endpoint.metrics())))
            }
        };
        answering.map(move |response| {
            Ok::<_, Infallible>(response.map(|body| Tracked {
                body,
                _request: request_in_progress,
            }))
        })
    })
}

/// Answers a connection past its client's cap with a 429 and closes it,
/// without reading what it sent. What it sent is drained for a moment
/// first (at most 64 KiB, for at most 200 ms), so that the close does not
/// reset the answer away before the client has read it, but not for long:
/// each refused connection is a file descriptor until then.
fn refuse_connection(mut stream: TcpStream, peer: SocketAddr, metrics: &crate::metrics::Metrics) {
    metrics.refused(crate::metrics::Refusal::Connections);
    REFUSALS.client.note(|suppressed| {
        tracing::warn!(%peer, suppressed, "refused a connection: its client has as many open as one client may");
    });
    tokio::task::spawn_local(async move {
        let answer = async {
            stream.write_all(respond::TOO_MANY_CONNECTIONS).await?;
            stream.shutdown().await?;
            let mut sink = [0; 4096];
            let mut drained = 0;
            while drained < 64 * 1024 {
                match stream.read(&mut sink).await? {
                    0 => break,
                    read => drained += read,
                }
            }
            Ok::<_, io::Error>(())
        };
        let _ = tokio::time::timeout(Duration::from_millis(200), answer).await;
    });
}

/// Binding beyond loopback with only loopback `Host` names allowed would
/// refuse every remote client; say so once at startup.
/// Says when the authorization's resource URI is a loopback address other
/// than the one bound (compared once bound, so that port 0 is the port
/// taken): the challenges and the metadata would point clients at it, and
/// tokens would be asked for it, with nothing failing until a client tries.
fn warn_if_resource_elsewhere(options: &crate::HttpOptions, bound: SocketAddr) {
    let Some(authorization) = &options.authorization else {
        return;
    };
    // An unusable URI is refused when the endpoint is built, not here.
    let Ok(resource) = crate::auth::resource::ResourceUri::parse(&authorization.resource) else {
        return;
    };
    if let Some(named) = resource.loopback_elsewhere(bound) {
        tracing::warn!(
            "the authorization's resource URI {resource} names {named}, but the HTTP server is bound to {bound}: \
             its challenges and metadata send clients to {named}; give `Authorization::new` the address served \
             (http://{bound}{path}), or bind to {named}",
            path = options.path,
        );
    }
}

fn warn_if_exposed(address: SocketAddr) {
    if !address.ip().is_loopback() {
        tracing::warn!(
            %address,
            "listening beyond loopback: only the Host names allowed in HttpOptions (loopback by default) are served; \
             put authentication in front of a server reachable from other machines"
        );
    }
}

//! Listening: worker threads, each with a single-threaded runtime, accepting
//! from one socket (with one worker, the calling thread serves); graceful
//! shutdown on SIGINT/SIGTERM.
//!
//! One runtime per core keeps each request on the thread that accepted it,
//! which is what lets handlers be `!Send`, and avoids cross-thread wake-ups.

use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::sync::Arc;

use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;
use tokio::task::LocalSet;

use super::connections::{Connections, Tracked};
use super::endpoint::Endpoint;
use super::pipeline;

/// Serves Streamable HTTP on the endpoint's address until SIGINT or
/// SIGTERM, then stops accepting, closes subscriptions and lets requests in
/// flight finish (up to the shutdown grace period). Blocks the calling
/// thread; runs its own runtimes (one per available core, on worker
/// threads; with a single core, on the calling thread).
pub(crate) fn run(endpoint: Endpoint) -> io::Result<()> {
    let options = &endpoint.options;
    let listener = std::net::TcpListener::bind(options.bind)?;
    listener.set_nonblocking(true)?;
    let address = listener.local_addr()?;
    warn_if_exposed(address);
    let workers = match options.workers {
        0 => std::thread::available_parallelism().map_or(1, usize::from),
        n => n,
    };
    let endpoint = Arc::new(endpoint);
    // The signal handlers are installed before anything is served (and
    // before the line that says so): a SIGTERM sent as soon as the server
    // answers must drain it, not kill it.
    let signals = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let shutdown = {
        let _context = signals.enter();
        ShutdownSignals::install()?
    };
    tracing::info!(%address, path = %endpoint.options.path, "serving MCP over HTTP");
    if workers == 1 {
        // One worker: the calling thread serves and watches the signals
        // itself, so the process has a single thread (which also spares the
        // kernel the file reference counting it does on every socket call
        // of a multi-threaded process).
        return serve(&signals, listener, endpoint, Some(shutdown));
    }
    let threads = (0..workers)
        .map(|index| {
            let (listener, endpoint) = (listener.try_clone()?, endpoint.clone());
            std::thread::Builder::new()
                .name(format!("mcp-http-{index}"))
                .spawn(move || worker(listener, endpoint))
        })
        .collect::<io::Result<Vec<_>>>()?;
    signals.block_on(shutdown.received());
    endpoint.shutdown().cancel();
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
    let endpoint = Arc::new(endpoint);
    let stop = endpoint.shutdown().clone();
    LocalSet::new()
        .run_until(async move {
            let accepting = spawn_accept_loop(listener, endpoint);
            tokio::select! {
                result = accepting => result,
                () = async { shutdown.await; stop.cancel(); std::future::pending().await } => Ok(()),
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
            let stop = endpoint.shutdown().clone();
            tokio::task::spawn_local(async move {
                signals.received().await;
                stop.cancel();
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
        // Head and body in one buffer, sent with one `write`: the kernel
        // handles one contiguous write faster than a two-part `writev`
        // (server CPU per request: -3 to -5 % for small answers, -8 % for
        // a 12 KB list page, whose copy costs less than it saves).
        .writev(false);
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
                let _ = stream.set_nodelay(true);
                let endpoint = endpoint.clone();
                let activity = connections.connection();
                let service = service_fn({
                    let activity = activity.clone();
                    move |request| {
                        let endpoint = endpoint.clone();
                        let request_in_progress = activity.begin();
                        async move {
                            let response = pipeline::handle(endpoint, request, Some(peer)).await;
                            Ok::<_, std::convert::Infallible>(response.map(|body| Tracked {
                                body,
                                _request: request_in_progress,
                            }))
                        }
                    }
                });
                let connection = http.serve_connection(TokioIo::new(stream), service);
                let task = tokio::task::spawn_local({
                    let activity = activity.clone();
                    async move {
                        if let Err(error) = activity.serve(connection).await {
                            tracing::debug!(%error, %peer, "connection ended with an error");
                        }
                    }
                });
                connections.watch(&activity, task.abort_handle());
            }
        }
    }
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

/// SIGINT and SIGTERM, listened for from the moment they are installed
/// (installing needs a runtime context; waiting can happen later).
struct ShutdownSignals {
    #[cfg(unix)]
    interrupt: tokio::signal::unix::Signal,
    #[cfg(unix)]
    terminate: tokio::signal::unix::Signal,
}

impl ShutdownSignals {
    fn install() -> io::Result<ShutdownSignals> {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            Ok(ShutdownSignals {
                interrupt: signal(SignalKind::interrupt())?,
                terminate: signal(SignalKind::terminate())?,
            })
        }
        #[cfg(not(unix))]
        Ok(ShutdownSignals {})
    }

    /// Waits for either signal, then says what happens next.
    async fn received(mut self) {
        #[cfg(unix)]
        tokio::select! {
            _ = self.interrupt.recv() => {}
            _ = self.terminate.recv() => {}
        }
        #[cfg(not(unix))]
        {
            let _ = &mut self;
            let _ = tokio::signal::ctrl_c().await;
        }
        tracing::info!("shutting down: no new connections, draining requests in flight");
    }
}

/// Binding beyond loopback with only loopback `Host` names allowed would
/// refuse every remote client; say so once at startup.
fn warn_if_exposed(address: SocketAddr) {
    if !address.ip().is_loopback() {
        tracing::warn!(
            %address,
            "listening beyond loopback: only the Host names allowed in HttpOptions (loopback by default) are served; \
             put authentication in front of a server reachable from other machines"
        );
    }
}

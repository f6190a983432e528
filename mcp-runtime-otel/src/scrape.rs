//! The Prometheus text endpoint: `GET /metrics` on a listener of its own,
//! served by a thread of its own, so that a scrape never shares the MCP
//! endpoint's address (which may be public) or its workers.
//!
//! Its 16 connection slots are shared fairly by client address
//! (`slots`): one address holds at most 4, and a newcomer takes
//! the oldest slot of an address that holds more than it would. A
//! connection that has not sent a complete request head within 5 s (from
//! its accept, or from its last answer when kept alive) is closed, and
//! none lasts more than 30 s: idle or half-sent sockets cannot keep the
//! metrics unreadable.

use std::convert::Infallible;
use std::net::{SocketAddr, TcpListener as StdListener};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use bytes::Bytes;
use http::header::{ALLOW, CONTENT_TYPE, HOST, ORIGIN};
use http::{HeaderValue, Method, Request, Response, StatusCode};
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::{TokioIo, TokioTimer};
use prometheus::{Encoder as _, Registry, TextEncoder};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::oneshot;

use mcp_runtime::security::OriginPolicy;

use super::OtelError;
use super::slots::{Slot, Slots};

/// Connections served at once; more wait in the kernel's backlog.
const CONNECTIONS: usize = 16;

/// Of which one client address (IPv6: one /64) holds at most this many.
const CONNECTIONS_PER_CLIENT: usize = 4;

/// How long a connection may take to send a complete request head, from
/// its accept or from the end of its last answer. A scraper sends its
/// request at once; only a socket held open on purpose takes longer.
/// Hyper's own timer: its cost per request (a timer armed) does not matter
/// at a scrape every few seconds.
const HEAD_TIME: Duration = Duration::from_secs(5);

/// How long one connection may take, its scrapes included.
const CONNECTION_TIME: Duration = Duration::from_secs(30);

/// The running endpoint: dropping it stops the listener and its thread.
#[derive(Debug)]
pub(super) struct PrometheusEndpoint {
    address: SocketAddr,
    stop: Option<oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl PrometheusEndpoint {
    /// Binds `address` at once (so that a taken port is an error at
    /// startup) and serves `registry` from the `mcp-metrics` thread.
    pub(super) fn start(address: &str, registry: Registry) -> Result<Self, OtelError> {
        let failed = |error: std::io::Error| {
            OtelError(format!(
                "the Prometheus endpoint cannot listen on {address}: {error}"
            ))
        };
        let listener = StdListener::bind(address).map_err(failed)?;
        listener.set_nonblocking(true).map_err(failed)?;
        let bound = listener.local_addr().map_err(failed)?;
        let (stop, stopped) = oneshot::channel();
        let thread = std::thread::Builder::new()
            .name("mcp-metrics".into())
            .spawn(move || serve_on_own_runtime(listener, registry, policy_for(bound), stopped))
            .map_err(failed)?;
        Ok(PrometheusEndpoint {
            address: bound,
            stop: Some(stop),
            thread: Some(thread),
        })
    }

    /// The address it listens on (the port chosen, when 0 was asked).
    pub(super) fn address(&self) -> SocketAddr {
        self.address
    }
}

impl Drop for PrometheusEndpoint {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// On a loopback address only loopback `Host` names are answered, as on
/// the MCP endpoint (a DNS-rebinding page cannot read the metrics); on
/// another address the operator chose to be reached by name, so any.
fn policy_for(bound: SocketAddr) -> OriginPolicy {
    let mut policy = OriginPolicy::default();
    if !bound.ip().is_loopback() {
        policy.allow_any_host();
    }
    policy
}

fn serve_on_own_runtime(
    listener: StdListener,
    registry: Registry,
    policy: OriginPolicy,
    stopped: oneshot::Receiver<()>,
) {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            tracing::error!(%error, "the Prometheus endpoint cannot start its runtime");
            return;
        }
    };
    runtime.block_on(serve(listener, Arc::new((registry, policy)), stopped));
}

async fn serve(
    listener: StdListener,
    shared: Arc<(Registry, OriginPolicy)>,
    mut stopped: oneshot::Receiver<()>,
) {
    let listener = match TcpListener::from_std(listener) {
        Ok(listener) => listener,
        Err(error) => {
            tracing::error!(%error, "the Prometheus endpoint cannot listen");
            return;
        }
    };
    let slots = Slots::new(CONNECTIONS, CONNECTIONS_PER_CLIENT);
    let mut http = http1::Builder::new();
    http.timer(TokioTimer::new()).header_read_timeout(HEAD_TIME);
    loop {
        let (stream, peer) = tokio::select! {
            _ = &mut stopped => return,
            accepted = accept(&listener, &slots) => accepted,
        };
        // Dropped (closed) unless admitted.
        let Some(slot) = slots.admit(peer.ip()) else {
            tracing::debug!(client = %peer.ip(), "the Prometheus endpoint closed a connection: its client holds its share of the slots");
            continue;
        };
        tokio::spawn(connection(http.clone(), stream, slot, shared.clone()));
    }
}

/// The next connection, once one could be admitted (see
/// [`Slots::vacancy`]).
async fn accept(listener: &TcpListener, slots: &Slots) -> (TcpStream, SocketAddr) {
    loop {
        slots.vacancy().await;
        match listener.accept().await {
            Ok(accepted) => return accepted,
            Err(error) => {
                tracing::warn!(%error, "the Prometheus endpoint could not accept a connection");
            }
        }
    }
}

/// Serves one connection in `slot`, until it closes, times out, or
/// another client takes the slot.
async fn connection(
    http: http1::Builder,
    stream: TcpStream,
    slot: Slot,
    shared: Arc<(Registry, OriginPolicy)>,
) {
    let service = service_fn(move |request| {
        std::future::ready(Ok::<_, Infallible>(answer(&request, &shared.0, &shared.1)))
    });
    let connection = http.serve_connection(TokioIo::new(stream), service);
    tokio::select! {
        _ = tokio::time::timeout(CONNECTION_TIME, connection) => {}
        () = slot.evicted() => {
            tracing::debug!("the Prometheus endpoint closed a connection: another client took its slot");
        }
    }
}

/// A scrape's answer: the metrics in the text format, or why not.
fn answer(
    request: &Request<Incoming>,
    registry: &Registry,
    policy: &OriginPolicy,
) -> Response<Full<Bytes>> {
    let header = |name| request.headers().get(name).and_then(|v| v.to_str().ok());
    let hosts = request.headers().get_all(HOST).iter().count();
    if hosts != 1 || policy.check_host(header(HOST)).is_err() {
        return plain(StatusCode::FORBIDDEN, "Host not allowed");
    }
    if !policy.origin_allowed(header(ORIGIN)) {
        return plain(StatusCode::FORBIDDEN, "Origin not allowed");
    }
    if request.uri().path() != "/metrics" {
        return plain(
            StatusCode::NOT_FOUND,
            "not found: the metrics are at /metrics",
        );
    }
    if request.method() != Method::GET && request.method() != Method::HEAD {
        let mut response = plain(StatusCode::METHOD_NOT_ALLOWED, "only GET");
        response
            .headers_mut()
            .insert(ALLOW, HeaderValue::from_static("GET, HEAD"));
        return response;
    }
    let encoder = TextEncoder::new();
    let mut text = Vec::new();
    if let Err(error) = encoder.encode(&registry.gather(), &mut text) {
        tracing::warn!(%error, "the metrics could not be encoded for Prometheus");
        return plain(
            StatusCode::INTERNAL_SERVER_ERROR,
            "the metrics could not be encoded",
        );
    }
    let mut response = Response::new(Full::new(Bytes::from(text)));
    if let Ok(kind) = HeaderValue::from_str(encoder.format_type()) {
        response.headers_mut().insert(CONTENT_TYPE, kind);
    }
    response
}

fn plain(status: StatusCode, text: &'static str) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from_static(text.as_bytes())));
    *response.status_mut() = status;
    response.headers_mut().insert(
        CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}

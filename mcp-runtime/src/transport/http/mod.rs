//! The Streamable HTTP transport (stateless, revision 2026-07-28): one MCP
//! endpoint accepting POST, answering with one JSON object or a
//! request-scoped SSE stream.

mod accept;
mod body;
mod card;
mod connections;
mod cors;
pub(crate) mod endpoint;
pub(crate) mod headers;
pub(crate) mod hook;
pub(crate) mod pipeline;
pub(crate) mod queue;
mod request;
pub(crate) mod respond;
pub(crate) mod server;
pub(crate) mod service;
pub(crate) mod slot;
mod socket;
pub(crate) mod stream;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

pub use self::body::McpBody;
pub use self::card::{SERVER_CARD_SCHEMA, SERVER_CARD_TYPE, ServerCard};
pub use self::request::HttpRequest;
pub use self::service::{McpService, PeerAddr};
use crate::auth::Authorization;
use crate::security::origin::OriginPolicy;
use crate::security::{RateLimiter, TokenBucket};

/// How long a body may take before [`HttpOptions::min_body_rate`] applies:
/// a small body sent right after its head is never held to a rate.
pub(crate) const BODY_GRACE: Duration = Duration::from_secs(2);

/// Settings of the HTTP transport. The defaults are safe for a local
/// server: loopback only, loopback `Host`/`Origin` only, 4 MiB bodies,
/// time limits, and generous rate limits.
///
/// Each setting is a builder method on [`HttpOptions::new`]. The options
/// go to [`Server::run_http`](crate::Server::run_http) (its own runtimes,
/// until SIGINT or SIGTERM), [`Server::serve_http`](crate::Server::serve_http)
/// (your runtime, your listener), [`Server::http_service`](crate::Server::http_service)
/// (a tower service for your own router), or
/// [`ServerBuilder::http`](crate::ServerBuilder::http), for `run()`'s
/// `--http ADDR` (which binds `ADDR`):
///
/// ```rust,no_run
/// use std::time::Duration;
///
/// use mcp_runtime::HttpOptions;
///
/// let options = HttpOptions::new()
///     // Beyond loopback: name the hosts clients use, and the web origins
///     // whose pages may call the endpoint.
///     .bind(([0, 0, 0, 0], 8080).into())
///     .path("/mcp")
///     .allow_host("mcp.example.com")
///     .allow_origin("https://app.example.com")
///     .max_body_size(1024 * 1024)
///     .request_timeout(Duration::from_secs(30))
///     .rate_limit(10.0, 20);
///
/// let server = mcp_runtime::server!().build()?;
/// server.run_http(options)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone)]
pub struct HttpOptions {
    pub(crate) bind: SocketAddr,
    pub(crate) path: String,
    pub(crate) origins: OriginPolicy,
    pub(crate) max_body_bytes: usize,
    pub(crate) body_timeout: Duration,
    pub(crate) min_body_rate: u64,
    pub(crate) header_timeout: Duration,
    pub(crate) request_timeout: Duration,
    pub(crate) max_in_flight: usize,
    pub(crate) max_requests_per_client: usize,
    pub(crate) max_connections_per_client: usize,
    pub(crate) max_subscriptions: usize,
    /// Read by the legacy adapter, when it is built in.
    pub(crate) max_legacy_sessions: usize,
    /// The liveness and readiness probes' paths, when they are served.
    pub(crate) probes: Option<(String, String)>,
    /// With probes on, how long a stopping server still serves while it
    /// reports itself not ready.
    pub(crate) drain_delay: Duration,
    pub(crate) keep_alive: Duration,
    pub(crate) rate_limiter: Option<Arc<dyn RateLimiter>>,
    /// The budget of the built-in limiter (`None` for your own, or none):
    /// with shared state (the Redis plugin), the same budget is kept
    /// for every instance at once.
    pub(crate) rate_budget: Option<(f64, u32)>,
    pub(crate) workers: usize,
    pub(crate) shutdown_grace: Duration,
    pub(crate) authorization: Option<Authorization>,
    /// The Server Card served beside the endpoint, if asked for.
    pub(crate) server_card: Option<ServerCard>,
}

impl std::fmt::Debug for HttpOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpOptions")
            .field("bind", &self.bind)
            .field("path", &self.path)
            .field("origins", &self.origins)
            .field("max_body_bytes", &self.max_body_bytes)
            .field("request_timeout", &self.request_timeout)
            .field("max_in_flight", &self.max_in_flight)
            .field("max_requests_per_client", &self.max_requests_per_client)
            .field(
                "max_connections_per_client",
                &self.max_connections_per_client,
            )
            .field("max_subscriptions", &self.max_subscriptions)
            .field("max_legacy_sessions", &self.max_legacy_sessions)
            .field("probes", &self.probes)
            .field("drain_delay", &self.drain_delay)
            .field("rate_limited", &self.rate_limiter.is_some())
            .field("authorization", &self.authorization)
            .field("server_card", &self.server_card)
            .finish_non_exhaustive()
    }
}

impl Default for HttpOptions {
    fn default() -> Self {
        HttpOptions {
            bind: SocketAddr::from(([127, 0, 0, 1], 8080)),
            path: "/mcp".to_owned(),
            origins: OriginPolicy::default(),
            max_body_bytes: 4 * 1024 * 1024,
            body_timeout: Duration::from_secs(30),
            min_body_rate: 1024,
            header_timeout: Duration::from_secs(10),
            request_timeout: Duration::from_secs(120),
            max_in_flight: 1024,
            max_requests_per_client: 128,
            max_connections_per_client: 256,
            max_subscriptions: 256,
            max_legacy_sessions: 65_536,
            probes: None,
            drain_delay: Duration::from_secs(5),
            keep_alive: Duration::from_secs(15),
            rate_limiter: Some(Arc::new(TokenBucket::new(50.0, 100))),
            rate_budget: Some((50.0, 100)),
            workers: 0,
            shutdown_grace: Duration::from_secs(10),
            authorization: None,
            server_card: None,
        }
    }
}

impl HttpOptions {
    /// The defaults: `127.0.0.1:8080`, endpoint `/mcp`.
    pub fn new() -> Self {
        HttpOptions::default()
    }

    /// The address to listen on (default `127.0.0.1:8080`). Binding beyond
    /// loopback also needs [`allow_host`](Self::allow_host) for the names
    /// clients use.
    #[must_use]
    pub fn bind(mut self, address: SocketAddr) -> Self {
        self.bind = address;
        self
    }

    /// The endpoint path (default `/mcp`).
    #[must_use]
    pub fn path(mut self, path: impl Into<String>) -> Self {
        self.path = path.into();
        self
    }

    /// Accepts requests whose `Host` is `host` (besides loopback names).
    #[must_use]
    pub fn allow_host(mut self, host: &str) -> Self {
        self.origins.allow_host(host);
        self
    }

    /// Accepts any `Host`: only when a proxy in front validates it.
    #[must_use]
    pub fn allow_any_host(mut self) -> Self {
        self.origins.allow_any_host();
        self
    }

    /// Accepts browser requests from `origin` (`https://app.example.com`),
    /// besides loopback origins.
    #[must_use]
    pub fn allow_origin(mut self, origin: &str) -> Self {
        self.origins.allow_origin(origin);
        self
    }

    /// The largest request body, in bytes (default 4 MiB); larger is 413.
    #[must_use]
    pub fn max_body_size(mut self, bytes: usize) -> Self {
        self.max_body_bytes = bytes;
        self
    }

    /// How long a request may run before it is answered with a timeout
    /// error (default 120 s).
    #[must_use]
    pub fn request_timeout(mut self, timeout: Duration) -> Self {
        self.request_timeout = timeout;
        self
    }

    /// How long the client may take to send a body (default 30 s; 408).
    #[must_use]
    pub fn body_timeout(mut self, timeout: Duration) -> Self {
        self.body_timeout = timeout;
        self
    }

    /// The slowest a body may arrive, in bytes a second on average since
    /// the request's head, after a first 2 seconds that are free
    /// (default 1 KiB/s; 0 turns it off); slower is 408. Without it, a
    /// client trickling a byte at a time would hold its request for the
    /// whole [`body_timeout`](Self::body_timeout).
    #[must_use]
    pub fn min_body_rate(mut self, bytes_per_second: u64) -> Self {
        self.min_body_rate = bytes_per_second;
        self
    }

    /// How long a client may take to send a request's head, counted from
    /// when the server starts waiting for it, which on a keep-alive
    /// connection is the end of the previous response (default 10 s). A
    /// connection past it is closed (it is checked eight times per limit, so
    /// within an eighth of it): the guard against clients that trickle
    /// headers to hold connections open, and the idle limit of keep-alive
    /// connections. Applies to [`Server::run_http`](crate::Server::run_http)
    /// and [`Server::serve_http`](crate::Server::serve_http); behind your
    /// own router, your HTTP server's settings apply.
    #[must_use]
    pub fn header_timeout(mut self, timeout: Duration) -> Self {
        self.header_timeout = timeout;
        self
    }

    /// How many requests may run at once (default 1024); more are 503. A
    /// request counts once its body has arrived: a client slow to send
    /// bodies holds none of these.
    ///
    /// Shared fairly: once less than half of them are free, a client
    /// address gets another only while it has fewer requests in progress
    /// than 1/8 of the free ones, so the biggest holders are refused first
    /// and a client with none is served while any is free. Taking them all
    /// needs 44 addresses at the default (the security chapter of the
    /// guide has every pool's rule).
    #[must_use]
    pub fn max_in_flight(mut self, requests: usize) -> Self {
        self.max_in_flight = requests.max(1);
        self
    }

    /// How many requests of one client address may be in progress at once,
    /// from their head to the end of their response (default 128); more are
    /// 429. IPv6 addresses count by their /64. Behind a proxy every client
    /// has the proxy's address: raise this (`usize::MAX` turns it off) and
    /// let the proxy limit its clients.
    #[must_use]
    pub fn max_requests_per_client(mut self, requests: usize) -> Self {
        self.max_requests_per_client = requests.max(1);
        self
    }

    /// How many connections one client address may hold open (default
    /// 256); a connection past it is answered with 429 and closed. IPv6
    /// addresses count by their /64; behind a proxy, see
    /// [`max_requests_per_client`](Self::max_requests_per_client). Applies
    /// to [`Server::run_http`](crate::Server::run_http) and
    /// [`Server::serve_http`](crate::Server::serve_http); behind your own
    /// router, your HTTP server accepts the connections.
    #[must_use]
    pub fn max_connections_per_client(mut self, connections: usize) -> Self {
        self.max_connections_per_client = connections.max(1);
        self
    }

    /// How many `subscriptions/listen` streams (and legacy sessions'
    /// notification streams) may be open (default 256); more are 503.
    ///
    /// Shared fairly: once less than half are free, a client address gets
    /// another only while it holds fewer than 1/8 of the free ones (and of
    /// all of them), so taking them all needs 29 addresses at the default;
    /// before that, its requests in progress bound it
    /// ([`max_requests_per_client`](Self::max_requests_per_client)).
    #[must_use]
    pub fn max_subscriptions(mut self, streams: usize) -> Self {
        self.max_subscriptions = streams.max(1);
        self
    }

    /// How many legacy (2025-11-25) sessions this instance keeps (default
    /// 65,536, about 26 MiB); an `initialize` past it is 503. Anyone may
    /// `initialize`, so the table is shared fairly like the other pools: a
    /// client address holds at most 1/8 of it, and once less than half is
    /// free, fewer than 1/8 of the free ones. A session keeps its entry for
    /// a day, or until it would have expired once ended (DELETE). Read only
    /// with the `legacy` feature.
    #[must_use]
    pub fn max_legacy_sessions(mut self, sessions: usize) -> Self {
        self.max_legacy_sessions = sessions.max(1);
        self
    }

    /// Serves health probes for orchestrators and load balancers at
    /// `liveness` and `readiness` (for example `/healthz` and `/readyz`;
    /// off by default). A `GET` or `HEAD` of `liveness` answers 200 while
    /// the process serves. One of `readiness` answers 200 while the server
    /// can take requests, and 503 once it is asked to stop or while its
    /// shared backend does not answer
    /// (Redis, through the plugin's
    /// [`SharedParts::ready_when`](crate::plugin::SharedParts::ready_when)).
    /// Neither is subject to authorization, the `Host` and `Origin` checks
    /// or the rate limit (an orchestrator calls them by address), and
    /// neither says more than `ok`, `ready` or `not ready`.
    ///
    /// A server with probes that is asked to stop (SIGTERM, SIGINT, or the
    /// future given to [`Server::serve_http`](crate::Server::serve_http))
    /// first reports itself not ready and keeps serving for
    /// [`drain_delay`](Self::drain_delay), so that load balancers stop
    /// sending; then it accepts no new connection, and its requests in
    /// flight finish within the shutdown grace.
    #[must_use]
    pub fn probes(mut self, liveness: impl Into<String>, readiness: impl Into<String>) -> Self {
        self.probes = Some((liveness.into(), readiness.into()));
        self
    }

    /// Serves `card`, the server's Server Card (experimental: SEP-2127 is
    /// a draft), at `GET <path>/server-card` as
    /// `application/mcp-server-card+json`, and with
    /// [`ServerCard::catalog`] an MCP Catalog at
    /// `/.well-known/mcp/catalog.json`. The card is written when the
    /// endpoint starts, from the metadata `server/discover` answers with:
    /// the name (under the card's namespace), version, title, description
    /// (which a card requires), icons and website, and the revisions the
    /// endpoint speaks. Both are public: any `Host` and `Origin`, no
    /// authorization, `Access-Control-Allow-Origin: *`, and
    /// `Cache-Control: public`. A card the draft's schema would refuse (no
    /// description, a name that is not reverse-DNS, no remote URL) stops
    /// the server from starting, saying why.
    #[must_use]
    pub fn server_card(mut self, card: ServerCard) -> Self {
        self.server_card = Some(card);
        self
    }

    /// With [`probes`](Self::probes), how long a stopping server keeps
    /// serving while its readiness probe fails (default 5 s; set it to a
    /// little more than your load balancer's probe interval). Without
    /// probes, nobody is told, and a server stops accepting at once.
    #[must_use]
    pub fn drain_delay(mut self, delay: Duration) -> Self {
        self.drain_delay = delay;
        self
    }

    /// How often idle SSE streams get a keep-alive comment (default 15 s).
    #[must_use]
    pub fn keep_alive(mut self, interval: Duration) -> Self {
        self.keep_alive = interval;
        self
    }

    /// Limits tool calls per client to `per_second` sustained and `burst`
    /// at once (default 50 and 100); excess calls get 429. With shared
    /// state (the Redis plugin), the budget is for all instances
    /// together.
    #[must_use]
    pub fn rate_limit(mut self, per_second: f64, burst: u32) -> Self {
        self.rate_limiter = Some(Arc::new(TokenBucket::new(per_second, burst)));
        self.rate_budget = Some((per_second, burst));
        self
    }

    /// Uses your own limiter (for example one shared by several instances).
    #[must_use]
    pub fn rate_limiter(mut self, limiter: impl RateLimiter) -> Self {
        self.rate_limiter = Some(Arc::new(limiter));
        self.rate_budget = None;
        self
    }

    /// Turns rate limiting off (for example when a gateway does it).
    #[must_use]
    pub fn without_rate_limit(mut self) -> Self {
        self.rate_limiter = None;
        self.rate_budget = None;
        self
    }

    /// Worker threads, each running its own single-threaded runtime
    /// (default: one per available core).
    #[must_use]
    pub fn workers(mut self, workers: usize) -> Self {
        self.workers = workers;
        self
    }

    /// Requires OAuth access tokens (this server becomes an OAuth 2.1
    /// resource server): see [`Authorization`] for what changes. Without
    /// it, nothing is checked.
    #[must_use]
    pub fn authorization(mut self, authorization: Authorization) -> Self {
        self.authorization = Some(authorization);
        self
    }

    /// How long shutdown waits for requests in flight (default 10 s).
    #[must_use]
    pub fn shutdown_grace(mut self, grace: Duration) -> Self {
        self.shutdown_grace = grace;
        self
    }
}

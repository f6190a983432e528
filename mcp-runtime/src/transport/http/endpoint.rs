//! What every connection of one HTTP server shares: the dispatcher, the
//! options, the caps on what runs at once, the rate limiter, authorization,
//! shutdown, and the hook another era's traffic plugs into. Its methods are
//! the steps both eras take alike.
//!
//! The hook ([`HttpHook`]) is where another era's traffic leaves the modern
//! pipeline: the legacy adapter plugs in there, and the pipeline knows only
//! the trait. The pipeline asks it twice: for a request other than a POST
//! (after the `Host`/`Origin` checks, before the 405), and for a POST once
//! its body is read (before the envelope is parsed). What the hook claims,
//! it serves in full, with the endpoint's own steps (authorization, rate
//! limits, the response kit).

#![expect(
    clippy::result_large_err,
    reason = "an early answer is the response itself, handed to hyper by value: boxing it would add an allocation to every refusal"
)]

use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;

use http::StatusCode;
use http::header::AUTHORIZATION;
use http::request::Parts;
use http::{HeaderValue, header::RETRY_AFTER};
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

use super::HttpOptions;
use super::card::Published;
use super::cors::Cors;
use super::hook::{EraHeaders, Post};
use super::request::{HideUnpermitted, HttpRequest};
use super::respond::{self, HttpResponse};
use super::slot::Slot;
use crate::auth::gate::{Denied, Gate};
use crate::dispatch::Dispatcher;
use crate::dispatch::envelope::Request;
use crate::protocol::RequestId;
use crate::protocol::method::MethodName;
use crate::security::clients::Clients;
use crate::security::fair::FairShare;
use crate::security::rate_limit::ClientKey;
use crate::security::{Principal, RateCheck, RateLimiter};
use crate::source::{RequestSource, TransportKind};

/// The future of a POST the hook serves.
pub(crate) type Serving<'a> = Pin<Box<dyn Future<Output = HttpResponse> + 'a>>;

/// The future of another method the hook serves: `None` leaves it to the
/// endpoint's 405.
pub(crate) type ServingOther<'a> = Pin<Box<dyn Future<Output = Option<HttpResponse>> + 'a>>;

/// Another era's traffic on the MCP endpoint.
pub(crate) trait HttpHook: Send + Sync + 'static {
    /// Whether a request other than a POST is the hook's.
    fn claims_other(&self, parts: &Parts) -> bool;

    /// Serves a request [`claims_other`](Self::claims_other) claimed, for
    /// an authorized caller; `None` leaves it to the endpoint's 405.
    fn other<'a>(
        &'a self,
        endpoint: &'a Arc<Endpoint>,
        parts: &'a Parts,
        peer: Option<SocketAddr>,
    ) -> ServingOther<'a>;

    /// The protocol revisions the hook serves, beside the endpoint's own
    /// (a Server Card lists both).
    fn revisions(&self) -> &'static [&'static str];

    /// Whether a POST is the hook's, from the era headers and the body.
    fn claims_post(&self, era: EraHeaders<'_>, body: &str) -> bool;

    /// Serves a POST [`claims_post`](Self::claims_post) claimed.
    fn post<'a>(&'a self, endpoint: &'a Arc<Endpoint>, post: Post) -> Serving<'a>;
}

/// A shared rate limiter's verdict still to come: `Err` is the 429.
pub(crate) type PendingRate =
    std::pin::Pin<Box<dyn std::future::Future<Output = Result<(), HttpResponse>>>>;

/// One HTTP server's shared state. See the module docs.
pub(crate) struct Endpoint {
    dispatcher: Arc<Dispatcher>,
    pub(crate) options: HttpOptions,
    in_flight: Arc<Semaphore>,
    subscriptions: Arc<Semaphore>,
    /// What each client address holds, shared by every worker.
    pub(crate) clients: Arc<Clients>,
    limiter: Option<Arc<dyn RateLimiter>>,
    shutdown: CancellationToken,
    /// Cancelled when the server is asked to stop, before it stops
    /// accepting: the readiness probe says so first.
    draining: CancellationToken,
    /// Authorization, when configured.
    pub(super) gate: Option<Arc<Gate>>,
    /// Whether to check the path (not when mounted in someone's router).
    pub(super) check_path: bool,
    /// Another era's traffic (the legacy adapter's), when one plugs in.
    pub(super) hook: Option<Arc<dyn HttpHook>>,
    /// CORS for requests with an `Origin`.
    pub(super) cors: Cors,
    /// The Server Card (and MCP Catalog), when asked for.
    pub(super) published: Option<Published>,
}

/// The Server Card's documents, written from the dispatcher's metadata
/// and the revisions the endpoint speaks; an unusable card is an error.
fn publish(
    dispatcher: &Dispatcher,
    options: &HttpOptions,
    hook: Option<&dyn HttpHook>,
) -> std::io::Result<Option<Published>> {
    let Some(card) = &options.server_card else {
        return Ok(None);
    };
    let mut versions = crate::protocol::SUPPORTED_VERSIONS.to_vec();
    versions.extend(hook.map_or(&[][..], HttpHook::revisions));
    let resource = options.authorization.as_ref().map(|a| a.resource.as_str());
    let published = card.publish(dispatcher.info(), &versions, (&options.path, resource));
    published
        .map(Some)
        .map_err(|problem| std::io::Error::new(std::io::ErrorKind::InvalidInput, problem))
}

/// The endpoint's limiter: the built-in budget kept for every instance at
/// once when the server has shared state, else the options' limiter.
fn rate_limiter(dispatcher: &Dispatcher, options: &HttpOptions) -> Option<Arc<dyn RateLimiter>> {
    match (dispatcher.shared_limits(), options.rate_budget) {
        (Some(shared), Some((per_second, burst))) => Some(shared.rate_limiter(per_second, burst)),
        _ => options.rate_limiter.clone(),
    }
}

impl Endpoint {
    /// Fails when the authorization configuration is unusable.
    pub(crate) fn new(
        dispatcher: Arc<Dispatcher>,
        options: HttpOptions,
        hook: Option<Arc<dyn HttpHook>>,
    ) -> std::io::Result<Endpoint> {
        let gate = match &options.authorization {
            Some(authorization) => Some(Arc::new(
                authorization
                    .build(
                        dispatcher.declared_scopes(),
                        dispatcher.state_keys(),
                        dispatcher.replay_guard(),
                    )
                    .map_err(|problem| {
                        std::io::Error::new(std::io::ErrorKind::InvalidInput, problem)
                    })?,
            )),
            None => None,
        };
        let cors = Cors::new(
            &options.origins,
            dispatcher.header_param_names(),
            hook.is_some(),
        );
        let published = publish(&dispatcher, &options, hook.as_deref())?;
        Ok(Endpoint {
            published,
            cors,
            gate,
            in_flight: Arc::new(Semaphore::new(options.max_in_flight)),
            subscriptions: Arc::new(Semaphore::new(options.max_subscriptions)),
            clients: Clients::new(
                options.max_connections_per_client,
                options.max_requests_per_client,
            ),
            limiter: rate_limiter(&dispatcher, &options),
            options,
            shutdown: CancellationToken::new(),
            draining: CancellationToken::new(),
            check_path: true,
            hook,
            dispatcher,
        })
    }

    /// For a service mounted in a router, which routes by path itself.
    pub(crate) fn embedded(mut self) -> Endpoint {
        self.check_path = false;
        self
    }

    pub(crate) fn dispatcher(&self) -> &Arc<Dispatcher> {
        &self.dispatcher
    }

    /// The server's counters, where its refusals are counted.
    pub(crate) fn metrics(&self) -> &crate::metrics::Metrics {
        self.dispatcher.metrics()
    }

    /// Cancelled when the server shuts down.
    pub(crate) fn shutdown(&self) -> &CancellationToken {
        &self.shutdown
    }

    /// Whether the server was asked to stop (the readiness probe fails from
    /// then on).
    pub(crate) fn is_draining(&self) -> bool {
        self.draining.is_cancelled()
    }

    /// Stops the server: the readiness probe fails at once; with probes
    /// on, requests are still accepted for `HttpOptions::drain_delay`, so
    /// that load balancers see it and send no more; then no new
    /// connection is accepted, and the requests in flight drain.
    pub(crate) async fn stop(&self) {
        self.draining.cancel();
        if self.options.probes.is_some() && !self.options.drain_delay.is_zero() {
            tracing::info!(delay = ?self.options.drain_delay, "not ready: still serving while load balancers notice");
            tokio::time::sleep(self.options.drain_delay).await;
        }
        self.shutdown.cancel();
    }

    /// A slot among the requests in flight for the client at `peer`, or
    /// the 503 that says none is free to it: once less than half the slots
    /// are free, the biggest holders are refused first
    /// (`security::fair`). A client's holding is its requests in
    /// progress, counted from their heads (this one included).
    pub(super) fn in_flight_permit(&self, peer: Option<SocketAddr>) -> Result<Slot, HttpResponse> {
        let rule = FairShare::new(self.options.max_in_flight);
        let free = self.in_flight.available_permits();
        if rule.is_contended(free) {
            let held = peer.map_or(0, |peer| self.clients.requests_of(peer.ip()));
            if !rule.admits(held.saturating_sub(1), free) {
                return Err(respond::busy(self.metrics()));
            }
        }
        let permit = self.in_flight.clone().try_acquire_owned();
        let permit = permit.map_err(|_| respond::busy(self.metrics()))?;
        Ok(Slot::new(permit, None))
    }

    /// A slot among the open streams (subscriptions, a legacy session's
    /// notification stream) for the client at `peer`, or the 503 that says
    /// none is free to it: as for requests in flight, once less than half
    /// of them are free the biggest holders are refused first
    /// (`security::fair`); before, a client is held to its requests in
    /// progress (a proxy's clients all have the proxy's address).
    pub(crate) fn stream_permit(&self, peer: Option<SocketAddr>) -> Result<Slot, HttpResponse> {
        let rule = FairShare::new(self.options.max_subscriptions);
        let free = self.subscriptions.available_permits();
        let stream = match peer {
            Some(peer) => {
                let admits = |held| !rule.is_contended(free) || rule.admits(held, free);
                let opened = self.clients.open_stream(peer.ip(), admits);
                Some(opened.ok_or_else(|| respond::busy(self.metrics()))?)
            }
            None => None,
        };
        let permit = self.subscriptions.clone().try_acquire_owned();
        let permit = permit.map_err(|_| respond::busy(self.metrics()))?;
        Ok(Slot::new(permit, stream))
    }

    /// Tool calls are rate limited per client address, in both eras; the
    /// 429 answers request `id`. `Ok(Some(..))`: the verdict of a shared
    /// limiter, still to come; the call must not start before it is in.
    pub(crate) fn check_rate(
        &self,
        peer: Option<SocketAddr>,
        id: &RequestId,
    ) -> Result<Option<PendingRate>, HttpResponse> {
        let Some((limiter, peer)) = self.limiter.as_ref().zip(peer) else {
            return Ok(None);
        };
        let key = ClientKey::new(peer.ip());
        match limiter.check(key.as_str()) {
            RateCheck::Now(verdict) => verdict
                .map(|()| None)
                .map_err(|wait| respond::rate_limited(id, wait, self.metrics())),
            RateCheck::Later(pending) => {
                let id = id.clone();
                // A clone only here, where the verdict is boxed anyway.
                let metrics = self.metrics().clone();
                Ok(Some(Box::pin(async move {
                    let verdict = pending.await;
                    verdict.map_err(|wait| respond::rate_limited(&id, wait, &metrics))
                })))
            }
        }
    }

    /// Authorization, when configured: admits the caller of `request` (or
    /// of a message that names nothing, such as a notification), or
    /// answers with the challenge. An admitted caller's principal goes into
    /// the request's extensions and the token leaves its headers: handlers
    /// get the principal, never the token, so they cannot pass it on.
    pub(crate) async fn authorize(
        &self,
        parts: &mut Parts,
        request: Option<&Request>,
    ) -> Result<(), HttpResponse> {
        let Some(gate) = &self.gate else {
            return Ok(());
        };
        let method = match request.map(|r| &r.method) {
            Some(MethodName::Known(method)) => Some(*method),
            _ => None,
        };
        let required = request.map_or_else(Vec::new, |r| self.dispatcher.required_scopes(r));
        match gate.admit(parts, method, &required).await {
            Ok(Some(principal)) => {
                // The DPoP proof stays: it is bound to this token and
                // request, and its jti is spent.
                parts.headers.remove(AUTHORIZATION);
                parts.extensions.insert(principal);
                if gate.hide_unpermitted() {
                    parts.extensions.insert(HideUnpermitted);
                }
                Ok(())
            }
            Ok(None) => Ok(()),
            Err(denied) => Err(deny(gate, &denied, &required)),
        }
    }

    /// Where a request in `parts` came from: its caller, as authorization
    /// (ours, or the middleware in front) established it.
    pub(crate) fn source(parts: &Parts) -> RequestSource {
        let extensions = &parts.extensions;
        RequestSource::new(TransportKind::Http)
            .with_principal(extensions.get::<Principal>().cloned())
            .hiding_unpermitted(extensions.get::<HideUnpermitted>().is_some())
    }

    /// `source` with the request's head attached, for handlers.
    pub(crate) fn attach(
        source: RequestSource,
        parts: Parts,
        peer: Option<SocketAddr>,
    ) -> RequestSource {
        source
            .with_attachment(HttpRequest::new(parts, peer))
            .with_client_address(peer.map(|peer| peer.ip()))
    }
}

fn deny(gate: &Gate, denied: &Denied, required: &[&str]) -> HttpResponse {
    match denied {
        Denied::Refused(refusal) => gate.refuse(refusal, required, super::body::McpBody::full),
        Denied::Unavailable => {
            let mut response = respond::plain(
                StatusCode::SERVICE_UNAVAILABLE,
                "the access token cannot be verified now; retry shortly",
            );
            response
                .headers_mut()
                .insert(RETRY_AFTER, HeaderValue::from_static("5"));
            response
        }
    }
}

//! CORS, for MCP clients that are web pages: tower-http's `CorsLayer`,
//! tied to the endpoint's `Origin` allow-list.
//!
//! Only requests that carry an `Origin` go through it (the pipeline tells
//! from the header scan it makes anyway), so a request without one pays
//! nothing for it. A preflight (`OPTIONS`) is refused as the request it
//! announces would be (404 off the endpoint's path, 400/403 for its `Host`,
//! 403 for an `Origin` off the list), and otherwise answered by the layer
//! with the methods and headers MCP uses; every other request runs the
//! whole pipeline inside the layer, which adds `Access-Control-Allow-Origin`
//! (the caller's origin, never `*`) to what an allowed origin gets. No
//! `Access-Control-Allow-Credentials`: MCP's credential is a bearer token
//! in `Authorization`, which a page sends without credentials mode (no
//! cookies).

use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http::Method;
use http::header::{self, HeaderName};
use http_body::{Body, Frame, SizeHint};
use http_body_util::BodyExt as _;
use tower_http::cors::{AllowOrigin, CorsLayer};
use tower_layer::Layer as _;

use crate::security::origin::OriginPolicy;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// How long a browser may keep a preflight's answer.
const MAX_AGE: Duration = Duration::from_secs(3600);

/// Request headers every MCP client may send, besides `Mcp-Param-*`
/// (`dpop`: the proof that goes with a DPoP-bound token, RFC 9449).
const REQUEST_HEADERS: [&str; 8] = [
    "content-type",
    "accept",
    "mcp-protocol-version",
    "mcp-method",
    "mcp-name",
    "authorization",
    "dpop",
    "last-event-id",
];

/// The endpoint's CORS rules, built once.
pub(crate) struct Cors {
    layer: CorsLayer,
}

impl Cors {
    /// Rules for `origins`, allowing the `Mcp-Param-*` headers of
    /// `header_params` (each tool argument's `x-mcp-header`) and, when the
    /// legacy adapter serves the endpoint (`legacy`), `GET`, `DELETE` and
    /// `Mcp-Session-Id`.
    pub(crate) fn new<'a>(
        origins: &OriginPolicy,
        header_params: impl Iterator<Item = &'a str>,
        legacy: bool,
    ) -> Cors {
        let policy = origins.clone();
        // One Origin, on the list: a repeated one is refused (403) and
        // gets no grant either.
        let allow_origin = AllowOrigin::predicate(move |origin, parts| {
            parts.headers.get_all(header::ORIGIN).iter().count() == 1
                && policy.origin_allowed(Some(origin.to_str().unwrap_or("")))
        });
        let mut headers: Vec<HeaderName> = REQUEST_HEADERS
            .iter()
            .map(|name| HeaderName::from_static(name))
            .collect();
        headers.extend(
            header_params.filter_map(|name| HeaderName::try_from(format!("mcp-param-{name}")).ok()),
        );
        let mut methods = vec![Method::POST];
        // `DPoP-Nonce`: the nonce a browser client must put in its next
        // proof (RFC 9449 §9).
        let mut exposed = vec![
            header::WWW_AUTHENTICATE,
            header::RETRY_AFTER,
            HeaderName::from_static("dpop-nonce"),
        ];
        if legacy {
            let session = HeaderName::from_static("mcp-session-id");
            methods.extend([Method::GET, Method::DELETE]);
            headers.push(session.clone());
            exposed.push(session);
        }
        let layer = CorsLayer::new()
            .allow_origin(allow_origin)
            .allow_methods(methods)
            .allow_headers(headers)
            .expose_headers(exposed)
            .max_age(MAX_AGE);
        Cors { layer }
    }

    /// `inner` with the CORS layer around it.
    pub(super) fn around<S>(&self, inner: S) -> tower_http::cors::Cors<S> {
        self.layer.layer(inner)
    }
}

/// The body of a request CORS has taken in hand. A type of its own: the
/// pipeline's steps for it are then code of their own, and those for
/// requests without an `Origin` keep one caller, inlined as before
/// (measured: shared, they were not, +66 instructions of `memcpy` per
/// request).
pub(crate) struct CrossOriginBody(Pin<Box<dyn Body<Data = Bytes, Error = BoxError>>>);

impl CrossOriginBody {
    pub(super) fn new<B>(body: B) -> CrossOriginBody
    where
        B: Body<Data = Bytes> + 'static,
        B::Error: Into<BoxError>,
    {
        CrossOriginBody(Box::pin(body.map_err(Into::into)))
    }
}

impl Body for CrossOriginBody {
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        self.0.as_mut().poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.0.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.0.size_hint()
    }
}

//! The HTTP request a handler is serving, for handlers that need headers,
//! the peer address or what middleware attached (an authenticated principal,
//! a tenant).

use std::fmt;
use std::net::SocketAddr;

use http::request::Parts;
use http::{Extensions, HeaderMap, Method, Uri};

use crate::context::{Context, FromContext};
use crate::security::Principal;

/// Set as a request extension next to the [`Principal`] when lists must
/// show only what that principal may use.
#[derive(Clone, Copy, Debug)]
pub(crate) struct HideUnpermitted;

/// The HTTP request behind an MCP request served over Streamable HTTP.
///
/// Take it as `#[ctx] http: Option<&HttpRequest>` (it is `None` on stdio).
/// Its `Debug` output redacts credentials.
pub struct HttpRequest {
    parts: Parts,
    peer: Option<SocketAddr>,
}

impl HttpRequest {
    pub(crate) fn new(parts: Parts, peer: Option<SocketAddr>) -> Self {
        HttpRequest { parts, peer }
    }

    /// The HTTP method (always `POST`).
    pub fn method(&self) -> &Method {
        &self.parts.method
    }

    /// The request URI.
    pub fn uri(&self) -> &Uri {
        &self.parts.uri
    }

    /// The request headers, including credentials: never log them whole.
    pub fn headers(&self) -> &HeaderMap {
        &self.parts.headers
    }

    /// Values attached by middleware, such as an authenticated principal.
    pub fn extensions(&self) -> &Extensions {
        &self.parts.extensions
    }

    /// The authenticated caller, if authorization (built in, or your own
    /// middleware) established one.
    pub fn principal(&self) -> Option<&Principal> {
        self.parts.extensions.get::<Principal>()
    }

    /// The client's address, when the transport knows it.
    pub fn peer_addr(&self) -> Option<SocketAddr> {
        self.peer
    }
}

impl Context {
    /// The HTTP request this request arrived in (`None` on stdio): headers,
    /// peer address, and extensions set by middleware.
    #[cfg_attr(docsrs, doc(cfg(feature = "http")))]
    pub fn http(&self) -> Option<&HttpRequest> {
        self.source().attachment::<HttpRequest>()
    }
}

impl crate::middleware::Request {
    /// The HTTP request this request arrived in (`None` on stdio): where a
    /// request layer reads a header to resolve the caller's tenant.
    #[cfg_attr(docsrs, doc(cfg(feature = "http")))]
    pub fn http(&self) -> Option<&HttpRequest> {
        self.source().attachment::<HttpRequest>()
    }
}

impl<'a> FromContext<'a> for Option<&'a HttpRequest> {
    fn from_context(ctx: &'a Context) -> Self {
        ctx.http()
    }
}

/// Headers whose values are secrets.
const REDACTED: [&str; 4] = [
    "authorization",
    "proxy-authorization",
    "cookie",
    "set-cookie",
];

impl fmt::Debug for HttpRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let headers: Vec<(&str, &str)> = self
            .parts
            .headers
            .iter()
            .map(|(name, value)| {
                let shown = if REDACTED.contains(&name.as_str()) {
                    "[redacted]"
                } else {
                    value.to_str().unwrap_or("[binary]")
                };
                (name.as_str(), shown)
            })
            .collect();
        f.debug_struct("HttpRequest")
            .field("method", &self.parts.method)
            .field("uri", &self.parts.uri)
            .field("headers", &headers)
            .field("peer", &self.peer)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_output_redacts_credentials() {
        let (parts, ()) = http::Request::post("/mcp")
            .header("authorization", "Bearer secret-token")
            .header("cookie", "session=secret")
            .header("x-tenant", "acme")
            .body(())
            .unwrap()
            .into_parts();
        let shown = format!("{:?}", HttpRequest::new(parts, None));
        assert!(!shown.contains("secret"), "{shown}");
        assert!(shown.contains("acme"), "{shown}");
    }
}

//! The HTTP client that talks to authorization servers: metadata, JWKS and
//! introspection. HTTPS only (plain HTTP only to a loopback host, for local
//! development and tests), no redirects, a time limit on every exchange and
//! a cap on response size.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::header::{ACCEPT, AUTHORIZATION, CONNECTION, CONTENT_TYPE};
use http::{HeaderValue, Method, Request, StatusCode, Uri};
use http_body_util::{BodyExt as _, Full, Limited};
use hyper_rustls::HttpsConnector;
use hyper_util::client::legacy::connect::HttpConnector;
use percent_encoding::{NON_ALPHANUMERIC, utf8_percent_encode};
use tower_service::Service as _;

use super::resource::is_loopback;

/// Largest metadata, JWKS or introspection response accepted.
const MAX_RESPONSE_BYTES: usize = 512 * 1024;

#[derive(Clone)]
pub(crate) struct Fetcher {
    connector: HttpsConnector<HttpConnector>,
    timeout: Duration,
}

impl std::fmt::Debug for Fetcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Fetcher")
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

impl Fetcher {
    pub(crate) fn new(timeout: Duration) -> Fetcher {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let builder = hyper_rustls::HttpsConnectorBuilder::new()
            .with_provider_and_webpki_roots(provider)
            // The ring provider supports the default protocol versions, so
            // this cannot fail; fall back to native defaults regardless.
            .unwrap_or_else(|_| hyper_rustls::HttpsConnectorBuilder::new().with_webpki_roots());
        let connector = builder.https_or_http().enable_http1().build();
        Fetcher { connector, timeout }
    }

    /// GETs a JSON document.
    pub(crate) async fn get_json(&self, url: &str) -> Result<serde_json::Value, String> {
        let uri = check_url(url)?;
        let request = Request::builder()
            .method(Method::GET)
            .uri(uri)
            .header(ACCEPT, "application/json")
            .body(Full::new(Bytes::new()))
            .map_err(|e| e.to_string())?;
        self.exchange(request, url).await
    }

    /// POSTs a form (`application/x-www-form-urlencoded`) with HTTP Basic
    /// client authentication (RFC 6749 §2.3.1), and reads a JSON answer.
    pub(crate) async fn post_form(
        &self,
        url: &str,
        form: &[(&str, &str)],
        client: Option<(&str, &str)>,
    ) -> Result<serde_json::Value, String> {
        let uri = check_url(url)?;
        let mut builder = Request::builder()
            .method(Method::POST)
            .uri(uri)
            .header(ACCEPT, "application/json")
            .header(CONTENT_TYPE, "application/x-www-form-urlencoded");
        if let Some((id, secret)) = client {
            use base64::Engine as _;
            let pair = format!("{}:{}", form_encode(id), form_encode(secret));
            let value = format!(
                "Basic {}",
                base64::engine::general_purpose::STANDARD.encode(pair)
            );
            let mut value = HeaderValue::from_str(&value).map_err(|e| e.to_string())?;
            value.set_sensitive(true);
            builder = builder.header(AUTHORIZATION, value);
        }
        let body = form
            .iter()
            .map(|(k, v)| format!("{}={}", form_encode(k), form_encode(v)))
            .collect::<Vec<_>>()
            .join("&");
        let request = builder
            .body(Full::new(Bytes::from(body)))
            .map_err(|e| e.to_string())?;
        self.exchange(request, url).await
    }

    async fn exchange(
        &self,
        mut request: Request<Full<Bytes>>,
        url: &str,
    ) -> Result<serde_json::Value, String> {
        // One connection per exchange (see `new`): say so, so that neither
        // side keeps it for a reuse that never comes.
        request
            .headers_mut()
            .insert(CONNECTION, HeaderValue::from_static("close"));
        // One connection per exchange, no pool: fetches are rare, and the
        // pipeline's worker threads each run their own runtime, where a
        // pooled connection's task would be stranded.
        let exchange = async {
            let uri = request.uri().clone();
            let io = self
                .connector
                .clone()
                .call(uri.clone())
                .await
                .map_err(|e| format!("{url}: cannot connect: {e}"))?;
            let (mut sender, connection) = hyper::client::conn::http1::handshake(io)
                .await
                .map_err(|e| format!("{url}: {e}"))?;
            // Drives the connection; aborted when this exchange ends, even
            // by timing out.
            let _driver = AbortOnDrop(tokio::spawn(connection));
            // HTTP/1 on a fresh connection: origin-form target and `Host`.
            if let Some(authority) = uri.authority() {
                let host = HeaderValue::from_str(authority.as_str()).map_err(|e| e.to_string())?;
                request.headers_mut().insert(http::header::HOST, host);
            }
            let target = uri.path_and_query().map_or("/", |p| p.as_str());
            *request.uri_mut() = target.parse().map_err(|_| format!("{url}: bad target"))?;
            let response = sender
                .send_request(request)
                .await
                .map_err(|e| format!("{url}: {e}"))?;
            let status = response.status();
            let body = Limited::new(response.into_body(), MAX_RESPONSE_BYTES)
                .collect()
                .await
                .map_err(|e| format!("{url}: {e}"))?
                .to_bytes();
            if status != StatusCode::OK {
                return Err(format!("{url} answered {status}"));
            }
            serde_json::from_slice(&body).map_err(|e| format!("{url}: not JSON: {e}"))
        };
        tokio::time::timeout(self.timeout, exchange)
            .await
            .map_err(|_| format!("{url} did not answer within {:?}", self.timeout))?
    }
}

struct AbortOnDrop<T>(tokio::task::JoinHandle<T>);

impl<T> Drop for AbortOnDrop<T> {
    fn drop(&mut self) {
        self.0.abort();
    }
}

fn form_encode(text: &str) -> String {
    utf8_percent_encode(text, NON_ALPHANUMERIC).to_string()
}

/// An authorization server URL must be HTTPS (MCP authorization, Communication
/// Security); plain HTTP is allowed only to a loopback host.
pub(crate) fn check_url(url: &str) -> Result<Uri, String> {
    let uri: Uri = url.parse().map_err(|_| format!("`{url}` is not a URL"))?;
    let loopback = uri.host().is_some_and(is_loopback);
    match uri.scheme_str() {
        Some("https") => Ok(uri),
        Some("http") if loopback => Ok(uri),
        _ => Err(format!(
            "`{url}`: authorization server endpoints must use https (http only on loopback)"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_https_or_loopback_http() {
        assert!(check_url("https://auth.example.com/jwks").is_ok());
        assert!(check_url("http://127.0.0.1:3000/jwks").is_ok());
        assert!(check_url("http://localhost:3000/jwks").is_ok());
        assert!(check_url("http://auth.example.com/jwks").is_err());
        assert!(check_url("file:///etc/passwd").is_err());
        assert!(check_url("not a url").is_err());
    }

    #[test]
    fn form_encoding_escapes_separators() {
        assert_eq!(form_encode("a b&c=d:e"), "a%20b%26c%3Dd%3Ae");
    }

    #[tokio::test]
    async fn unreachable_server_is_an_error_not_a_hang() {
        let fetcher = Fetcher::new(Duration::from_millis(500));
        // Port 9 (discard) on loopback: refused at once, or timed out.
        let error = fetcher.get_json("http://127.0.0.1:9/x").await.unwrap_err();
        assert!(error.contains("127.0.0.1:9"), "{error}");
    }
}

#[cfg(test)]
mod sequential {
    use super::*;

    /// Each exchange has its own connection; none is left half-used.
    #[tokio::test]
    async fn many_exchanges_in_a_row() {
        use axum::routing::post;
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/x", listener.local_addr().unwrap());
        let app = axum::Router::new().route("/x", post(|| async { "{\"ok\":true}" }));
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        let fetcher = Fetcher::new(Duration::from_secs(2));
        for i in 0..5 {
            let r = fetcher
                .post_form(&url, &[("token", "t")], Some(("a-b", "c")))
                .await;
            assert!(r.is_ok(), "{i}: {r:?}");
        }
    }
}

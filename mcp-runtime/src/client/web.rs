//! One HTTP/1.1 exchange with an `http://` URL: what the client's HTTP
//! transport and its OAuth flow (metadata, registration, tokens) send.
//! Redirects are not followed: a caller that wants one reads `Location`.

use bytes::Bytes;
use http::{HeaderMap, Method, Request, Uri};
use http_body_util::{BodyExt as _, Full};
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;

use super::transport::TransportError;

/// What came back.
#[derive(Debug)]
pub(crate) struct WebResponse {
    pub(crate) status: u16,
    pub(crate) headers: HeaderMap,
    pub(crate) body: Bytes,
}

impl WebResponse {
    /// A header's value, if it is text.
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// The body as a JSON object, if it is one (for the OAuth flow).
    #[cfg(feature = "oauth-client")]
    pub(crate) fn json_object(&self) -> Option<serde_json::Value> {
        serde_json::from_slice::<serde_json::Value>(&self.body)
            .ok()
            .filter(serde_json::Value::is_object)
    }
}

/// Parses `url`, which must be `http://` with a host.
pub(crate) fn http_url(url: &str) -> Result<Uri, TransportError> {
    let uri: Uri = url
        .parse()
        .map_err(|error| TransportError::new(format!("`{url}` is not a URL: {error}")))?;
    match (uri.scheme_str(), uri.host()) {
        (Some("http"), Some(_)) => Ok(uri),
        (Some("https"), _) => Err(TransportError::new(format!(
            "`{url}`: https URLs are not supported by the built-in client; reach the server through a local proxy"
        ))),
        _ => Err(TransportError::new(format!(
            "`{url}` is not an http:// URL"
        ))),
    }
}

/// Sends one request to `url` on a connection of its own.
pub(crate) async fn exchange(
    method: Method,
    url: &Uri,
    headers: &[(String, String)],
    body: Bytes,
) -> Result<WebResponse, TransportError> {
    let authority = url.authority().map_or("", |a| a.as_str()).to_owned();
    let port = url.port_u16().unwrap_or(80);
    let host = url
        .host()
        .unwrap_or("localhost")
        .trim_matches(|c| c == '[' || c == ']');
    let stream = TcpStream::connect((host, port))
        .await
        .map_err(|error| TransportError::new(format!("cannot connect to {authority}: {error}")))?;
    let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .map_err(|error| {
            TransportError::new(format!("HTTP handshake with {authority} failed: {error}"))
        })?;
    tokio::spawn(connection);
    let path = url.path_and_query().map_or("/", |p| p.as_str());
    let mut request = Request::builder()
        .method(method)
        .uri(path)
        .header("host", &authority);
    for (name, value) in headers {
        request = request.header(name.as_str(), value.as_str());
    }
    let request = request
        .body(Full::new(body))
        .map_err(|error| TransportError::new(format!("cannot build the request: {error}")))?;
    let response = sender.send_request(request).await.map_err(|error| {
        TransportError::new(format!("the request to {authority} failed: {error}"))
    })?;
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let body = response
        .into_body()
        .collect()
        .await
        .map_err(|error| TransportError::new(format!("reading the response failed: {error}")))?
        .to_bytes();
    Ok(WebResponse {
        status,
        headers,
        body,
    })
}

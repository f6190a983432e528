//! The authorization response's way back: a loopback listener for a
//! person's browser (RFC 8252 §7.3), or the authorization server's own
//! redirect read directly, for servers that approve without a person.

use std::collections::HashMap;
use std::convert::Infallible;
use std::time::Duration;

use bytes::Bytes;
use http::{Method, Response};
use http_body_util::Full;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;

use super::grant::query_params;
use crate::client::transport::TransportError;
use crate::client::web::{exchange, http_url};

/// How long a person has to approve in the browser.
const BROWSER_WAIT: Duration = Duration::from_secs(300);

/// Where the browser comes back to: a loopback port of this process.
pub(crate) struct Loopback {
    listener: TcpListener,
    pub(crate) redirect_uri: String,
}

impl Loopback {
    pub(crate) async fn open() -> Result<Loopback, TransportError> {
        let listener = TcpListener::bind("127.0.0.1:0").await.map_err(|error| {
            TransportError::new(format!(
                "cannot listen for the authorization response: {error}"
            ))
        })?;
        let port = listener
            .local_addr()
            .map_err(|error| TransportError::new(error.to_string()))?
            .port();
        Ok(Loopback {
            listener,
            redirect_uri: format!("http://127.0.0.1:{port}/callback"),
        })
    }

    /// Asks the person to open `url`, then waits for the browser's request
    /// to the redirect URI and returns its query parameters.
    pub(crate) async fn wait(self, url: &str) -> Result<HashMap<String, String>, TransportError> {
        eprintln!("The server needs authorization. Open this URL in a browser:\n\n  {url}\n");
        let answer = tokio::time::timeout(BROWSER_WAIT, self.callback()).await;
        answer
            .map_err(|_| TransportError::new("no authorization response within 5 minutes".into()))?
    }

    async fn callback(self) -> Result<HashMap<String, String>, TransportError> {
        loop {
            let (stream, _) = self.listener.accept().await.map_err(|error| {
                TransportError::new(format!("the authorization response was lost: {error}"))
            })?;
            let (sender, receiver) = tokio::sync::oneshot::channel();
            let sender = std::sync::Mutex::new(Some(sender));
            let service = service_fn(move |request: http::Request<hyper::body::Incoming>| {
                let target = request.uri().to_string();
                let ours = request.method() == Method::GET && request.uri().path() == "/callback";
                if ours && let Some(sender) = sender.lock().ok().and_then(|mut s| s.take()) {
                    let _ = sender.send(query_params(&target));
                }
                let page = if ours {
                    "Authorized: you can close this tab."
                } else {
                    "Not found."
                };
                async move { Ok::<_, Infallible>(Response::new(Full::new(Bytes::from(page)))) }
            });
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await;
            if let Ok(params) = receiver.await {
                return Ok(params);
            }
        }
    }
}

/// Requests the authorization URL itself and reads the redirect: for
/// authorization servers that approve this client without a person (test
/// servers, pre-approved clients).
pub(crate) async fn fetch(url: &str) -> Result<HashMap<String, String>, TransportError> {
    let response = exchange(Method::GET, &http_url(url)?, &[], Bytes::new()).await?;
    match (response.status, response.header("location")) {
        (300..=399, Some(location)) => Ok(query_params(location)),
        (status, _) => Err(TransportError::new(format!(
            "the authorization endpoint answered HTTP {status} instead of redirecting: it wants a person, so authorize in a browser (without `--authorize fetch`)"
        ))),
    }
}

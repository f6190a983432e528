//! Reading a Server Card (SEP-2127, draft; experimental) before connecting.

use bytes::Bytes;
use http::Method;
use serde_json::Value;

use super::ClientError;
use super::web::{exchange, http_url};
use crate::transport::http::SERVER_CARD_TYPE;

/// Fetches the Server Card at `url` (an `http://` URL, such as
/// `http://127.0.0.1:8080/mcp/server-card`), asking for
/// `application/mcp-server-card+json`: the JSON object the server
/// answered. The card is advisory, read before any connection: check its
/// claims against `server/discover` once connected.
///
/// # Errors
/// When the URL cannot be reached, or the answer is not a 200 with a JSON
/// object.
pub async fn fetch_server_card(url: &str) -> Result<Value, ClientError> {
    let accept = [("Accept".to_owned(), SERVER_CARD_TYPE.to_owned())];
    let response = exchange(Method::GET, &http_url(url)?, &accept, Bytes::new()).await?;
    if response.status != 200 {
        return Err(ClientError::Malformed(format!(
            "{url} answered HTTP {}, not a Server Card",
            response.status
        )));
    }
    match serde_json::from_slice::<Value>(&response.body) {
        Ok(card) if card.is_object() => Ok(card),
        _ => Err(ClientError::Malformed(format!(
            "{url} answered {}, not a JSON object",
            response.header("content-type").unwrap_or("no content type")
        ))),
    }
}

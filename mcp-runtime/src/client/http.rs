//! A remote server over Streamable HTTP (plain `http://` URLs), with the
//! headers a conforming client sends: `MCP-Protocol-Version`,
//! `Mcp-Method`, `Mcp-Name` and `Mcp-Param-*` for header-mirrored
//! arguments (learned from `tools/list`).

use std::collections::HashMap;

use base64::Engine as _;
use bytes::Bytes;
use http::{Method, Uri};
use serde_json::{Value, json};

use super::authorization::AuthorizationError;
#[cfg(feature = "oauth-client")]
use super::oauth::{OAuth, Session};
use super::transport::{Reply, Transport, TransportError};
use super::web::{WebResponse, exchange, http_url};
use crate::protocol::PROTOCOL_VERSION;
use crate::schema::{HeaderParam, header_params};

/// A server at an `http://` URL.
#[derive(Debug)]
pub struct Remote {
    uri: Uri,
    /// Extra headers on every request (for example `Authorization`).
    headers: Vec<(String, String)>,
    /// Header-mirrored tool parameters; fetched on first use.
    mirrored: Option<Mirrored>,
    /// OAuth, when configured.
    #[cfg(feature = "oauth-client")]
    auth: Option<Session>,
}

impl Remote {
    /// A server at `url`, such as `http://127.0.0.1:8080/mcp`.
    pub fn new(url: &str) -> Result<Self, TransportError> {
        let uri = http_url(url)?;
        Ok(Remote {
            uri,
            headers: Vec::new(),
            mirrored: None,
            #[cfg(feature = "oauth-client")]
            auth: None,
        })
    }

    /// Sends `name: value` with every request. An `Authorization` header
    /// turns OAuth (`oauth`, feature `oauth-client`) off.
    pub fn header(mut self, name: &str, value: &str) -> Self {
        #[cfg(feature = "oauth-client")]
        if name.eq_ignore_ascii_case("authorization") {
            self.auth = None;
        }
        self.headers.push((name.to_owned(), value.to_owned()));
        self
    }

    /// Authorizes requests with OAuth 2.1 when the server asks (a `401`,
    /// or a `403` for missing scopes): discovery, registration, the
    /// authorization code flow and step-up, as [`OAuth`] configures them.
    /// Not used when an `Authorization` header is given with
    /// [`header`](Self::header).
    #[cfg(feature = "oauth-client")]
    #[cfg_attr(docsrs, doc(cfg(feature = "oauth-client")))]
    pub fn oauth(mut self, settings: OAuth) -> Self {
        self.auth = Some(Session::new(settings, &self.uri));
        self
    }

    /// The headers presenting the OAuth access token, if there is one (a
    /// bearer token, or a DPoP-bound one with its proof).
    #[cfg(feature = "oauth-client")]
    fn credentials(&self) -> Result<Vec<(String, String)>, TransportError> {
        match &self.auth {
            Some(auth) => auth.credentials(&self.uri.to_string()),
            None => Ok(Vec::new()),
        }
    }

    /// Whether a refused request (`401`, `403`) has been authorized anew
    /// and should be sent again.
    #[cfg(feature = "oauth-client")]
    async fn authorized_again(&mut self, response: &WebResponse) -> Result<bool, TransportError> {
        let Some(auth) = self.auth.as_mut() else {
            return Ok(false);
        };
        let nonce = response.header("dpop-nonce");
        if !matches!(response.status, 401 | 403) {
            // A server may hand out its next DPoP nonce on any answer.
            if let Some(nonce) = nonce {
                auth.nonce_given(nonce);
            }
            return Ok(false);
        }
        let challenge = response.header("www-authenticate");
        auth.refused(&self.uri, response.status, (challenge, nonce))
            .await
    }

    #[cfg(not(feature = "oauth-client"))]
    fn credentials(&self) -> Result<Vec<(String, String)>, TransportError> {
        Ok(Vec::new())
    }

    /// Without `oauth-client`, a refusal is the caller's to read.
    #[cfg(not(feature = "oauth-client"))]
    async fn authorized_again(&mut self, _: &WebResponse) -> Result<bool, TransportError> {
        Ok(false)
    }

    /// POSTs an MCP message, with the token if there is one, authorizing
    /// and sending it again when the server refuses; a refusal that stands
    /// is the error.
    async fn post(
        &mut self,
        body: String,
        headers: Vec<(String, String)>,
    ) -> Result<(u16, String, Bytes), TransportError> {
        let mut headers = headers;
        headers.extend([
            ("content-type".to_owned(), "application/json".to_owned()),
            (
                "accept".to_owned(),
                "application/json, text/event-stream".to_owned(),
            ),
        ]);
        headers.extend(self.headers.iter().cloned());
        let body = Bytes::from(body);
        loop {
            let mut sent = headers.clone();
            sent.extend(self.credentials()?);
            let response = exchange(Method::POST, &self.uri, &sent, body.clone()).await?;
            if !self.authorized_again(&response).await? {
                if let Some(refusal) = refusal(&response) {
                    return Err(TransportError::refused(refusal));
                }
                let content_type = response
                    .header("content-type")
                    .unwrap_or_default()
                    .to_owned();
                return Ok((response.status, content_type, response.body));
            }
        }
    }

    /// Which arguments of which tools are mirrored into headers, from
    /// `tools/list` (sent with the `_meta` of the call that needs it): the
    /// parameters, or why the tool's definition is invalid.
    async fn mirrored(&mut self, meta: &Value) -> Result<&Mirrored, TransportError> {
        if self.mirrored.is_none() {
            let mut mirrored = HashMap::new();
            let mut cursor: Option<String> = None;
            for page in 0..10_000 {
                let mut params = json!({"_meta": meta});
                if let Some(cursor) = &cursor {
                    params["cursor"] = json!(cursor);
                }
                let id = format!("tool-headers-{page}");
                let message =
                    json!({"jsonrpc": "2.0", "id": id, "method": "tools/list", "params": params});
                let headers = vec![
                    (
                        "mcp-protocol-version".to_owned(),
                        PROTOCOL_VERSION.to_owned(),
                    ),
                    ("mcp-method".to_owned(), "tools/list".to_owned()),
                ];
                let (_, content_type, body) = self.post(message.to_string(), headers).await?;
                let reply = read_reply(&json!(id), &content_type, &body)?;
                let result = &reply.response["result"];
                for tool in result["tools"].as_array().into_iter().flatten() {
                    let (Some(name), Some(schema)) =
                        (tool["name"].as_str(), tool["inputSchema"].as_object())
                    else {
                        continue;
                    };
                    let params = header_params(schema).map_err(|e| e.to_string());
                    mirrored.insert(name.to_owned(), params);
                }
                match result["nextCursor"].as_str() {
                    Some(next) => cursor = Some(next.to_owned()),
                    None => break,
                }
            }
            self.mirrored = Some(mirrored);
        }
        Ok(self.mirrored.get_or_insert_with(HashMap::new))
    }

    /// The `Mcp-Param-*` headers of a `tools/call`; an error for a tool whose
    /// definition the spec says clients must reject.
    async fn param_headers(
        &mut self,
        params: &Value,
    ) -> Result<Vec<(String, String)>, TransportError> {
        let tool = params["name"].as_str().unwrap_or_default();
        let Some(mirrored) = self.mirrored(&params["_meta"]).await?.get(tool) else {
            return Ok(Vec::new());
        };
        let mirrored = mirrored.as_ref().map_err(|problem| {
            TransportError::new(format!(
                "not calling tool `{tool}`: its definition is invalid ({problem}), and a client must reject it (server/tools#x-mcp-header)"
            ))
        })?;
        let mut headers = Vec::new();
        for param in mirrored {
            let mut value = &params["arguments"];
            for key in &param.path {
                value = &value[key];
            }
            let text = match value {
                Value::String(text) => text.clone(),
                Value::Bool(flag) => flag.to_string(),
                Value::Number(number) => integer_text(number),
                // Absent or null: the header is left out.
                _ => continue,
            };
            headers.push((format!("mcp-param-{}", param.name), header_value(&text)));
        }
        Ok(headers)
    }
}

/// The server's refusal to authorize, if `response` is one: a `401`, or a
/// `403` with a `Bearer` challenge. A `403` without one that carries a
/// JSON-RPC error (an `Origin` the server does not answer to) stays that
/// error; any other `403` is a refusal too, rather than a body the client
/// cannot read.
fn refusal(response: &WebResponse) -> Option<AuthorizationError> {
    let refusal = AuthorizationError::new(response.status, response.header("www-authenticate"));
    let refused = match response.status {
        401 => true,
        403 => refusal.challenge.is_some() || !is_rpc_error(&response.body),
        _ => false,
    };
    refused.then_some(refusal)
}

/// Whether `body` is a JSON-RPC error response.
fn is_rpc_error(body: &[u8]) -> bool {
    use serde::Deserialize as _;
    serde_json::from_slice::<Value>(body)
        .ok()
        .and_then(|response| response.get("error").cloned())
        .is_some_and(|error| crate::protocol::ErrorObject::deserialize(error).is_ok())
}

/// Tool name -> its header-mirrored parameters, or why its definition is
/// invalid.
type Mirrored = HashMap<String, Result<Vec<HeaderParam>, String>>;

/// An integer in decimal (`42`, not `42.0`, when sent as a float).
fn integer_text(number: &serde_json::Number) -> String {
    match number.as_f64() {
        Some(float) if number.is_f64() && float.fract() == 0.0 && float.abs() < 9.007e15 => {
            format!("{float:.0}")
        }
        _ => number.to_string(),
    }
}

impl Transport for Remote {
    async fn send(&mut self, id: u64, message: String) -> Result<Reply, TransportError> {
        let value: Value = serde_json::from_str(&message).unwrap_or_default();
        let method = value["method"].as_str().unwrap_or_default().to_owned();
        let mut headers = vec![
            (
                "mcp-protocol-version".to_owned(),
                PROTOCOL_VERSION.to_owned(),
            ),
            ("mcp-method".to_owned(), method.clone()),
        ];
        let name = match method.as_str() {
            "tools/call" | "prompts/get" => value["params"]["name"].as_str(),
            "resources/read" => value["params"]["uri"].as_str(),
            _ => None,
        };
        if let Some(name) = name {
            headers.push(("mcp-name".to_owned(), header_value(name)));
        }
        if method == "tools/call" {
            headers.extend(self.param_headers(&value["params"]).await?);
        }
        let (status, content_type, body) = self.post(message, headers).await?;
        match read_reply(&json!(id), &content_type, &body) {
            Ok(reply) => Ok(reply),
            Err(_) if status != 200 => Err(TransportError::new(format!(
                "HTTP {status}: {}",
                String::from_utf8_lossy(&body).trim()
            ))),
            Err(error) => Err(error),
        }
    }

    fn mirrors_tool_headers(&self) -> bool {
        true
    }
}

/// A header value as the spec encodes it: as is when it is visible ASCII
/// without surrounding spaces, else `=?base64?...?=` (and so is a plain
/// value that looks like that sentinel).
fn header_value(text: &str) -> String {
    let sentinel = text.starts_with("=?base64?") && text.ends_with("?=");
    let plain = text.bytes().all(|b| (0x20..0x7f).contains(&b)) && text.trim() == text && !sentinel;
    if plain {
        text.to_owned()
    } else {
        format!(
            "=?base64?{}?=",
            base64::engine::general_purpose::STANDARD.encode(text)
        )
    }
}

/// The response to request `id` in a JSON or SSE body, with the
/// notifications before it.
fn read_reply(id: &Value, content_type: &str, body: &[u8]) -> Result<Reply, TransportError> {
    let text = std::str::from_utf8(body)
        .map_err(|_| TransportError::new("the response is not UTF-8".into()))?;
    let parse = |json: &str| -> Result<Value, TransportError> {
        serde_json::from_str(json).map_err(|error| {
            TransportError::new(format!("the response is not JSON ({error}): {json}"))
        })
    };
    if content_type.starts_with("text/event-stream") {
        let mut notifications = Vec::new();
        for event in text.split("\n\n") {
            let data: Vec<&str> = event
                .lines()
                .filter_map(|line| line.strip_prefix("data:"))
                .map(|d| d.strip_prefix(' ').unwrap_or(d))
                .collect();
            if data.is_empty() {
                continue;
            }
            let message = parse(&data.join("\n"))?;
            if message.get("id") == Some(id) {
                return Ok(Reply {
                    response: message,
                    notifications,
                });
            }
            notifications.push(message);
        }
        return Err(TransportError::new(
            "the event stream ended without a response".into(),
        ));
    }
    if content_type.starts_with("application/json") {
        return Ok(Reply {
            response: parse(text)?,
            notifications: Vec::new(),
        });
    }
    Err(TransportError::new(format!(
        "unexpected content type `{content_type}`"
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_values_are_encoded_when_not_plain_ascii() {
        assert_eq!(header_value("us-west1"), "us-west1");
        assert_eq!(header_value("Zürich"), "=?base64?WsO8cmljaA==?=");
        assert_eq!(header_value(" padded"), "=?base64?IHBhZGRlZA==?=");
        assert_eq!(header_value("line1\nline2"), "=?base64?bGluZTEKbGluZTI=?=");
        assert_eq!(header_value("\tindented"), "=?base64?CWluZGVudGVk?=");
        assert_eq!(
            header_value("=?base64?literal?="),
            "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="
        );
        assert_eq!(header_value("us west 1"), "us west 1");
        assert_eq!(header_value(""), "");
    }

    #[test]
    fn replies_are_read_from_json_and_event_streams() {
        let sse = "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{}}\n\n: keep-alive\n\ndata: {\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{}}\n\n";
        let reply = read_reply(&json!(7), "text/event-stream", sse.as_bytes()).unwrap();
        assert_eq!(reply.response["id"], 7);
        assert_eq!(reply.notifications.len(), 1);
        let reply = read_reply(
            &json!(7),
            "application/json",
            b"{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{}}",
        )
        .unwrap();
        assert!(reply.notifications.is_empty());
        assert!(read_reply(&json!(7), "text/plain", b"nope").is_err());
    }
}

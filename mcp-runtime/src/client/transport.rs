//! How a client reaches a server: in process, over a child's stdio, or over
//! Streamable HTTP. A transport sends one request and returns its response
//! with the notifications that came before it.

use serde_json::Value;

use super::authorization::AuthorizationError;
use crate::security::Principal;
use crate::server::Server;

/// One request's answer as the client sees it.
#[derive(Clone, Debug, Default)]
pub struct Reply {
    /// The JSON-RPC response.
    pub response: Value,
    /// Notifications sent for this request before its response, in order.
    pub notifications: Vec<Value>,
}

/// Why a request got no JSON-RPC response.
#[derive(Debug)]
pub struct TransportError {
    message: String,
    /// The server refused to authorize the request (a `401`, a `403`):
    /// the client reports it as [`ClientError::Authorization`].
    ///
    /// [`ClientError::Authorization`]: super::ClientError::Authorization
    pub(crate) refusal: Option<Box<AuthorizationError>>,
}

impl TransportError {
    pub(crate) fn new(message: String) -> Self {
        TransportError {
            message,
            refusal: None,
        }
    }

    /// The server refused to authorize the request.
    #[cfg_attr(
        not(feature = "http"),
        expect(dead_code, reason = "only the HTTP transport is refused authorization")
    )]
    pub(crate) fn refused(refusal: AuthorizationError) -> Self {
        TransportError {
            message: refusal.to_string(),
            refusal: Some(Box::new(refusal)),
        }
    }
}

impl std::fmt::Display for TransportError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for TransportError {}

/// Sends JSON-RPC requests to a server.
#[expect(
    async_fn_in_trait,
    reason = "transports are used by concrete type, never boxed"
)]
pub trait Transport {
    /// Sends `message` (a request with `id`) and waits for its response.
    async fn send(&mut self, id: u64, message: String) -> Result<Reply, TransportError>;

    /// Whether tool arguments marked `x-mcp-header` travel as HTTP headers
    /// here (Streamable HTTP): the client must then leave tools whose
    /// annotations are invalid out of `tools/list` (server/tools#x-mcp-header).
    fn mirrors_tool_headers(&self) -> bool {
        false
    }
}

/// The server in this process, through the same dispatcher the transports
/// use, without serialization to a socket.
#[derive(Clone, Debug)]
pub struct InProcess {
    server: Server,
    principal: Option<Principal>,
}

impl InProcess {
    /// Talks to `server`.
    pub fn new(server: Server) -> Self {
        InProcess {
            server,
            principal: None,
        }
    }

    /// Sends every request on behalf of `principal`, as if a transport in
    /// front had authenticated it (see [`Server::exchange_as`]).
    #[must_use]
    pub fn as_principal(mut self, principal: Principal) -> Self {
        self.principal = Some(principal);
        self
    }

    /// The server.
    pub fn server(&self) -> &Server {
        &self.server
    }
}

impl Transport for InProcess {
    async fn send(&mut self, _id: u64, message: String) -> Result<Reply, TransportError> {
        let exchange = self
            .server
            .exchange_as(message, self.principal.clone())
            .await;
        let parse = |frame: &str| {
            serde_json::from_str(frame).map_err(|error| {
                TransportError::new(format!("the server sent invalid JSON: {error}"))
            })
        };
        let response = exchange
            .response
            .ok_or_else(|| TransportError::new("the server sent no response".into()))?;
        Ok(Reply {
            response: parse(&response)?,
            notifications: exchange
                .notifications
                .iter()
                .map(|n| parse(n))
                .collect::<Result<_, _>>()?,
        })
    }
}

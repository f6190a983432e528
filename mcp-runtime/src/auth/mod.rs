//! Authorization for the HTTP transport: this server as an OAuth 2.1
//! resource server (MCP authorization spec, revision 2026-07-28).
//!
//! One step turns it on (`.jwt()` and `.introspection(..)` need the `auth`
//! feature; a [`TokenVerifier`] of your own does not):
//!
//! ```no_run
//! # #[cfg(feature = "auth")] {
//! use mcp_runtime::HttpOptions;
//! use mcp_runtime::auth::Authorization;
//!
//! let options = HttpOptions::new().authorization(
//!     Authorization::new("https://notes.example.com/mcp")
//!         .authorization_server("https://auth.example.com")
//!         .jwt(),
//! );
//! # }
//! ```
//!
//! Then:
//!
//! - Protected Resource Metadata (RFC 9728) is served at the well-known
//!   path for the endpoint's URI (`/.well-known/oauth-protected-resource/mcp`
//!   for `https://notes.example.com/mcp`) and, when the endpoint has a path,
//!   also at the root (`/.well-known/oauth-protected-resource`), the two
//!   places clients look. It lists `resource`, `authorization_servers`,
//!   `bearer_methods_supported: ["header"]` and `scopes_supported` (every
//!   `scopes = [...]` declared in code, plus
//!   [`scopes_supported`](Authorization::scopes_supported)).
//! - Every request to the MCP endpoint needs `Authorization: Bearer
//!   <token>`, JSON-RPC notifications included. Only `server/discover` can
//!   be opened to anonymous callers
//!   ([`public_discover`](Authorization::public_discover)).
//!   Without a token: `401` and `WWW-Authenticate: Bearer
//!   resource_metadata="..."` (with `scope` when the request needs
//!   scopes). A bad token: `401` with `error="invalid_token"`. A token
//!   lacking a scope the tool, prompt or resource declares (or that the
//!   prompt or template a `completion/complete` refers to declares): `403`
//!   with `error="insufficient_scope"` and every scope the request needs. A
//!   token in the query string (`?access_token=`): `400`
//!   `invalid_request`.
//! - Handlers receive the caller as `#[ctx] principal: Option<&Principal>`,
//!   and MRTR `requestState` is bound to it.
//! - A token bound to a key (DPoP, RFC 9449: `cnf.jkt`) is served only as
//!   `Authorization: DPoP <token>` with a valid proof in the `DPoP` header
//!   (feature `auth`; see `DpopSettings` for nonces and for refusing
//!   bearer tokens altogether). A bad proof: `401` with `WWW-Authenticate:
//!   DPoP error="invalid_dpop_proof"`; the bound token sent as a bearer
//!   token: `401` `invalid_token`. Proofs' `jti`s are kept in the server's
//!   replay store, Redis when it has shared state.
//!
//! Tokens are never logged, never accepted outside the `Authorization`
//! header, and never passed on: once verified, the header is removed from
//! the request handlers see, and the [`Principal`](crate::security::Principal) does not hold the token.
//!
//! When the endpoint is mounted in your own router
//! ([`Server::http_service`](crate::Server::http_service)), route the two
//! well-known paths to the same service.
//! On stdio none of this applies: credentials come from the environment.

mod challenge;
mod config;
#[cfg(feature = "auth")]
mod discovery;
#[cfg(feature = "auth")]
mod dpop;
/// Without the `auth` feature no proof can be checked: DPoP-bound tokens
/// are refused.
#[cfg(not(feature = "auth"))]
#[path = "without_dpop.rs"]
mod dpop;
#[cfg(feature = "auth")]
mod fetch;
pub(crate) mod gate;
#[cfg(feature = "auth")]
mod introspection;
#[cfg(feature = "auth")]
mod jwks;
#[cfg(feature = "auth")]
mod jwt;
mod metadata;
pub(crate) mod resource;
mod scope;
mod verifier;

pub use self::config::Authorization;
#[cfg(feature = "auth")]
#[cfg_attr(docsrs, doc(cfg(feature = "auth")))]
pub use self::dpop::DpopSettings;
#[cfg(feature = "auth")]
#[cfg_attr(docsrs, doc(cfg(feature = "auth")))]
pub use self::introspection::{IntrospectionSettings, IntrospectionVerifier};
#[cfg(feature = "auth")]
#[cfg_attr(docsrs, doc(cfg(feature = "auth")))]
pub use self::jwt::{DEFAULT_ALGORITHMS, JwtSettings, JwtVerifier, SigningAlgorithm};
pub use self::resource::InvalidResource;
pub use self::scope::is_scope_token;
pub use self::verifier::{TokenVerifier, VerifyError, VerifyFuture};

#[cfg(all(test, feature = "auth"))]
mod tests;

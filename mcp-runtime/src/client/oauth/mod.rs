//! The client side of the spec's authorization chapter, for the HTTP
//! transport ([`Remote::oauth`](super::Remote::oauth)): a `401` or a `403`
//! `insufficient_scope` from the server starts the flow, and the request is
//! sent again with the token.
//!
//! Discovery (Protected Resource Metadata, then the authorization server's
//! metadata, both validated), registration (pre-registered, a Client ID
//! Metadata Document URL, or Dynamic Client Registration as a native
//! application, kept per issuer), the authorization code with PKCE and
//! `state`, the `iss` check, the token request with the resource
//! indicator, refresh, and scope step-up (the union of what was granted and
//! what the challenge asks; at most [`MAX_AUTHORIZATIONS`] authorizations
//! and refreshes per process).
//!
//! Instead of a user's approval in a browser, the grant can be the
//! client's own credentials ([`OAuth::client_credentials`]), a workload's
//! identity token ([`OAuth::jwt_bearer`]), or the identity assertion of a
//! user signed in through the organization's identity provider
//! ([`OAuth::enterprise`]).

#[cfg(feature = "oauth-client-jose")]
mod assertion;
mod cache;
mod discovery;
#[cfg(feature = "oauth-client-jose")]
mod dpop;
#[cfg(not(feature = "oauth-client-jose"))]
#[path = "without_jose.rs"]
mod dpop;
mod enterprise;
mod grant;
mod random;
mod redirect;
mod secret;

use std::collections::HashMap;
use std::path::PathBuf;

use http::Uri;

#[cfg(feature = "oauth-client-jose")]
use self::assertion::AssertionKey;
use self::discovery::{Challenge, ResourceMetadata, ServerMetadata, parse_challenge};
use self::dpop::DpopKey;
pub use self::enterprise::{EnterpriseIdp, IdentityAssertion};
use self::grant::{Registration, Tokens};
use self::secret::SecretSource;
use crate::client::transport::TransportError;

/// Authorizations one process runs at most: a server that keeps refusing
/// every token is not asked again forever.
pub const MAX_AUTHORIZATIONS: u32 = 3;

/// The redirect URI registered for this client: a loopback URI (RFC 8252
/// §7.3), whose port a browser flow chooses when it runs.
const REGISTERED_REDIRECT: &str = "http://127.0.0.1/callback";

/// How the authorization response reaches the client.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Authorize {
    /// A person opens the printed URL in a browser; the response comes back
    /// to a loopback port of this process.
    #[default]
    Browser,
    /// The client requests the URL itself and reads the redirect: for
    /// authorization servers that approve without a person.
    Fetch,
}

/// How the built-in client obtains OAuth 2.1 tokens for servers that ask.
#[derive(Clone)]
pub struct OAuth {
    client_name: String,
    client: Option<(String, Option<String>, Option<String>)>,
    client_metadata_url: Option<String>,
    authorize: Authorize,
    token_cache: Option<PathBuf>,
    grant: Grant,
    #[cfg(feature = "oauth-client-jose")]
    assertion: Option<AssertionKey>,
    dpop: bool,
}

/// The grant that gets tokens.
#[derive(Clone, Debug)]
enum Grant {
    /// A user approves: the authorization code flow with PKCE.
    AuthorizationCode,
    /// The client acts for itself (RFC 6749 §4.4).
    ClientCredentials,
    /// A JWT the platform issued to this workload, exchanged for a token
    /// (RFC 7523 §2.1: workload identity federation).
    JwtBearer(SecretSource),
    /// A user's identity assertion from the organization's identity
    /// provider, traded there for an ID-JAG, presented for a token
    /// (enterprise-managed authorization).
    Enterprise(EnterpriseIdp),
}

/// Without the client's secret or key: a debug print must not leak them.
impl std::fmt::Debug for OAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let client = self
            .client
            .as_ref()
            .map(|(id, secret, issuer)| (id, secret.as_ref().map(|_| "<redacted>"), issuer));
        f.debug_struct("OAuth")
            .field("client_name", &self.client_name)
            .field("client", &client)
            .field("client_metadata_url", &self.client_metadata_url)
            .field("authorize", &self.authorize)
            .field("token_cache", &self.token_cache)
            .field("grant", &self.grant)
            .field("dpop", &self.dpop)
            .finish_non_exhaustive()
    }
}

impl OAuth {
    /// Registers dynamically as `client_name` where nothing else is given.
    pub fn new(client_name: impl Into<String>) -> Self {
        OAuth {
            client_name: client_name.into(),
            client: None,
            client_metadata_url: None,
            authorize: Authorize::default(),
            token_cache: None,
            grant: Grant::AuthorizationCode,
            #[cfg(feature = "oauth-client-jose")]
            assertion: None,
            dpop: false,
        }
    }

    /// A pre-registered client, used first; for the authorization server
    /// `issuer` only, when given (credentials belong to one server).
    pub fn client(
        mut self,
        id: impl Into<String>,
        secret: Option<String>,
        issuer: Option<String>,
    ) -> Self {
        self.client = Some((id.into(), secret, issuer));
        self
    }

    /// The HTTPS URL of this client's Client ID Metadata Document, used as
    /// its `client_id` with servers that support such documents.
    pub fn client_metadata_url(mut self, url: impl Into<String>) -> Self {
        self.client_metadata_url = Some(url.into());
        self
    }

    /// Authorizes with the client credentials grant, for a client acting
    /// for itself with no user present (a CI job, a daemon, a backend
    /// agent; the `io.modelcontextprotocol/oauth-client-credentials`
    /// extension): the pre-registered [`client`](Self::client)
    /// authenticates at the token endpoint as the authorization server's
    /// metadata says (`client_secret_basic` or `client_secret_post`), with
    /// the resource indicator and the scopes; no browser, no registration,
    /// no refresh token (a refused token is simply requested again).
    pub fn client_credentials(mut self) -> Self {
        self.grant = Grant::ClientCredentials;
        self
    }

    /// Authorizes with a JWT the platform issued to this workload (a
    /// Kubernetes service account token, a CI system's OIDC token),
    /// exchanged for an access token with the JWT bearer grant (RFC 7523
    /// §2.1; the workload identity federation extension). The
    /// pre-registered [`client`](Self::client) names the client (with its
    /// secret if it has one). A refused assertion is an error, neither
    /// retried nor traded for another grant.
    pub fn jwt_bearer(mut self, assertion: impl Into<String>) -> Self {
        self.grant = Grant::JwtBearer(SecretSource::Inline(assertion.into()));
        self
    }

    /// [`jwt_bearer`](Self::jwt_bearer) with the JWT in the file at
    /// `path`, read (off the async runtime) at each authorization, since
    /// platforms rotate such tokens in place.
    pub fn jwt_bearer_file(mut self, path: impl Into<PathBuf>) -> Self {
        self.grant = Grant::JwtBearer(SecretSource::File(path.into()));
        self
    }

    /// Authorizes through the organization's identity provider (the
    /// `io.modelcontextprotocol/enterprise-managed-authorization`
    /// extension), for a user who signed in to this client there: `idp`'s
    /// token endpoint trades the user's identity assertion (an ID token or
    /// a SAML assertion) for an ID-JAG (RFC 8693 Token Exchange; audience
    /// the MCP server's authorization server, resource the MCP server, and
    /// the scopes), which is then presented to the authorization server
    /// with the JWT bearer grant (RFC 7523) for the token. No browser, no
    /// registration, no refresh token: every authorization gets a new
    /// ID-JAG, since the profile has authorization servers refuse one
    /// presented twice.
    ///
    /// At the authorization server the client is the pre-registered
    /// [`client`](Self::client) (the one the IdP names in the ID-JAG; with
    /// its secret, or its [signing key](Self::private_key_jwt), if it has
    /// one), else its [Client ID Metadata
    /// Document](Self::client_metadata_url) where the server supports such
    /// documents. A refusal at either step is an error saying which,
    /// neither retried nor traded for another grant.
    ///
    /// ```no_run
    /// use mcp_runtime::client::oauth::{EnterpriseIdp, IdentityAssertion, OAuth};
    ///
    /// let idp = EnterpriseIdp::new(
    ///     "http://idp.example.internal/oauth2/token",
    ///     "mcp-client-at-idp",
    ///     IdentityAssertion::id_token_file("/run/user/1000/id_token"),
    /// )
    /// .client_secret_file("/etc/mcp/idp-secret");
    /// let oauth = OAuth::new("notes agent")
    ///     .client("mcp-client-at-notes", Some("...".into()), None)
    ///     .enterprise(idp);
    /// ```
    pub fn enterprise(mut self, idp: EnterpriseIdp) -> Self {
        self.grant = Grant::Enterprise(idp);
        self
    }

    #[cfg(feature = "oauth-client-jose")]
    #[cfg_attr(docsrs, doc(cfg(feature = "oauth-client-jose")))]
    /// With the [client credentials grant](Self::client_credentials),
    /// authenticates the pre-registered client with a JWT it signs
    /// (`private_key_jwt`, RFC 7523) instead of a secret: `key_pem` is its
    /// private key in PEM, `algorithm` the JWS algorithm registered for it
    /// (`ES256`, `RS256`, `PS256`, `EdDSA`, ...). Each token request gets
    /// a fresh assertion (`iss` and `sub` the client id, `aud` the
    /// authorization server's issuer, a minute of life, a new `jti`).
    pub fn private_key_jwt(self, key_pem: impl Into<String>, algorithm: impl Into<String>) -> Self {
        self.signing_key(SecretSource::Inline(key_pem.into()), algorithm.into())
    }

    #[cfg(feature = "oauth-client-jose")]
    #[cfg_attr(docsrs, doc(cfg(feature = "oauth-client-jose")))]
    /// [`private_key_jwt`](Self::private_key_jwt) with the key in the file
    /// at `path`, read (off the async runtime) when a token is needed.
    pub fn private_key_jwt_file(
        self,
        path: impl Into<PathBuf>,
        algorithm: impl Into<String>,
    ) -> Self {
        self.signing_key(SecretSource::File(path.into()), algorithm.into())
    }

    #[cfg(feature = "oauth-client-jose")]
    fn signing_key(mut self, source: SecretSource, algorithm: String) -> Self {
        self.assertion = Some(AssertionKey { source, algorithm });
        self
    }

    #[cfg(feature = "oauth-client-jose")]
    #[cfg_attr(docsrs, doc(cfg(feature = "oauth-client-jose")))]
    /// Binds tokens to a key of this client's (DPoP, RFC 9449), so that a
    /// stolen token is useless without it: a P-256 key is made for the
    /// client (and kept in the [token cache](Self::token_cache), beside the
    /// tokens it binds), every token request and every request to the
    /// server carries a fresh proof signed with it, the token goes as
    /// `Authorization: DPoP`, and a server's or authorization server's
    /// `use_dpop_nonce` challenge is answered with its nonce. A token the
    /// authorization server issues unbound (`token_type` `Bearer`) is sent
    /// as a bearer token.
    pub fn dpop(mut self) -> Self {
        self.dpop = true;
        self
    }

    /// How the authorization response comes back.
    pub fn authorize(mut self, how: Authorize) -> Self {
        self.authorize = how;
        self
    }

    /// Keeps tokens and registrations in `path` across processes, and asks
    /// for refresh tokens. On Unix the file is its owner's only (mode
    /// `0600`), replaced whole through a temporary file and a rename, under
    /// a lock on `<path>.lock`; a path that is a symbolic link, not a
    /// regular file, another user's, open to group or others, or not a
    /// token cache is refused with an error rather than read or replaced.
    /// The file is read when the server first refuses a request.
    pub fn token_cache(mut self, path: impl Into<PathBuf>) -> Self {
        self.token_cache = Some(path.into());
        self
    }
}

/// A token in use for one server.
#[derive(Clone, serde::Serialize, serde::Deserialize)]
struct Held {
    issuer: String,
    resource: String,
    access_token: String,
    refresh_token: Option<String>,
    scopes: Vec<String>,
    /// `DPoP` for a token bound to `dpop_key`; absent for a bearer token.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    token_type: Option<String>,
    /// The DPoP key the token is bound to (base64 PKCS#8): the token is
    /// useless without it, so it is kept with it, under the same
    /// protections.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    dpop_key: Option<String>,
}

impl Held {
    /// Whether the token is bound to a DPoP key.
    fn is_dpop(&self) -> bool {
        self.token_type
            .as_deref()
            .is_some_and(|kind| kind.eq_ignore_ascii_case("dpop"))
    }
}

/// Without the tokens: a debug print must not leak them.
impl std::fmt::Debug for Held {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Held")
            .field("issuer", &self.issuer)
            .field("resource", &self.resource)
            .field("access_token", &"<redacted>")
            .field(
                "refresh_token",
                &self.refresh_token.as_ref().map(|_| "<redacted>"),
            )
            .field("scopes", &self.scopes)
            .field("token_type", &self.token_type)
            .field("dpop_key", &self.dpop_key.as_ref().map(|_| "<redacted>"))
            .finish()
    }
}

/// What the token cache file holds.
#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
struct Cache {
    /// By server URL.
    tokens: HashMap<String, Held>,
    /// Dynamic registrations, by issuer.
    clients: HashMap<String, Registration>,
}

/// One server's authorization state, in a [`Remote`](super::Remote).
#[derive(Debug)]
pub(crate) struct Session {
    settings: OAuth,
    server: String,
    held: Option<Held>,
    clients: HashMap<String, Registration>,
    authorizations: u32,
    /// The client's DPoP key, with [`OAuth::dpop`].
    dpop: Option<DpopKey>,
    /// The server's latest DPoP nonce (RFC 9449 §9).
    nonce: Option<String>,
    /// Whether the token cache, if any, has been read. It is read when the
    /// server first refuses a request, on a blocking thread, rather than
    /// here: a session is built by a synchronous builder, maybe on an async
    /// worker. A cached token thus costs one refused request per process.
    cache_read: bool,
}

impl Session {
    pub(crate) fn new(settings: OAuth, server: &Uri) -> Session {
        Session {
            cache_read: settings.token_cache.is_none(),
            held: None,
            clients: HashMap::new(),
            settings,
            server: server.to_string(),
            authorizations: 0,
            dpop: None,
            nonce: None,
        }
    }

    /// The headers that present the token to `url`, if there is one: a
    /// bearer token, or a DPoP-bound one with a fresh proof for this
    /// request (`POST`: the transport's only method).
    pub(crate) fn credentials(&self, url: &str) -> Result<Vec<(String, String)>, TransportError> {
        let Some(held) = &self.held else {
            return Ok(Vec::new());
        };
        let token = held.access_token.as_str();
        match self.dpop.as_ref().filter(|_| held.is_dpop()) {
            Some(key) => Ok(vec![
                ("authorization".to_owned(), format!("DPoP {token}")),
                (
                    "dpop".to_owned(),
                    key.proof("POST", url, Some(token), self.nonce.as_deref())?,
                ),
            ]),
            None => Ok(vec![(
                "authorization".to_owned(),
                format!("Bearer {token}"),
            )]),
        }
    }

    /// Keeps the server's DPoP nonce, which any response may carry: the
    /// next proof includes it. Whether it is a new one.
    pub(crate) fn nonce_given(&mut self, nonce: &str) -> bool {
        if self.dpop.is_none() || self.nonce.as_deref() == Some(nonce) {
            return false;
        }
        self.nonce = Some(nonce.to_owned());
        true
    }

    /// Handles a `401` or `403` from the server: whether a new token was
    /// obtained, so that the request is worth sending again.
    pub(crate) async fn refused(
        &mut self,
        server: &Uri,
        status: u16,
        (www_authenticate, dpop_nonce): (Option<&str>, Option<&str>),
    ) -> Result<bool, TransportError> {
        if self.read_cache().await? {
            return Ok(true);
        }
        let challenge = www_authenticate
            .and_then(parse_challenge)
            .unwrap_or_default();
        if status == 401 && challenge.error.as_deref() == Some("use_dpop_nonce") {
            // The same token again, with a proof carrying the new nonce;
            // a nonce demanded again unchanged is not retried.
            return Ok(dpop_nonce.is_some_and(|nonce| self.nonce_given(nonce)));
        }
        let wanted = match (status, challenge.error.as_deref()) {
            (401, _) => {
                if self.refresh().await {
                    return Ok(true);
                }
                self.held = None;
                challenge.scope.as_deref().map(scopes)
            }
            (403, Some("insufficient_scope")) => {
                let granted = self
                    .held
                    .as_ref()
                    .map(|h| h.scopes.clone())
                    .unwrap_or_default();
                let mut union = granted.clone();
                for scope in challenge.scope.as_deref().map(scopes).unwrap_or_default() {
                    if !union.contains(&scope) {
                        union.push(scope);
                    }
                }
                if union.iter().all(|s| granted.contains(s)) {
                    return Ok(false);
                }
                Some(union)
            }
            _ => return Ok(false),
        };
        self.authorize(server, &challenge, wanted).await?;
        Ok(true)
    }

    /// Reads the token cache the first time the server refuses a request:
    /// whether it held a token for this server, to send the request again
    /// with. A cache that is refused (see [`OAuth::token_cache`]) is the
    /// error.
    async fn read_cache(&mut self) -> Result<bool, TransportError> {
        if self.cache_read {
            return Ok(false);
        }
        self.cache_read = true;
        let Some(path) = self.settings.token_cache.clone() else {
            return Ok(false);
        };
        let cache = off_the_runtime(move || cache::load(&path)).await?;
        for (issuer, registration) in cache.clients {
            self.clients.entry(issuer).or_insert(registration);
        }
        self.held = cache.tokens.get(&self.server).cloned();
        if let Some(cached) = self.held.as_ref().and_then(|held| held.dpop_key.as_deref()) {
            match DpopKey::from_cached(cached) {
                Ok(key) => self.dpop = Some(key),
                Err(error) => {
                    // A bound token without its key is useless: authorize
                    // again rather than fail.
                    tracing::warn!(%error, "the cached token is bound to a DPoP key this client cannot use");
                    self.held = None;
                }
            }
        }
        Ok(self.held.is_some())
    }

    async fn authorize(
        &mut self,
        server: &Uri,
        challenge: &Challenge,
        wanted: Option<Vec<String>>,
    ) -> Result<(), TransportError> {
        if self.authorizations >= MAX_AUTHORIZATIONS {
            return Err(TransportError::new(format!(
                "the server refused {MAX_AUTHORIZATIONS} authorizations in a row: giving up"
            )));
        }
        self.authorizations += 1;
        let resource = discovery::resource_metadata(server, challenge).await?;
        let metadata = discovery::server_metadata(&resource.issuer).await?;
        let scopes = self.scopes(wanted, &resource, &metadata);
        let resource_uri = resource.resource.as_str();
        if self.settings.dpop && self.dpop.is_none() {
            self.dpop = Some(DpopKey::generate()?);
        }
        let dpop = self.dpop.as_ref();
        let tokens = match &self.settings.grant {
            Grant::AuthorizationCode => {
                metadata.check_authorization_code()?;
                let client = self.client_for(&metadata).await?;
                self.grant(&metadata, &client, &resource, &scopes).await?
            }
            Grant::ClientCredentials => {
                let client = self.preregistered(&metadata)?;
                let signed = self.signed_assertion(&client, &metadata).await?;
                let grant = (resource_uri, signed.as_deref());
                grant::client_credentials(&metadata, &client, grant, &scopes, dpop).await?
            }
            Grant::JwtBearer(source) => {
                let client = self.workload_client(&metadata)?;
                let jwt = source.read("the workload's identity token").await?;
                let grant = (resource_uri, jwt.trim());
                grant::jwt_bearer(&metadata, &client, grant, None, &scopes, dpop).await?
            }
            Grant::Enterprise(idp) => {
                let client = self.enterprise_client(&metadata)?;
                let signed = self.signed_assertion(&client, &metadata).await?;
                let client = (&client, signed.as_deref());
                enterprise::authorize(idp, &metadata, client, resource_uri, &scopes, dpop).await?
            }
        };
        self.hold(&metadata, &resource, tokens).await;
        Ok(())
    }

    /// The scopes to ask for: the challenge's (with what was granted, on
    /// step-up), else all the resource lists, else none; with
    /// `offline_access` when tokens are kept and the server offers it.
    fn scopes(
        &self,
        wanted: Option<Vec<String>>,
        resource: &ResourceMetadata,
        metadata: &ServerMetadata,
    ) -> Vec<String> {
        let mut scopes = wanted
            .or_else(|| resource.scopes_supported.clone())
            .unwrap_or_default();
        let offered = |scope: &str| {
            metadata
                .scopes_supported
                .as_ref()
                .is_some_and(|s| s.iter().any(|x| x == scope))
        };
        let refreshes = metadata
            .grant_types
            .as_ref()
            .is_none_or(|g| g.iter().any(|t| t == "refresh_token"));
        // Refresh tokens are for a user's grant: a client or a workload
        // asks again.
        let kept = self.settings.token_cache.is_some()
            && matches!(self.settings.grant, Grant::AuthorizationCode);
        if kept
            && refreshes
            && offered("offline_access")
            && !scopes.iter().any(|s| s == "offline_access")
        {
            scopes.push("offline_access".into());
        }
        scopes
    }

    /// A `private_key_jwt` assertion for `client`, if it signs one.
    #[cfg(feature = "oauth-client-jose")]
    async fn signed_assertion(
        &self,
        client: &Registration,
        metadata: &ServerMetadata,
    ) -> Result<Option<String>, TransportError> {
        let Some(key) = &self.settings.assertion else {
            return Ok(None);
        };
        let pem = key.source.read("the client's signing key").await?;
        assertion::sign(key, &pem, &client.client_id, metadata).map(Some)
    }

    /// Without `oauth-client-jose`, the client never signs.
    #[cfg(not(feature = "oauth-client-jose"))]
    async fn signed_assertion(
        &self,
        _: &Registration,
        _: &ServerMetadata,
    ) -> Result<Option<String>, TransportError> {
        Ok(None)
    }

    /// Whether the client authenticates with a key rather than a secret.
    fn signs(&self) -> bool {
        #[cfg(feature = "oauth-client-jose")]
        return self.settings.assertion.is_some();
        #[cfg(not(feature = "oauth-client-jose"))]
        return false;
    }

    /// The client a workload's token is exchanged as: pre-registered, with
    /// its secret if it has one.
    fn workload_client(&self, metadata: &ServerMetadata) -> Result<Registration, TransportError> {
        match &self.settings.client {
            Some((id, secret, bound)) if bound.as_ref().is_none_or(|b| *b == metadata.issuer) => {
                Ok(Registration::given(id.clone(), secret.clone(), metadata))
            }
            Some((_, _, Some(bound))) => Err(TransportError::new(format!(
                "the client is pre-registered with {bound}, but the server's authorization server is now {}",
                metadata.issuer
            ))),
            _ => Err(TransportError::new(
                "the JWT bearer grant needs this client's id (--client-id)".into(),
            )),
        }
    }

    /// The client an ID-JAG is presented as (the profile's §5): the
    /// pre-registered one (authenticating with its key if it signs, else
    /// its secret if it has one), else its Client ID Metadata Document
    /// where the server supports them. Never a new registration: the IdP
    /// names the client in the ID-JAG, and the authorization server checks
    /// that it is the one authenticating.
    fn enterprise_client(&self, metadata: &ServerMetadata) -> Result<Registration, TransportError> {
        if let Some((id, secret, bound)) = &self.settings.client {
            return match bound {
                Some(bound) if *bound != metadata.issuer => Err(TransportError::new(format!(
                    "the client is pre-registered with {bound}, but the server's authorization server is now {}",
                    metadata.issuer
                ))),
                _ => {
                    let secret = secret.clone().filter(|_| !self.signs());
                    Ok(Registration::given(id.clone(), secret, metadata))
                }
            };
        }
        match &self.settings.client_metadata_url {
            Some(url) if metadata.client_id_metadata_documents => {
                Ok(Registration::given(url.clone(), None, metadata))
            }
            _ => Err(TransportError::new(format!(
                "enterprise-managed authorization needs this client's id at {} (--client-id), or a Client ID Metadata Document it supports (--client-metadata-url)",
                metadata.issuer
            ))),
        }
    }

    /// The pre-registered client, which the client credentials grant needs:
    /// it has no other way to authenticate.
    fn preregistered(&self, metadata: &ServerMetadata) -> Result<Registration, TransportError> {
        // A signing key stands in for the secret (and the client id goes
        // in the form, beside the assertion).
        let signs = self.signs();
        match &self.settings.client {
            Some((id, secret, bound))
                if (secret.is_some() || signs)
                    && bound.as_ref().is_none_or(|b| *b == metadata.issuer) =>
            {
                let secret = secret.clone().filter(|_| !signs);
                Ok(Registration::given(id.clone(), secret, metadata))
            }
            Some((_, secret, Some(bound))) if secret.is_some() || signs => Err(TransportError::new(format!(
                "the client is pre-registered with {bound}, but the server's authorization server is now {}",
                metadata.issuer
            ))),
            _ => Err(TransportError::new(
                "the client credentials grant needs a pre-registered client with its secret or signing key (--client-id, and --client-secret or --client-key)".into(),
            )),
        }
    }

    /// This client's identity at the server: pre-registered, then a Client
    /// ID Metadata Document, then one registered before, then a new
    /// registration. Never one from another issuer.
    async fn client_for(
        &mut self,
        metadata: &ServerMetadata,
    ) -> Result<Registration, TransportError> {
        let issuer = &metadata.issuer;
        if let Some((id, secret, bound)) = &self.settings.client {
            return match bound {
                Some(bound) if bound != issuer => Err(TransportError::new(format!(
                    "the client is pre-registered with {bound}, but the server's authorization server is now {issuer}"
                ))),
                _ => Ok(Registration::given(id.clone(), secret.clone(), metadata)),
            };
        }
        if let (true, Some(url)) = (
            metadata.client_id_metadata_documents,
            &self.settings.client_metadata_url,
        ) {
            return Ok(Registration::given(url.clone(), None, metadata));
        }
        if let Some(known) = self.clients.get(issuer) {
            return Ok(known.clone());
        }
        let Some(endpoint) = &metadata.registration_endpoint else {
            return Err(TransportError::new(format!(
                "{issuer} offers no registration: pass this client's credentials (--client-id)"
            )));
        };
        let registered = grant::register(
            metadata,
            endpoint,
            REGISTERED_REDIRECT,
            &self.settings.client_name,
        )
        .await?;
        self.clients.insert(issuer.clone(), registered.clone());
        Ok(registered)
    }

    /// The authorization code flow, up to the tokens.
    async fn grant(
        &self,
        metadata: &ServerMetadata,
        client: &Registration,
        resource: &ResourceMetadata,
        scopes: &[String],
    ) -> Result<Tokens, TransportError> {
        let loopback = match self.settings.authorize {
            Authorize::Browser => Some(redirect::Loopback::open().await?),
            Authorize::Fetch => None,
        };
        let redirect_uri = loopback
            .as_ref()
            .map_or(REGISTERED_REDIRECT.to_owned(), |l| l.redirect_uri.clone());
        let (state, verifier) = (grant::random_text(), grant::random_text());
        let challenge = grant::challenge(&verifier);
        let scope = scopes.join(" ");
        let mut query = vec![
            ("response_type", "code"),
            ("client_id", client.client_id.as_str()),
            ("redirect_uri", redirect_uri.as_str()),
            ("code_challenge", challenge.as_str()),
            ("code_challenge_method", "S256"),
            ("state", state.as_str()),
            ("resource", resource.resource.as_str()),
        ];
        if !scope.is_empty() {
            query.push(("scope", scope.as_str()));
        }
        let endpoint = &metadata.authorization_endpoint;
        let separator = if endpoint.contains('?') { '&' } else { '?' };
        let url = format!("{endpoint}{separator}{}", grant::form(&query));
        let params = match loopback {
            Some(loopback) => loopback.wait(&url).await?,
            None => redirect::fetch(&url).await?,
        };
        let code = grant::code_of(&params, &state, metadata)?;
        let exchange = [
            ("grant_type", "authorization_code"),
            ("code", code.as_str()),
            ("redirect_uri", redirect_uri.as_str()),
            ("code_verifier", verifier.as_str()),
            ("resource", resource.resource.as_str()),
        ];
        grant::request_token(metadata, client, &exchange, scopes, self.dpop.as_ref()).await
    }

    /// A new access token from the refresh token, if there is one and the
    /// server still uses the same authorization server.
    async fn refresh(&mut self) -> bool {
        // A refresh counts as an authorization: a server that refuses every
        // token is not asked forever.
        if self.authorizations >= MAX_AUTHORIZATIONS {
            return false;
        }
        let Some(held) = self.held.clone() else {
            return false;
        };
        let (Some(refresh_token), Some(client)) =
            (&held.refresh_token, self.clients.get(&held.issuer).cloned())
        else {
            return false;
        };
        self.authorizations += 1;
        let Ok(metadata) = discovery::server_metadata(&held.issuer).await else {
            return false;
        };
        let grant = [
            ("grant_type", "refresh_token"),
            ("refresh_token", refresh_token.as_str()),
            ("resource", held.resource.as_str()),
        ];
        let dpop = self.dpop.as_ref();
        match grant::request_token(&metadata, &client, &grant, &held.scopes, dpop).await {
            Ok(tokens) => {
                let resource = ResourceMetadata {
                    resource: held.resource.clone(),
                    issuer: held.issuer.clone(),
                    scopes_supported: None,
                };
                self.hold(&metadata, &resource, tokens).await;
                true
            }
            Err(_) => false,
        }
    }

    async fn hold(
        &mut self,
        metadata: &ServerMetadata,
        resource: &ResourceMetadata,
        tokens: Tokens,
    ) {
        let refresh_token = tokens
            .refresh_token
            .or_else(|| self.held.as_ref().and_then(|h| h.refresh_token.clone()))
            .filter(|_| self.settings.token_cache.is_some());
        // A token bound to the key is kept with the key.
        let bound = tokens.token_type.eq_ignore_ascii_case("dpop");
        let dpop_key = self.dpop.as_ref().filter(|_| bound).map(DpopKey::to_cached);
        self.held = Some(Held {
            issuer: metadata.issuer.clone(),
            resource: resource.resource.clone(),
            access_token: tokens.access_token,
            refresh_token,
            scopes: tokens.scopes,
            token_type: bound.then(|| "DPoP".to_owned()),
            dpop_key,
        });
        self.write_cache().await;
    }

    /// Adds this session's token and registrations to the token cache, if
    /// any. A cache that cannot be written (already logged) does not fail
    /// the request: the token is in hand for this process.
    async fn write_cache(&self) {
        let Some(path) = self.settings.token_cache.clone() else {
            return;
        };
        let (server, held, clients) =
            (self.server.clone(), self.held.clone(), self.clients.clone());
        let _ = off_the_runtime(move || {
            cache::update(&path, |cache| {
                if let Some(held) = held {
                    cache.tokens.insert(server, held);
                }
                cache.clients.extend(clients);
            })
        })
        .await;
    }
}

fn scopes(scope: &str) -> Vec<String> {
    scope.split_whitespace().map(str::to_owned).collect()
}

#[cfg(test)]
mod tests;

/// Runs the token cache's file I/O on tokio's blocking threads, so that it
/// never holds up an async worker.
async fn off_the_runtime<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, TransportError> + Send + 'static,
) -> Result<T, TransportError> {
    tokio::task::spawn_blocking(work).await.map_err(|failed| {
        tracing::warn!(%failed, "the token cache's task did not finish");
        TransportError::new(format!("the token cache's task did not finish: {failed}"))
    })?
}

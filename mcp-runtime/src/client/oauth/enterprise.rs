//! Enterprise-managed authorization (the
//! `io.modelcontextprotocol/enterprise-managed-authorization` extension,
//! SEP-990): the profile for MCP of the Identity Assertion JWT
//! Authorization Grant (draft-ietf-oauth-identity-assertion-authz-grant).
//!
//! The user signed in to this client through the organization's identity
//! provider (IdP), and the client holds the identity assertion it issued
//! (an OpenID Connect ID token, or a SAML 2.0 assertion). Two requests
//! then get a token with no browser and no consent screen, the IdP
//! deciding by the organization's policy:
//!
//! 1. a Token Exchange (RFC 8693) at the IdP's token endpoint trades the
//!    assertion for an ID-JAG (an Identity Assertion JWT Authorization
//!    Grant) whose audience is the MCP server's authorization server and
//!    whose resource is the MCP server (the profile's §4);
//! 2. the JWT bearer grant (RFC 7523) presents the ID-JAG to that
//!    authorization server for an access token (§5).
//!
//! Each authorization asks the IdP for a new ID-JAG rather than keeping one:
//! the profile has authorization servers refuse an ID-JAG presented twice
//! (§7.4.2, replay detection by `jti`).

use std::path::PathBuf;

use super::discovery::ServerMetadata;
use super::dpop::DpopKey;
use super::grant::{self, AuthMethod, JWT_BEARER, Registration, Tokens};
use super::secret::SecretSource;
use crate::client::transport::TransportError;

/// RFC 8693's `grant_type`.
const TOKEN_EXCHANGE: &str = "urn:ietf:params:oauth:grant-type:token-exchange";
/// The token type of an ID-JAG, requested and expected back.
const ID_JAG: &str = "urn:ietf:params:oauth:token-type:id-jag";
/// The ID-JAG's profile in `authorization_grant_profiles_supported`.
const ID_JAG_PROFILE: &str = "urn:ietf:params:oauth:grant-profile:id-jag";

/// The identity assertion the enterprise IdP issued when the user signed
/// in to this client, traded for an ID-JAG at each authorization. Given
/// inline, or as a file read (off the async runtime) each time, so that a
/// sign-in that renews it in place is picked up. Never printed: its
/// `Debug` shows the file's path at most.
#[derive(Clone, Debug)]
pub struct IdentityAssertion {
    kind: AssertionKind,
    source: SecretSource,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum AssertionKind {
    IdToken,
    Saml2,
}

impl AssertionKind {
    /// The `subject_token_type` (RFC 8693 §3).
    fn token_type(self) -> &'static str {
        match self {
            AssertionKind::IdToken => "urn:ietf:params:oauth:token-type:id_token",
            AssertionKind::Saml2 => "urn:ietf:params:oauth:token-type:saml2",
        }
    }

    /// What errors call it.
    fn name(self) -> &'static str {
        match self {
            AssertionKind::IdToken => "the user's ID token",
            AssertionKind::Saml2 => "the user's SAML assertion",
        }
    }
}

impl IdentityAssertion {
    /// An OpenID Connect ID token (a JWT whose audience is this client at
    /// the IdP).
    pub fn id_token(jwt: impl Into<String>) -> Self {
        Self::inline(AssertionKind::IdToken, jwt.into())
    }

    /// [`id_token`](Self::id_token) in the file at `path`.
    pub fn id_token_file(path: impl Into<PathBuf>) -> Self {
        Self::file(AssertionKind::IdToken, path.into())
    }

    /// A SAML 2.0 assertion, base64url-encoded as RFC 8693 carries one
    /// (`urn:ietf:params:oauth:token-type:saml2`).
    pub fn saml2(assertion: impl Into<String>) -> Self {
        Self::inline(AssertionKind::Saml2, assertion.into())
    }

    /// [`saml2`](Self::saml2) in the file at `path`.
    pub fn saml2_file(path: impl Into<PathBuf>) -> Self {
        Self::file(AssertionKind::Saml2, path.into())
    }

    fn inline(kind: AssertionKind, text: String) -> Self {
        IdentityAssertion {
            kind,
            source: SecretSource::Inline(text),
        }
    }

    fn file(kind: AssertionKind, path: PathBuf) -> Self {
        IdentityAssertion {
            kind,
            source: SecretSource::File(path),
        }
    }
}

/// The organization's identity provider, for
/// [`OAuth::enterprise`](super::OAuth::enterprise): its token endpoint,
/// this client's registration there, and the user's identity assertion.
/// Its `Debug` leaves out the secret and the assertion.
#[derive(Clone, Debug)]
pub struct EnterpriseIdp {
    token_endpoint: String,
    client_id: String,
    client_secret: Option<SecretSource>,
    secret_in_form: bool,
    assertion: IdentityAssertion,
}

impl EnterpriseIdp {
    /// The IdP whose token endpoint is `token_endpoint`, where this client
    /// is registered as `client_id` (the audience of the user's ID token),
    /// with the user's `assertion`. Without a
    /// [secret](Self::client_secret) the client is public there: its id
    /// goes in the form.
    pub fn new(
        token_endpoint: impl Into<String>,
        client_id: impl Into<String>,
        assertion: IdentityAssertion,
    ) -> Self {
        EnterpriseIdp {
            token_endpoint: token_endpoint.into(),
            client_id: client_id.into(),
            client_secret: None,
            secret_in_form: false,
            assertion,
        }
    }

    /// This client's secret at the IdP, sent as `Authorization: Basic`
    /// (`client_secret_basic`, which RFC 6749 has every authorization
    /// server accept) unless [`client_secret_post`](Self::client_secret_post).
    pub fn client_secret(mut self, secret: impl Into<String>) -> Self {
        self.client_secret = Some(SecretSource::Inline(secret.into()));
        self
    }

    /// [`client_secret`](Self::client_secret) in the file at `path`, read
    /// at each authorization (a final line break is not part of it).
    pub fn client_secret_file(mut self, path: impl Into<PathBuf>) -> Self {
        self.client_secret = Some(SecretSource::File(path.into()));
        self
    }

    /// Sends the secret in the form (`client_secret_post`) rather than in
    /// `Authorization: Basic`, for an IdP that takes it only there.
    pub fn client_secret_post(mut self) -> Self {
        self.secret_in_form = true;
        self
    }

    /// This client at the IdP, with its secret read now.
    async fn registration(&self) -> Result<Registration, TransportError> {
        let Some(source) = &self.client_secret else {
            return Ok(Registration {
                client_id: self.client_id.clone(),
                client_secret: None,
                auth_method: AuthMethod::None,
            });
        };
        let secret = source.read("the identity provider's client secret").await?;
        Ok(Registration {
            client_id: self.client_id.clone(),
            client_secret: Some(secret.trim_end_matches(['\r', '\n']).to_owned()),
            auth_method: if self.secret_in_form {
                AuthMethod::ClientSecretPost
            } else {
                AuthMethod::ClientSecretBasic
            },
        })
    }
}

/// An ID-JAG and the scopes the IdP granted in it.
struct IdJag {
    jwt: String,
    scopes: Vec<String>,
}

/// Enterprise-managed authorization at the authorization server of
/// `metadata`, for `resource` with `scopes`: an ID-JAG from `idp`, then a
/// token for it, `client` authenticating as registered there (with its
/// signed `private_key_jwt`, if any) and `dpop` binding the token. Either
/// step's refusal is the error, saying which step; neither is retried, nor
/// traded for another grant.
pub(crate) async fn authorize(
    idp: &EnterpriseIdp,
    metadata: &ServerMetadata,
    (client, signed): (&Registration, Option<&str>),
    resource: &str,
    scopes: &[String],
    dpop: Option<&DpopKey>,
) -> Result<Tokens, TransportError> {
    // Checked before the IdP hears of it: an authorization server that
    // says it takes neither the grant nor the profile would refuse the
    // ID-JAG, which the IdP's logs would record as issued for nothing.
    grant::require_grant(metadata, JWT_BEARER, "the JWT bearer grant")?;
    require_profile(metadata)?;
    let jag = request_id_jag(idp, &metadata.issuer, resource, scopes).await?;
    // The scopes the IdP granted, which the ID-JAG carries: asking for
    // more would be refused (the profile's §7.2.1).
    let grant = (resource, jag.jwt.as_str());
    grant::jwt_bearer(metadata, client, grant, signed, &jag.scopes, dpop)
        .await
        .map_err(|error| {
            TransportError::new(format!(
                "enterprise-managed authorization: presenting the ID-JAG to {}: {error}",
                metadata.issuer
            ))
        })
}

/// Refuses an authorization server whose metadata lists the assertion
/// profiles it takes without the ID-JAG's (the profile's §6).
fn require_profile(metadata: &ServerMetadata) -> Result<(), TransportError> {
    let listed = metadata.grant_profiles.as_ref();
    if listed.is_some_and(|profiles| !profiles.iter().any(|p| p == ID_JAG_PROFILE)) {
        return Err(TransportError::new(format!(
            "{} does not take ID-JAGs (authorization_grant_profiles_supported): no enterprise-managed authorization there",
            metadata.issuer
        )));
    }
    Ok(())
}

/// The Token Exchange at the IdP (the profile's §4): the user's assertion
/// for an ID-JAG whose audience is `audience` (the authorization server's
/// issuer) and whose resource is `resource` (the MCP server, as its
/// Protected Resource Metadata names it), with `scopes`. No DPoP proof:
/// the key binds the MCP server's token, and the profile binds no ID-JAG.
async fn request_id_jag(
    idp: &EnterpriseIdp,
    audience: &str,
    resource: &str,
    scopes: &[String],
) -> Result<IdJag, TransportError> {
    let kind = idp.assertion.kind;
    let subject = idp.assertion.source.read(kind.name()).await?;
    let client = idp.registration().await?;
    let scope = scopes.join(" ");
    let mut pairs = vec![
        ("grant_type", TOKEN_EXCHANGE),
        ("requested_token_type", ID_JAG),
        ("audience", audience),
        ("resource", resource),
    ];
    if !scope.is_empty() {
        pairs.push(("scope", scope.as_str()));
    }
    pairs.push(("subject_token", subject.trim()));
    pairs.push(("subject_token_type", kind.token_type()));
    let mut headers = grant::form_headers();
    grant::authenticate(&client, &mut pairs, &mut headers);
    let endpoint = &idp.token_endpoint;
    let (response, document) =
        grant::send_token_request(endpoint, &headers, &grant::form(&pairs), None)
            .await
            .map_err(|error| exchange_failed(endpoint, &error.to_string()))?;
    id_jag_of(endpoint, response.status, &document, scopes)
}

/// The ID-JAG of the IdP's answer (RFC 8693 §2.2): a `200` whose
/// `issued_token_type` says it is one. The granted scopes are `scope`,
/// else the requested ones (RFC 8693 §2.2.1).
fn id_jag_of(
    endpoint: &str,
    status: u16,
    document: &serde_json::Value,
    requested: &[String],
) -> Result<IdJag, TransportError> {
    let Some(jwt) = document["access_token"].as_str().filter(|_| status == 200) else {
        let error = document["error"].as_str().unwrap_or("no access_token");
        return Err(exchange_failed(
            endpoint,
            &format!("HTTP {status}, {error}"),
        ));
    };
    if document["issued_token_type"] != ID_JAG {
        // Whatever else it is, it is not for the authorization server.
        let issued = document["issued_token_type"].as_str().unwrap_or("nothing");
        return Err(exchange_failed(
            endpoint,
            &format!("it issued {issued}, not an ID-JAG"),
        ));
    }
    let scopes = match document["scope"].as_str() {
        Some(scope) => scope.split_whitespace().map(str::to_owned).collect(),
        None => requested.to_vec(),
    };
    Ok(IdJag {
        jwt: jwt.to_owned(),
        scopes,
    })
}

fn exchange_failed(endpoint: &str, why: &str) -> TransportError {
    TransportError::new(format!(
        "enterprise-managed authorization: the token exchange at the identity provider ({endpoint}) failed: {why}"
    ))
}

#[cfg(test)]
mod tests;

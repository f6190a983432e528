//! Getting a token from an authorization server: the client's
//! registration, the authorization request with PKCE (RFC 7636) and
//! `state`, the response's `iss` checked as RFC 9207 and the spec say,
//! and the token request with the resource indicator (RFC 8707).

use std::collections::HashMap;

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use bytes::Bytes;
use http::Method;
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, percent_decode_str, utf8_percent_encode};
use serde_json::{Value, json};
use sha2::{Digest as _, Sha256};

use super::discovery::ServerMetadata;
use super::dpop::DpopKey;
use crate::client::transport::TransportError;
use crate::client::web::{WebResponse, exchange, http_url};

/// How the client authenticates at the token endpoint.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum AuthMethod {
    /// A public client: `client_id` in the form.
    None,
    /// `Authorization: Basic` (RFC 6749 §2.3.1).
    ClientSecretBasic,
    /// `client_secret` in the form.
    ClientSecretPost,
}

impl AuthMethod {
    fn name(self) -> &'static str {
        match self {
            AuthMethod::None => "none",
            AuthMethod::ClientSecretBasic => "client_secret_basic",
            AuthMethod::ClientSecretPost => "client_secret_post",
        }
    }

    fn parse(name: &str) -> Option<AuthMethod> {
        [
            AuthMethod::None,
            AuthMethod::ClientSecretBasic,
            AuthMethod::ClientSecretPost,
        ]
        .into_iter()
        .find(|m| m.name() == name)
    }

    /// The first method the server lists that this client has (RFC 8414's
    /// default, `client_secret_basic`, when it lists none).
    fn preferred(metadata: &ServerMetadata) -> AuthMethod {
        match &metadata.auth_methods {
            None => AuthMethod::ClientSecretBasic,
            Some(listed) => listed
                .iter()
                .find_map(|m| AuthMethod::parse(m))
                .unwrap_or(AuthMethod::None),
        }
    }
}

/// A client identity at one authorization server.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub(crate) struct Registration {
    pub(crate) client_id: String,
    pub(crate) client_secret: Option<String>,
    pub(crate) auth_method: AuthMethod,
}

impl Registration {
    /// Pre-registered or a metadata document URL: `client_secret` decides.
    pub(crate) fn given(
        client_id: String,
        client_secret: Option<String>,
        metadata: &ServerMetadata,
    ) -> Self {
        let auth_method = match (&client_secret, AuthMethod::preferred(metadata)) {
            (None, _) => AuthMethod::None,
            (Some(_), AuthMethod::None) => AuthMethod::ClientSecretBasic,
            (Some(_), method) => method,
        };
        Registration {
            client_id,
            client_secret,
            auth_method,
        }
    }
}

/// Dynamic Client Registration (RFC 7591) as a native application.
pub(crate) async fn register(
    metadata: &ServerMetadata,
    endpoint: &str,
    redirect_uri: &str,
    client_name: &str,
) -> Result<Registration, TransportError> {
    let method = AuthMethod::preferred(metadata);
    let request = json!({
        "client_name": client_name,
        "redirect_uris": [redirect_uri],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": method.name(),
        // The spec: a CLI tool is a native application.
        "application_type": "native",
    });
    let headers = [
        ("content-type".to_owned(), "application/json".to_owned()),
        ("accept".to_owned(), "application/json".to_owned()),
    ];
    let response = exchange(
        Method::POST,
        &http_url(endpoint)?,
        &headers,
        Bytes::from(request.to_string()),
    )
    .await?;
    let document = response
        .json_object()
        .filter(|_| matches!(response.status, 200 | 201))
        .ok_or_else(|| {
            TransportError::new(format!(
                "client registration at {endpoint} failed: HTTP {}",
                response.status
            ))
        })?;
    let client_id = document["client_id"].as_str().ok_or_else(|| {
        TransportError::new(format!(
            "client registration at {endpoint} returned no client_id"
        ))
    })?;
    let client_secret = document["client_secret"].as_str().map(str::to_owned);
    let auth_method = document["token_endpoint_auth_method"]
        .as_str()
        .and_then(AuthMethod::parse)
        .unwrap_or(if client_secret.is_some() {
            method
        } else {
            AuthMethod::None
        });
    Ok(Registration {
        client_id: client_id.to_owned(),
        client_secret,
        auth_method,
    })
}

pub(crate) use super::random::random_text;

/// The PKCE `S256` challenge of `verifier`.
pub(crate) fn challenge(verifier: &str) -> String {
    URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()))
}

/// What a query or form value may carry unencoded (RFC 3986 unreserved).
const VALUE: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// `key=value&...`, encoded as `application/x-www-form-urlencoded`.
pub(crate) fn form(pairs: &[(&str, &str)]) -> String {
    pairs
        .iter()
        .map(|(k, v)| {
            format!(
                "{}={}",
                utf8_percent_encode(k, VALUE),
                utf8_percent_encode(v, VALUE)
            )
        })
        .collect::<Vec<_>>()
        .join("&")
}

/// The parameters of a URL's query (`+` is a space, as in forms).
pub(crate) fn query_params(url: &str) -> HashMap<String, String> {
    let query = url.split_once('?').map_or("", |(_, q)| q);
    let query = query.split_once('#').map_or(query, |(q, _)| q);
    query
        .split('&')
        .filter(|pair| !pair.is_empty())
        .map(|pair| {
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            let decode = |text: &str| {
                percent_decode_str(&text.replace('+', " "))
                    .decode_utf8_lossy()
                    .into_owned()
            };
            (decode(key), decode(value))
        })
        .collect()
}

/// The authorization code of an authorization response, after checking
/// `state` and, as the spec's table says, `iss` against the recorded
/// issuer by simple string comparison (before anything else in the
/// response is looked at).
pub(crate) fn code_of(
    params: &HashMap<String, String>,
    state: &str,
    metadata: &ServerMetadata,
) -> Result<String, TransportError> {
    match params.get("iss") {
        Some(iss) if *iss != metadata.issuer => {
            return Err(TransportError::new(format!(
                "the authorization response comes from issuer `{iss}`, not `{}`: refused (RFC 9207)",
                metadata.issuer
            )));
        }
        None if metadata.iss_parameter_supported => {
            return Err(TransportError::new(format!(
                "the authorization response has no `iss`, which {} promises: refused (RFC 9207)",
                metadata.issuer
            )));
        }
        _ => {}
    }
    if params.get("state").map(String::as_str) != Some(state) {
        return Err(TransportError::new(
            "the authorization response's `state` is not this request's: refused".into(),
        ));
    }
    if let Some(error) = params.get("error") {
        let description = params
            .get("error_description")
            .map(|d| format!(": {d}"))
            .unwrap_or_default();
        return Err(TransportError::new(format!(
            "the authorization server refused: {error}{description}"
        )));
    }
    params
        .get("code")
        .cloned()
        .ok_or_else(|| TransportError::new("the authorization response has no code".into()))
}

/// A token endpoint's answer.
#[derive(Clone, Debug)]
pub(crate) struct Tokens {
    /// `Bearer`, or `DPoP` for a token bound to the client's DPoP key.
    pub(crate) token_type: String,
    pub(crate) access_token: String,
    pub(crate) refresh_token: Option<String>,
    /// The granted scopes (`scope`, else the requested ones).
    pub(crate) scopes: Vec<String>,
}

/// RFC 7523's `client_assertion_type` for a JWT.
pub(crate) const CLIENT_ASSERTION_JWT: &str =
    "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";

/// The client credentials grant (RFC 6749 §4.4, OAuth 2.1 §4.2): a token
/// for the client itself, for `resource` (RFC 8707), with `scopes`. An
/// authorization server whose metadata lists its grants without this one
/// is not asked. With `assertion` (a signed `private_key_jwt`), the client
/// authenticates with it rather than a secret.
pub(crate) async fn client_credentials(
    metadata: &ServerMetadata,
    client: &Registration,
    (resource, assertion): (&str, Option<&str>),
    scopes: &[String],
    dpop: Option<&DpopKey>,
) -> Result<Tokens, TransportError> {
    require_grant(
        metadata,
        "client_credentials",
        "the client credentials grant",
    )?;
    let scope = scopes.join(" ");
    let mut pairs = vec![("grant_type", "client_credentials"), ("resource", resource)];
    if !scope.is_empty() {
        pairs.push(("scope", scope.as_str()));
    }
    if let Some(assertion) = assertion {
        pairs.push(("client_assertion_type", CLIENT_ASSERTION_JWT));
        pairs.push(("client_assertion", assertion));
    }
    request_token(metadata, client, &pairs, scopes, dpop).await
}

/// Refuses `grant` (called `name` in the error) where the authorization
/// server's metadata lists its grants without it.
pub(crate) fn require_grant(
    metadata: &ServerMetadata,
    grant: &str,
    name: &str,
) -> Result<(), TransportError> {
    let offered = metadata.grant_types.as_ref();
    if offered.is_some_and(|grants| !grants.iter().any(|g| g == grant)) {
        return Err(TransportError::new(format!(
            "{} does not offer {name} (grant_types_supported)",
            metadata.issuer
        )));
    }
    Ok(())
}

/// RFC 7523's `grant_type` for a JWT presented as an authorization grant.
pub(crate) const JWT_BEARER: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";

/// The JWT bearer grant (RFC 7523 §2.1): `assertion` (a JWT issued to this
/// workload by its platform, or an ID-JAG from an enterprise identity
/// provider) for a token for `resource` with `scopes`; with
/// `client_assertion` (a signed `private_key_jwt`), the client
/// authenticates with it rather than a secret. An authorization server
/// whose metadata lists its grants without this one is not asked; a
/// refusal is returned as it is, never retried.
pub(crate) async fn jwt_bearer(
    metadata: &ServerMetadata,
    client: &Registration,
    (resource, assertion): (&str, &str),
    client_assertion: Option<&str>,
    scopes: &[String],
    dpop: Option<&DpopKey>,
) -> Result<Tokens, TransportError> {
    require_grant(metadata, JWT_BEARER, "the JWT bearer grant")?;
    let scope = scopes.join(" ");
    let mut pairs = vec![
        ("grant_type", JWT_BEARER),
        ("assertion", assertion),
        ("resource", resource),
    ];
    if !scope.is_empty() {
        pairs.push(("scope", scope.as_str()));
    }
    if let Some(signed) = client_assertion {
        pairs.push(("client_assertion_type", CLIENT_ASSERTION_JWT));
        pairs.push(("client_assertion", signed));
    }
    request_token(metadata, client, &pairs, scopes, dpop).await
}

/// POSTs the token request: with a DPoP proof when the client has a key,
/// and once more with the authorization server's nonce if it asks for one.
pub(crate) async fn send_token_request(
    endpoint: &str,
    headers: &[(String, String)],
    body: &str,
    dpop: Option<&DpopKey>,
) -> Result<(WebResponse, Value), TransportError> {
    let url = http_url(endpoint)?;
    let mut nonce: Option<String> = None;
    // A server that keeps changing its nonce is not followed forever.
    let mut retries = 2;
    loop {
        let mut sent = headers.to_vec();
        if let Some(key) = dpop {
            let proof = key.proof("POST", endpoint, None, nonce.as_deref())?;
            sent.push(("dpop".to_owned(), proof));
        }
        let response = exchange(Method::POST, &url, &sent, Bytes::from(body.to_owned())).await?;
        let document = response.json_object().unwrap_or(Value::Null);
        let asks_nonce = dpop.is_some() && document["error"] == "use_dpop_nonce";
        match response.header("dpop-nonce") {
            Some(given) if asks_nonce && retries > 0 && nonce.as_deref() != Some(given) => {
                nonce = Some(given.to_owned());
                retries -= 1;
            }
            _ => return Ok((response, document)),
        }
    }
}

/// The headers of a form POST to a token endpoint.
pub(crate) fn form_headers() -> Vec<(String, String)> {
    vec![
        (
            "content-type".to_owned(),
            "application/x-www-form-urlencoded".to_owned(),
        ),
        ("accept".to_owned(), "application/json".to_owned()),
    ]
}

/// Adds `client`'s authentication to a token request: its id in the form
/// (a public client), its secret in the form, or both in `Authorization:
/// Basic` (RFC 6749 §2.3.1, each part form-encoded first).
pub(crate) fn authenticate<'a>(
    client: &'a Registration,
    pairs: &mut Vec<(&'a str, &'a str)>,
    headers: &mut Vec<(String, String)>,
) {
    let secret = client.client_secret.as_deref().unwrap_or_default();
    match client.auth_method {
        AuthMethod::None => pairs.push(("client_id", &client.client_id)),
        AuthMethod::ClientSecretPost => pairs.extend([
            ("client_id", client.client_id.as_str()),
            ("client_secret", secret),
        ]),
        AuthMethod::ClientSecretBasic => {
            let encode = |text: &str| utf8_percent_encode(text, VALUE).to_string();
            let credentials = format!("{}:{}", encode(&client.client_id), encode(secret));
            headers.push((
                "authorization".to_owned(),
                format!("Basic {}", STANDARD.encode(credentials)),
            ));
        }
    }
}

/// A token request (`grant` holds the grant's own parameters), with the
/// client authenticated as registered.
///
/// With `dpop`, each attempt carries a fresh DPoP proof, so that the token
/// is bound to the key (RFC 9449 §5); an authorization server that answers
/// `use_dpop_nonce` is asked once more with the nonce it gave (§8).
pub(crate) async fn request_token(
    metadata: &ServerMetadata,
    client: &Registration,
    grant: &[(&str, &str)],
    requested: &[String],
    dpop: Option<&DpopKey>,
) -> Result<Tokens, TransportError> {
    let mut pairs = grant.to_vec();
    let mut headers = form_headers();
    authenticate(client, &mut pairs, &mut headers);
    let endpoint = &metadata.token_endpoint;
    let (response, document) = send_token_request(endpoint, &headers, &form(&pairs), dpop).await?;
    let Some(access_token) = document["access_token"]
        .as_str()
        .filter(|_| response.status == 200)
    else {
        let error = document["error"].as_str().unwrap_or("no access_token");
        return Err(TransportError::new(format!(
            "the token request to {endpoint} failed: HTTP {}, {error}",
            response.status
        )));
    };
    let scopes = match document["scope"].as_str() {
        Some(scope) => scope.split_whitespace().map(str::to_owned).collect(),
        None => requested.to_vec(),
    };
    Ok(Tokens {
        token_type: document["token_type"]
            .as_str()
            .unwrap_or("Bearer")
            .to_owned(),
        access_token: access_token.to_owned(),
        refresh_token: document["refresh_token"].as_str().map(str::to_owned),
        scopes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn metadata(iss_supported: bool) -> ServerMetadata {
        ServerMetadata {
            issuer: "http://as.test".into(),
            authorization_endpoint: "http://as.test/authorize".into(),
            token_endpoint: "http://as.test/token".into(),
            registration_endpoint: None,
            scopes_supported: None,
            auth_methods: None,
            grant_types: None,
            grant_profiles: None,
            iss_parameter_supported: iss_supported,
            client_id_metadata_documents: false,
            pkce_s256: true,
        }
    }

    fn response(pairs: &[(&str, &str)]) -> HashMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn the_issuer_is_compared_as_the_spec_tables_it() {
        let good = response(&[("code", "c"), ("state", "s"), ("iss", "http://as.test")]);
        let bare = response(&[("code", "c"), ("state", "s")]);
        let wrong = response(&[
            ("code", "c"),
            ("state", "s"),
            ("iss", "https://evil.example.com"),
        ]);
        let slash = response(&[("code", "c"), ("state", "s"), ("iss", "http://as.test/")]);
        let error = response(&[
            ("error", "access_denied"),
            ("state", "s"),
            ("iss", "https://evil.example.com"),
        ]);
        for supported in [true, false] {
            assert_eq!(code_of(&good, "s", &metadata(supported)).unwrap(), "c");
            assert!(code_of(&wrong, "s", &metadata(supported)).is_err());
            assert!(code_of(&slash, "s", &metadata(supported)).is_err());
            // A mismatched issuer's error is not acted on or shown.
            let refused = code_of(&error, "s", &metadata(supported))
                .unwrap_err()
                .to_string();
            assert!(!refused.contains("access_denied"), "{refused}");
        }
        assert!(code_of(&bare, "s", &metadata(true)).is_err());
        assert_eq!(code_of(&bare, "s", &metadata(false)).unwrap(), "c");
        assert!(code_of(&good, "other", &metadata(true)).is_err());
    }

    #[test]
    fn pkce_and_forms_are_encoded_as_the_rfcs_say() {
        // RFC 7636 appendix B.
        assert_eq!(
            challenge("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"),
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
        );
        assert_eq!(random_text().len(), 43);
        assert_ne!(random_text(), random_text());
        assert_eq!(
            form(&[
                ("redirect_uri", "http://127.0.0.1/cb?x=1"),
                ("scope", "a b")
            ]),
            "redirect_uri=http%3A%2F%2F127.0.0.1%2Fcb%3Fx%3D1&scope=a%20b"
        );
        let params =
            query_params("http://127.0.0.1/cb?code=a%2Bb&state=x+y&iss=http%3A%2F%2Fas#frag");
        assert_eq!(params["code"], "a+b");
        assert_eq!(params["state"], "x y");
        assert_eq!(params["iss"], "http://as");
    }

    /// A grant the authorization server does not list is not asked for:
    /// the error says why, before any request (the token endpoint here
    /// does not exist).
    #[tokio::test]
    async fn grants_the_server_does_not_offer_are_not_requested() {
        let mut server = metadata(false);
        server.token_endpoint = "http://127.0.0.1:9/token".into();
        server.grant_types = Some(vec!["authorization_code".into()]);
        let client = Registration::given("cli".into(), Some("s".into()), &server);
        let error = client_credentials(&server, &client, ("http://rs/mcp", None), &[], None)
            .await
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("does not offer the client credentials grant"),
            "{error}"
        );
        let error = jwt_bearer(
            &server,
            &client,
            ("http://rs/mcp", "e.y.j"),
            None,
            &[],
            None,
        )
        .await
        .unwrap_err()
        .to_string();
        assert!(
            error.contains("does not offer the JWT bearer grant"),
            "{error}"
        );
    }
}

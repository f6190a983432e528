//! What the HTTP pipeline calls: serve the metadata, refuse tokens in the
//! query string, and admit a request (authenticate, then check the scopes
//! it needs) before the dispatcher sees it.

use std::sync::Arc;

use bytes::Bytes;
use http::header::{
    ACCESS_CONTROL_ALLOW_HEADERS, ACCESS_CONTROL_ALLOW_METHODS, ACCESS_CONTROL_ALLOW_ORIGIN, ALLOW,
    AUTHORIZATION, CACHE_CONTROL, CONTENT_TYPE,
};
use http::{HeaderMap, HeaderValue, Method as HttpMethod, Response, StatusCode, Uri};

pub(crate) use super::challenge::Denied;
use super::challenge::{DpopChallenge, Refusal};
#[cfg(feature = "auth")]
use super::dpop::Presented;
use super::dpop::ProofChecker;
use super::metadata;
use super::resource::{ResourceUri, WELL_KNOWN};
use super::scope::Hierarchy;
use super::verifier::{TokenVerifier, VerifyError};
use crate::protocol::method::Method;
use crate::security::Principal;

/// The verifiers in use: a custom one replaces the built-in ones.
#[derive(Clone, Default)]
pub(crate) struct Verifiers {
    pub(crate) custom: Option<Arc<dyn TokenVerifier>>,
    pub(crate) jwt: Option<Arc<dyn TokenVerifier>>,
    pub(crate) introspection: Option<Arc<dyn TokenVerifier>>,
}

impl Verifiers {
    pub(crate) fn is_empty(&self) -> bool {
        self.custom.is_none() && self.jwt.is_none() && self.introspection.is_none()
    }

    fn for_token(&self, token: &str) -> Option<&Arc<dyn TokenVerifier>> {
        if let Some(custom) = &self.custom {
            return Some(custom);
        }
        let jwt_shaped = token.split('.').count() == 3;
        match (&self.jwt, &self.introspection) {
            (Some(jwt), _) if jwt_shaped => Some(jwt),
            (_, Some(introspection)) => Some(introspection),
            (jwt, None) => jwt.as_ref(),
        }
    }
}

pub(crate) struct Gate {
    metadata_url: String,
    /// The path-inserted well-known path, and the root one.
    metadata_paths: Vec<String>,
    metadata: Bytes,
    verifiers: Verifiers,
    hierarchy: Hierarchy,
    public_discover: bool,
    hide_unpermitted: bool,
    /// Checks DPoP proofs (feature `auth`); without it, bound tokens are
    /// refused.
    dpop: Option<ProofChecker>,
}

/// How the `Authorization` header presents the token.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Scheme {
    Bearer,
    /// With a proof of possession in the `DPoP` header (RFC 9449 §7.1).
    Dpop,
}

/// What a token is bound to.
#[derive(Debug, PartialEq, Eq)]
enum Binding<'a> {
    /// Nothing: a bearer token.
    None,
    /// The key with this RFC 7638 thumbprint (`cnf.jkt`).
    Key(&'a str),
    /// A DPoP token (`token_type` DPoP from introspection) without the
    /// key's thumbprint: no proof can be checked against it.
    Unknown,
}

impl std::fmt::Debug for Gate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gate")
            .field("metadata_url", &self.metadata_url)
            .finish_non_exhaustive()
    }
}

impl Gate {
    #[expect(
        clippy::too_many_arguments,
        reason = "built in one place, from the config"
    )]
    pub(crate) fn new(
        resource: ResourceUri,
        issuers: &[String],
        scopes: &[String],
        resource_name: Option<&str>,
        documentation: Option<&str>,
        verifiers: Verifiers,
        hierarchy: Hierarchy,
        public_discover: bool,
        hide_unpermitted: bool,
        dpop: Option<ProofChecker>,
    ) -> Gate {
        let (dpop_algs, dpop_required) = match &dpop {
            Some(checker) => (
                checker.settings().algorithm_names(),
                checker.settings().is_required(),
            ),
            None => (Vec::new(), false),
        };
        let mut metadata_paths = vec![resource.metadata_path()];
        if !resource.path().is_empty() {
            metadata_paths.push(WELL_KNOWN.to_owned());
        }
        Gate {
            metadata_url: resource.metadata_url(),
            metadata: Bytes::from(metadata::document(
                &resource,
                issuers,
                scopes,
                resource_name,
                documentation,
                (&dpop_algs, dpop_required),
            )),
            metadata_paths,
            verifiers,
            hierarchy,
            public_discover,
            hide_unpermitted,
            dpop,
        }
    }

    fn dpop_challenge(&self) -> DpopChallenge<'_> {
        match &self.dpop {
            Some(checker) => DpopChallenge {
                algs: checker.algs(),
                required: checker.settings().is_required(),
            },
            None => DpopChallenge::default(),
        }
    }

    pub(crate) fn hide_unpermitted(&self) -> bool {
        self.hide_unpermitted
    }

    /// The metadata document, if `path` is one of its well-known paths.
    /// Public, so any origin may read it (browser-based clients discover
    /// the authorization server from it).
    pub(crate) fn metadata_response<B>(
        &self,
        method: &HttpMethod,
        path: &str,
        body: impl FnOnce(Bytes) -> B,
    ) -> Option<Response<B>> {
        if !self.metadata_paths.iter().any(|p| p == path) {
            return None;
        }
        let (status, content) = match *method {
            HttpMethod::GET => (StatusCode::OK, self.metadata.clone()),
            HttpMethod::OPTIONS => (StatusCode::NO_CONTENT, Bytes::new()),
            _ => (StatusCode::METHOD_NOT_ALLOWED, Bytes::new()),
        };
        let mut response = Response::new(body(content));
        *response.status_mut() = status;
        let headers = response.headers_mut();
        if status == StatusCode::OK {
            headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
            headers.insert(CACHE_CONTROL, HeaderValue::from_static("max-age=3600"));
        }
        headers.insert(ALLOW, HeaderValue::from_static("GET, OPTIONS"));
        headers.insert(ACCESS_CONTROL_ALLOW_ORIGIN, HeaderValue::from_static("*"));
        headers.insert(
            ACCESS_CONTROL_ALLOW_METHODS,
            HeaderValue::from_static("GET, OPTIONS"),
        );
        headers.insert(
            ACCESS_CONTROL_ALLOW_HEADERS,
            HeaderValue::from_static("mcp-protocol-version"),
        );
        Some(response)
    }

    /// Tokens must never travel in a URI (they end up in logs and
    /// histories): a request with `access_token` in its query is refused.
    pub(crate) fn check_query(&self, uri: &Uri) -> Result<(), Refusal> {
        let in_query = uri.query().is_some_and(|query| {
            query
                .split('&')
                .any(|pair| pair.split('=').next() == Some("access_token"))
        });
        if in_query {
            return Err(Refusal::InvalidRequest(
                "access tokens are accepted only in the Authorization header, never in the URI",
            ));
        }
        Ok(())
    }

    /// Authenticates the request and checks that it may do what it asks.
    /// `method` is `None` for a notification. `Ok(None)`: an anonymous
    /// call that is allowed (`server/discover` when public).
    pub(crate) async fn admit(
        &self,
        request: &http::request::Parts,
        method: Option<Method>,
        required: &[&'static str],
    ) -> Result<Option<Principal>, Denied> {
        let headers = &request.headers;
        let (scheme, token) = match credentials(headers) {
            Ok(Some(credentials)) => credentials,
            Ok(None) if self.public_discover && method == Some(Method::Discover) => {
                return Ok(None);
            }
            Ok(None) => return Err(Denied::Refused(Refusal::Missing)),
            Err(refusal) => return Err(Denied::Refused(refusal)),
        };
        let Some(verifier) = self.verifiers.for_token(token) else {
            return Err(Denied::Refused(Refusal::InvalidToken(
                "tokens of this kind are not accepted".into(),
            )));
        };
        let principal = match verifier.verify(token).await {
            Ok(principal) => principal,
            Err(VerifyError::Unavailable(problem)) => {
                // Every request with a token provokes it while the
                // authorization server is down.
                crate::diagnostics::REFUSALS.unverified.note(|suppressed| {
                    tracing::warn!(%problem, suppressed, "could not verify an access token");
                });
                return Err(Denied::Unavailable);
            }
            Err(error) => {
                // The reason, never the token.
                tracing::debug!(%error, "refused an access token");
                return Err(Denied::Refused(Refusal::InvalidToken(error.to_string())));
            }
        };
        let proof_due = self.check_binding(scheme, &principal)?;
        #[cfg(feature = "auth")]
        if let Some((checker, jkt)) = proof_due {
            let presented = Presented {
                method: &request.method,
                path: request.uri.path(),
                token,
                jkt,
            };
            checker.check(&request.headers, &presented).await?;
        }
        // Without `auth` there is no checker, so no proof is ever due (and
        // every binary without the feature is spared the await).
        #[cfg(not(feature = "auth"))]
        let _ = (proof_due, token, request);
        let granted = self.hierarchy.expand(principal.scopes());
        let principal = principal.with_scopes(granted);
        if !principal.has_scopes(required) {
            return Err(Denied::Refused(Refusal::InsufficientScope(
                required.to_vec(),
            )));
        }
        Ok(Some(principal))
    }

    /// A token bound to a key is good only with a proof by that key, and
    /// only in the `DPoP` scheme: presented as a bearer token it is
    /// refused, or a thief who copied it would be served (RFC 9449 §7.1).
    /// The checker and the key's thumbprint when a proof is due.
    fn check_binding<'p>(
        &'p self,
        scheme: Scheme,
        principal: &'p Principal,
    ) -> Result<Option<(&'p ProofChecker, &'p str)>, Denied> {
        let why = match (scheme, binding(principal)) {
            (Scheme::Bearer, Binding::None) if self.dpop_challenge().required => {
                "this server accepts DPoP-bound tokens only"
            }
            (Scheme::Bearer, Binding::None) => return Ok(None),
            (Scheme::Bearer, _) => {
                "the token is DPoP-bound: send it as `Authorization: DPoP` with a proof"
            }
            (Scheme::Dpop, Binding::None) => "the token is not bound to a DPoP key (no cnf.jkt)",
            (Scheme::Dpop, Binding::Key(jkt)) if let Some(checker) = &self.dpop => {
                return Ok(Some((checker, jkt)));
            }
            // Bound to no key thumbprint (`token_type` DPoP alone), or no
            // checker (a binary without the `auth` feature).
            (Scheme::Dpop, _) => "this server cannot check this token's DPoP binding",
        };
        Err(Denied::Refused(Refusal::InvalidDpopToken(why.into())))
    }

    /// The response for a refusal. `required` guides a client without a
    /// (valid) token to the scopes this request needs.
    pub(crate) fn refuse<B>(
        &self,
        refusal: &Refusal,
        required: &[&str],
        body: impl FnOnce(Vec<u8>) -> B,
    ) -> Response<B> {
        refusal.response(&self.metadata_url, required, self.dpop_challenge(), body)
    }
}

/// What the token is bound to: a proof-of-possession key (`cnf.jkt`, RFC
/// 9449 §6; an introspection answer carries it the same way, and may say
/// `token_type` DPoP).
fn binding(principal: &Principal) -> Binding<'_> {
    let jkt = principal.claim("cnf").and_then(|cnf| cnf.get("jkt"));
    let dpop_type = principal
        .claim("token_type")
        .and_then(|t| t.as_str())
        .is_some_and(|t| t.eq_ignore_ascii_case("dpop"));
    match jkt {
        Some(serde_json::Value::String(jkt)) => Binding::Key(jkt),
        Some(_) => Binding::Unknown,
        None if dpop_type => Binding::Unknown,
        None => Binding::None,
    }
}

/// The token of the `Authorization` header and its scheme: `Bearer` (RFC
/// 6750 §2.1) or `DPoP` (RFC 9449 §7.1). Several `Authorization` headers,
/// or a header of either scheme without a well-formed token, are malformed
/// requests; another scheme counts as no token.
fn credentials(headers: &HeaderMap) -> Result<Option<(Scheme, &str)>, Refusal> {
    let mut values = headers.get_all(AUTHORIZATION).iter();
    let Some(value) = values.next() else {
        return Ok(None);
    };
    if values.next().is_some() {
        return Err(Refusal::InvalidRequest(
            "send exactly one Authorization header",
        ));
    }
    let Ok(value) = value.to_str() else {
        return Err(Refusal::InvalidRequest(
            "the Authorization header is not ASCII",
        ));
    };
    let Some((scheme, token)) = value.split_once(' ') else {
        return Ok(None);
    };
    let scheme = if scheme.eq_ignore_ascii_case("bearer") {
        Scheme::Bearer
    } else if scheme.eq_ignore_ascii_case("dpop") {
        Scheme::Dpop
    } else {
        return Ok(None);
    };
    let token = token.trim_start_matches(' ');
    if !is_token68(token) {
        return Err(Refusal::InvalidRequest(
            "the access token is not well-formed (RFC 6750 §2.1)",
        ));
    }
    Ok(Some((scheme, token)))
}

/// `b64token = 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"="`
fn is_token68(token: &str) -> bool {
    let body = token.trim_end_matches('=');
    !body.is_empty()
        && body
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-._~+/".contains(&b))
}

#[cfg(test)]
mod tests {
    use serde_json::{Map, json};

    use super::*;
    use crate::auth::verifier::VerifyFuture;

    /// Takes any token, as the principal `claims` describe.
    struct Accepts(Map<String, serde_json::Value>);

    impl TokenVerifier for Accepts {
        fn verify<'a>(&'a self, _token: &'a str) -> VerifyFuture<'a> {
            let principal = Principal::new("c").with_claims(self.0.clone());
            Box::pin(std::future::ready(Ok(principal)))
        }
    }

    fn gate(claims: serde_json::Value) -> Gate {
        let serde_json::Value::Object(claims) = claims else {
            unreachable!()
        };
        let verifiers = Verifiers {
            custom: Some(Arc::new(Accepts(claims))),
            ..Verifiers::default()
        };
        let resource = ResourceUri::parse("https://mcp.example.com/mcp").unwrap();
        let issuers = ["https://as.example.com".to_owned()];
        Gate::new(
            resource,
            &issuers,
            &[],
            None,
            None,
            verifiers,
            Hierarchy::default(),
            false,
            false,
            None,
        )
    }

    fn request(authorization: &[&str]) -> http::request::Parts {
        let mut builder = http::Request::post("https://mcp.example.com/mcp");
        for value in authorization {
            builder = builder.header(AUTHORIZATION, *value);
        }
        builder.body(()).unwrap().into_parts().0
    }

    #[tokio::test]
    async fn a_token_bound_to_a_dpop_key_is_not_taken_as_a_bearer_token() {
        let bearer = request(&["Bearer abc"]);
        for bound in [
            json!({"sub": "ann", "cnf": {"jkt": "0ZcOCORZNYy-DWpqq30jZyJGHTN0d2HglBV3uiguA4I"}}),
            // Introspection's `token_type` says so too.
            json!({"sub": "ann", "token_type": "DPoP"}),
        ] {
            match gate(bound)
                .admit(&bearer, Some(Method::ToolsCall), &[])
                .await
            {
                Err(Denied::Refused(Refusal::InvalidDpopToken(why))) => {
                    assert!(why.contains("DPoP-bound"), "{why}");
                }
                other => panic!("a bound token is refused: {other:?}"),
            }
        }
        // Confirmed by something else (an mTLS certificate's hash): not
        // this check's to refuse.
        let other = gate(json!({"sub": "ann", "cnf": {"x5t#S256": "abc"}}));
        assert!(
            other
                .admit(&bearer, Some(Method::ToolsCall), &[])
                .await
                .is_ok()
        );
        let plain = gate(json!({"sub": "ann"}));
        assert!(
            plain
                .admit(&bearer, Some(Method::ToolsCall), &[])
                .await
                .is_ok()
        );
    }

    /// In the `DPoP` scheme a token must be bound to a key, and this gate
    /// (no checker) can check no proof.
    #[tokio::test]
    async fn the_dpop_scheme_needs_a_bound_token_and_a_checker() {
        let dpop = request(&["DPoP abc"]);
        for (claims, expected) in [
            (json!({"sub": "ann"}), "not bound to a DPoP key"),
            (json!({"sub": "ann", "token_type": "dpop"}), "cannot check"),
            (json!({"sub": "ann", "cnf": {"jkt": "x"}}), "cannot check"),
        ] {
            match gate(claims)
                .admit(&dpop, Some(Method::ToolsCall), &[])
                .await
            {
                Err(Denied::Refused(Refusal::InvalidDpopToken(why))) => {
                    assert!(why.contains(expected), "{why}");
                }
                other => panic!("refused: {other:?}"),
            }
        }
    }

    fn headers(values: &[&str]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for v in values {
            map.append(AUTHORIZATION, HeaderValue::from_str(v).unwrap());
        }
        map
    }

    fn bearer(headers: &HeaderMap) -> Result<Option<&str>, Refusal> {
        credentials(headers).map(|c| {
            c.map(|(scheme, token)| {
                assert_eq!(scheme, Scheme::Bearer);
                token
            })
        })
    }

    #[test]
    fn bearer_extraction() {
        assert_eq!(bearer(&headers(&[])), Ok(None));
        assert_eq!(
            bearer(&headers(&["Bearer abc.def-ghi_~+/=="])),
            Ok(Some("abc.def-ghi_~+/=="))
        );
        assert_eq!(bearer(&headers(&["bearer abc"])), Ok(Some("abc")));
        assert_eq!(
            credentials(&headers(&["DPoP abc"])),
            Ok(Some((Scheme::Dpop, "abc")))
        );
        assert!(matches!(
            credentials(&headers(&["dpop a b"])),
            Err(Refusal::InvalidRequest(_))
        ));
        assert_eq!(bearer(&headers(&["Basic dXNlcjpwYXNz"])), Ok(None));
        assert_eq!(bearer(&headers(&["Bearer"])), Ok(None));
        assert!(matches!(
            bearer(&headers(&["Bearer a b"])),
            Err(Refusal::InvalidRequest(_))
        ));
        assert!(matches!(
            bearer(&headers(&["Bearer ="])),
            Err(Refusal::InvalidRequest(_))
        ));
        assert!(matches!(
            bearer(&headers(&["Bearer a", "Bearer b"])),
            Err(Refusal::InvalidRequest(_))
        ));
    }
}

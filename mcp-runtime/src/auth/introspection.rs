//! Opaque access tokens, checked by asking the authorization server (OAuth
//! 2.0 Token Introspection, RFC 7662). The answer must say `active`, name a
//! trusted issuer (when it names one), be unexpired, and carry this
//! server's canonical URI in `aud`: an opaque token for another resource is
//! refused like a JWT would be.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::{Map, Value};
use tokio::sync::OnceCell;

use super::discovery;
use super::fetch::Fetcher;
use super::jwt::principal_from_claims;
use super::resource::ResourceUri;
use super::verifier::{TokenVerifier, VerifyError, VerifyFuture};
use crate::security::Principal;

/// Settings of the introspection verifier, for
/// [`Authorization::introspection`](super::Authorization::introspection).
#[derive(Clone)]
pub struct IntrospectionSettings {
    pub(crate) client_id: String,
    pub(crate) client_secret: String,
    pub(crate) endpoint: Option<String>,
    pub(crate) leeway: Duration,
}

impl std::fmt::Debug for IntrospectionSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IntrospectionSettings")
            .field("client_id", &self.client_id)
            .field("client_secret", &"[redacted]")
            .field("endpoint", &self.endpoint)
            .finish_non_exhaustive()
    }
}

impl IntrospectionSettings {
    /// Introspects as the confidential client `client_id` (HTTP Basic
    /// authentication, RFC 6749 §2.3.1). The endpoint comes from the first
    /// issuer's metadata (`introspection_endpoint`) unless given.
    pub fn new(client_id: impl Into<String>, client_secret: impl Into<String>) -> Self {
        IntrospectionSettings {
            client_id: client_id.into(),
            client_secret: client_secret.into(),
            endpoint: None,
            leeway: Duration::from_secs(30),
        }
    }

    /// The introspection endpoint, instead of discovering it.
    #[must_use]
    pub fn endpoint(mut self, url: impl Into<String>) -> Self {
        self.endpoint = Some(url.into());
        self
    }
}

/// Verifies opaque tokens by introspection (RFC 7662).
#[derive(Debug)]
pub struct IntrospectionVerifier {
    resource: ResourceUri,
    issuers: Vec<String>,
    settings: IntrospectionSettings,
    fetcher: Fetcher,
    endpoint: OnceCell<String>,
}

impl IntrospectionVerifier {
    pub(crate) fn new(
        resource: ResourceUri,
        issuers: &[String],
        settings: IntrospectionSettings,
        fetcher: &Fetcher,
    ) -> Self {
        IntrospectionVerifier {
            resource,
            issuers: issuers.to_vec(),
            settings,
            fetcher: fetcher.clone(),
            endpoint: OnceCell::new(),
        }
    }

    async fn endpoint(&self) -> Result<&str, VerifyError> {
        let endpoint = self
            .endpoint
            .get_or_try_init(|| async {
                if let Some(endpoint) = &self.settings.endpoint {
                    return Ok(endpoint.clone());
                }
                let issuer = self.issuers.first().ok_or("no issuer configured")?;
                let metadata = discovery::discover(&self.fetcher, issuer).await?;
                metadata
                    .get("introspection_endpoint")
                    .and_then(Value::as_str)
                    .map(str::to_owned)
                    .ok_or_else(|| format!("`{issuer}` publishes no introspection_endpoint"))
            })
            .await
            .map_err(|problem: String| {
                tracing::warn!(%problem, "no introspection endpoint");
                VerifyError::Unavailable("the introspection endpoint is unknown".into())
            })?;
        Ok(endpoint)
    }

    async fn check(&self, token: &str) -> Result<Principal, VerifyError> {
        let endpoint = self.endpoint().await?;
        let form = [("token", token), ("token_type_hint", "access_token")];
        let client = (
            self.settings.client_id.as_str(),
            self.settings.client_secret.as_str(),
        );
        let answer = self
            .fetcher
            .post_form(endpoint, &form, Some(client))
            .await
            .map_err(|problem| {
                tracing::warn!(%problem, "token introspection failed");
                VerifyError::Unavailable("token introspection failed".into())
            })?;
        let Value::Object(claims) = answer else {
            return Err(VerifyError::Unavailable(
                "the introspection answer is not an object".into(),
            ));
        };
        self.judge(claims, now())
    }

    /// Judges an introspection answer at time `now` (seconds since the
    /// epoch).
    fn judge(&self, claims: Map<String, Value>, now: u64) -> Result<Principal, VerifyError> {
        if claims.get("active") != Some(&Value::Bool(true)) {
            return Err(VerifyError::Inactive);
        }
        let issuer = match claims.get("iss") {
            Some(Value::String(iss)) => self
                .issuers
                .iter()
                .find(|trusted| *trusted == iss)
                .ok_or(VerifyError::Issuer)?,
            Some(_) => return Err(VerifyError::Claim("iss")),
            // The endpoint belongs to a trusted issuer: without `iss`, the
            // answer speaks for that one.
            None => self.issuers.first().ok_or(VerifyError::Issuer)?,
        };
        let leeway = self.settings.leeway.as_secs();
        if let Some(exp) = claims.get("exp") {
            let exp = exp.as_u64().ok_or(VerifyError::Claim("exp"))?;
            if exp.saturating_add(leeway) < now {
                return Err(VerifyError::Expired);
            }
        }
        if let Some(nbf) = claims.get("nbf") {
            let nbf = nbf.as_u64().ok_or(VerifyError::Claim("nbf"))?;
            if nbf > now.saturating_add(leeway) {
                return Err(VerifyError::NotYetValid);
            }
        }
        if !self.resource.is_audience_of(claims.get("aud")) {
            return Err(VerifyError::Audience);
        }
        let issuer = issuer.clone();
        principal_from_claims(&issuer, claims)
    }
}

impl TokenVerifier for IntrospectionVerifier {
    fn verify<'a>(&'a self, token: &'a str) -> VerifyFuture<'a> {
        Box::pin(self.check(token))
    }
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn verifier() -> IntrospectionVerifier {
        IntrospectionVerifier::new(
            ResourceUri::parse("https://mcp.example.com/mcp").unwrap(),
            &["https://as.example.com".to_owned()],
            IntrospectionSettings::new("rs", "secret")
                .endpoint("https://as.example.com/introspect"),
            &Fetcher::new(Duration::from_secs(1)),
        )
    }

    fn answer(value: Value) -> Map<String, Value> {
        match value {
            Value::Object(map) => map,
            _ => unreachable!(),
        }
    }

    const NOW: u64 = 1_800_000_000;

    #[test]
    fn active_token_for_this_resource_is_accepted() {
        let principal = verifier()
            .judge(
                answer(json!({
                    "active": true, "iss": "https://as.example.com", "sub": "ann",
                    "client_id": "app", "scope": "notes:read notes:write",
                    "aud": ["https://other.example.com", "https://MCP.example.com/mcp"],
                    "exp": NOW + 60,
                })),
                NOW,
            )
            .unwrap();
        assert_eq!(principal.id(), "https://as.example.com ann");
        assert_eq!(principal.client_id(), Some("app"));
        assert!(principal.has_scopes(&["notes:read", "notes:write"]));
    }

    #[test]
    fn every_refusal() {
        let v = verifier();
        let base = json!({"active": true, "sub": "ann", "aud": "https://mcp.example.com/mcp", "exp": NOW + 60});
        let with = |key: &str, value: Value| {
            let mut claims = answer(base.clone());
            claims.insert(key.to_owned(), value);
            v.judge(claims, NOW).unwrap_err()
        };
        assert_eq!(with("active", json!(false)), VerifyError::Inactive);
        assert_eq!(with("active", json!("true")), VerifyError::Inactive);
        assert_eq!(
            with("iss", json!("https://evil.example.com")),
            VerifyError::Issuer
        );
        assert_eq!(with("iss", json!(7)), VerifyError::Claim("iss"));
        assert_eq!(with("exp", json!(NOW - 31)), VerifyError::Expired);
        assert_eq!(with("exp", json!("soon")), VerifyError::Claim("exp"));
        assert_eq!(with("nbf", json!(NOW + 31)), VerifyError::NotYetValid);
        assert_eq!(
            with("aud", json!("https://other.example.com")),
            VerifyError::Audience
        );
        assert_eq!(with("aud", json!([])), VerifyError::Audience);
        let mut no_aud = answer(base.clone());
        no_aud.remove("aud");
        assert_eq!(v.judge(no_aud, NOW).unwrap_err(), VerifyError::Audience);
        let mut nobody = answer(base.clone());
        nobody.remove("sub");
        assert_eq!(v.judge(nobody, NOW).unwrap_err(), VerifyError::Claim("sub"));
        // Within the leeway is still fine.
        assert!(v.judge(answer(json!({"active": true, "sub": "a", "aud": "https://mcp.example.com/mcp", "exp": NOW - 29})), NOW).is_ok());
    }

    #[tokio::test]
    async fn unreachable_endpoint_is_unavailable_not_invalid() {
        let v = IntrospectionVerifier::new(
            ResourceUri::parse("https://mcp.example.com/mcp").unwrap(),
            &["https://as.example.com".to_owned()],
            IntrospectionSettings::new("rs", "secret").endpoint("http://127.0.0.1:9/introspect"),
            &Fetcher::new(Duration::from_millis(300)),
        );
        assert!(matches!(
            v.verify("opaque").await,
            Err(VerifyError::Unavailable(_))
        ));
    }
}

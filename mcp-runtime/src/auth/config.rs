//! The one configuration step: [`Authorization`].

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

#[cfg(feature = "auth")]
use super::dpop::{DpopSettings, ProofChecker};
#[cfg(feature = "auth")]
use super::fetch::Fetcher;
use super::gate::{Gate, Verifiers};
#[cfg(feature = "auth")]
use super::introspection::{IntrospectionSettings, IntrospectionVerifier};
#[cfg(feature = "auth")]
use super::jwt::{JwtSettings, JwtVerifier};
use super::resource::ResourceUri;
use super::scope::{Hierarchy, is_scope_token};
use super::verifier::TokenVerifier;
use crate::mrtr::ReplayGuard;
use crate::security::KeyRing;

/// Turns this server into an OAuth 2.1 resource server on HTTP. Give it to
/// [`HttpOptions::authorization`](crate::HttpOptions::authorization).
///
/// Needs the canonical URI of this server (what clients send as the RFC
/// 8707 `resource` and what tokens carry as audience), at least one trusted
/// authorization server (its issuer identifier), and a way to verify
/// tokens: `jwt()` or `introspection(..)` (feature `auth`), or your own
/// [`verifier`](Self::verifier). Problems with the configuration
/// are reported when the server starts.
#[derive(Clone)]
pub struct Authorization {
    pub(crate) resource: String,
    pub(crate) issuers: Vec<String>,
    #[cfg(feature = "auth")]
    jwt: Option<JwtSettings>,
    #[cfg(feature = "auth")]
    introspection: Option<IntrospectionSettings>,
    #[cfg(feature = "auth")]
    dpop: DpopSettings,
    custom: Option<Arc<dyn TokenVerifier>>,
    extra_scopes: Vec<String>,
    hierarchy: Hierarchy,
    public_discover: bool,
    hide_unpermitted: bool,
    timeout: Duration,
    resource_name: Option<String>,
    documentation: Option<String>,
}

impl std::fmt::Debug for Authorization {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Authorization")
            .field("resource", &self.resource)
            .field("issuers", &self.issuers)
            .field("public_discover", &self.public_discover)
            .field("hide_unpermitted", &self.hide_unpermitted)
            .finish_non_exhaustive()
    }
}

impl Authorization {
    /// Authorization for the server whose canonical URI is `resource`, for
    /// example `https://notes.example.com/mcp`: `https`, no fragment, no
    /// query (plain `http` only on a loopback host).
    pub fn new(resource: impl Into<String>) -> Self {
        Authorization {
            resource: resource.into(),
            issuers: Vec::new(),
            #[cfg(feature = "auth")]
            jwt: None,
            #[cfg(feature = "auth")]
            introspection: None,
            #[cfg(feature = "auth")]
            dpop: DpopSettings::default(),
            custom: None,
            extra_scopes: Vec::new(),
            hierarchy: Hierarchy::default(),
            public_discover: false,
            hide_unpermitted: false,
            timeout: Duration::from_secs(5),
            resource_name: None,
            documentation: None,
        }
    }

    /// Trusts tokens issued by `issuer` (its issuer identifier, exactly as
    /// it appears in its metadata and in tokens' `iss`), and lists it in
    /// `authorization_servers`. Call once per trusted server.
    #[must_use]
    pub fn authorization_server(mut self, issuer: impl Into<String>) -> Self {
        self.issuers.push(issuer.into());
        self
    }

    /// Verifies JWT access tokens (RFC 9068) with the default
    /// [`JwtSettings`].
    #[cfg(feature = "auth")]
    #[cfg_attr(docsrs, doc(cfg(feature = "auth")))]
    #[must_use]
    pub fn jwt(self) -> Self {
        self.jwt_with(JwtSettings::default())
    }

    /// Verifies JWT access tokens with `settings`.
    #[cfg(feature = "auth")]
    #[cfg_attr(docsrs, doc(cfg(feature = "auth")))]
    #[must_use]
    pub fn jwt_with(mut self, settings: JwtSettings) -> Self {
        self.jwt = Some(settings);
        self
    }

    /// Verifies opaque tokens by introspection (RFC 7662). With
    /// [`jwt`](Self::jwt) too, tokens shaped like a JWT are verified
    /// locally and the others introspected.
    #[cfg(feature = "auth")]
    #[cfg_attr(docsrs, doc(cfg(feature = "auth")))]
    #[must_use]
    pub fn introspection(mut self, settings: IntrospectionSettings) -> Self {
        self.introspection = Some(settings);
        self
    }

    /// How tokens bound to a key are checked (DPoP, RFC 9449). With the
    /// `auth` feature such tokens are accepted with a valid proof by
    /// default (any asymmetric algorithm, proofs at most 60 s old, their
    /// `jti`s remembered in the server's replay store: Redis when it has
    /// shared state); `settings` can demand the server's nonces, or bound
    /// tokens only. A bound token sent as a bearer token is always
    /// refused.
    #[cfg(feature = "auth")]
    #[cfg_attr(docsrs, doc(cfg(feature = "auth")))]
    #[must_use]
    pub fn dpop(mut self, settings: DpopSettings) -> Self {
        self.dpop = settings;
        self
    }

    /// Verifies tokens with your own verifier instead of the built-in ones.
    /// It must check the audience (this server) itself.
    #[must_use]
    pub fn verifier(mut self, verifier: impl TokenVerifier) -> Self {
        self.custom = Some(Arc::new(verifier));
        self
    }

    /// Scopes to publish in `scopes_supported` besides those declared with
    /// `scopes = [...]` in code (for example scopes your handlers check
    /// themselves).
    #[must_use]
    pub fn scopes_supported<S: Into<String>>(
        mut self,
        scopes: impl IntoIterator<Item = S>,
    ) -> Self {
        self.extra_scopes.extend(scopes.into_iter().map(Into::into));
        self
    }

    /// Declares that `broad` implies each of `narrow` (a scope hierarchy,
    /// which the spec requires servers to honour): a token with `broad`
    /// passes checks for `narrow`. Transitive.
    #[must_use]
    pub fn scope_implies<S: Into<String>>(
        mut self,
        broad: &str,
        narrow: impl IntoIterator<Item = S>,
    ) -> Self {
        self.hierarchy
            .add(broad, narrow.into_iter().map(Into::into));
        self
    }

    /// Lets `server/discover` be called without a token (every other
    /// method still needs one). Off by default.
    #[must_use]
    pub fn public_discover(mut self) -> Self {
        self.public_discover = true;
        self
    }

    /// Leaves out of `tools/list`, `prompts/list`, `resources/list` and
    /// `resources/templates/list` what the caller's scopes do not allow.
    /// Those lists then differ per caller and are sent with `cacheScope:
    /// "private"`. Off by default (lists show everything, and calls are
    /// still refused with 403).
    #[must_use]
    pub fn hide_unpermitted(mut self) -> Self {
        self.hide_unpermitted = true;
        self
    }

    /// Time limit of each exchange with an authorization server: metadata,
    /// keys, introspection (default 5 s).
    #[must_use]
    pub fn fetch_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// `resource_name` in the metadata: a name for people.
    #[must_use]
    pub fn resource_name(mut self, name: impl Into<String>) -> Self {
        self.resource_name = Some(name.into());
        self
    }

    /// `resource_documentation` in the metadata: a URL for developers.
    #[must_use]
    pub fn resource_documentation(mut self, url: impl Into<String>) -> Self {
        self.documentation = Some(url.into());
        self
    }

    /// Checks the configuration and builds what the HTTP pipeline uses.
    /// `declared` is every scope declared in code; DPoP nonces are sealed
    /// with `keys` and proofs' `jti`s remembered in `replay`.
    pub(crate) fn build(
        &self,
        declared: BTreeSet<&'static str>,
        keys: &KeyRing,
        replay: &Arc<dyn ReplayGuard>,
    ) -> Result<Gate, String> {
        let resource = ResourceUri::parse(&self.resource).map_err(|e| e.to_string())?;
        if self.issuers.is_empty() {
            return Err(
                "authorization: name at least one trusted `authorization_server` (the metadata must list one)"
                    .into(),
            );
        }
        for issuer in &self.issuers {
            if !issuer.starts_with("https://") && !loopback_http(issuer) {
                return Err(format!(
                    "authorization server `{issuer}`: issuers use https (http only on loopback)"
                ));
            }
        }
        for scope in &self.extra_scopes {
            if !is_scope_token(scope) {
                return Err(format!("`{scope}` is not an OAuth scope (RFC 6749 §3.3)"));
            }
        }
        // `offline_access` is about refresh tokens, not this resource: the
        // spec says servers should not advertise it.
        let scopes: Vec<String> = declared
            .into_iter()
            .map(str::to_owned)
            .chain(self.extra_scopes.iter().cloned())
            .filter(|s| s != "offline_access")
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        let verifiers = self.verifiers(&resource)?;
        #[cfg(feature = "auth")]
        let dpop = Some(ProofChecker::new(
            self.dpop.clone(),
            &resource,
            keys.clone(),
            replay.clone(),
        ));
        #[cfg(not(feature = "auth"))]
        let dpop = {
            let _ = (keys, replay);
            None
        };
        Ok(Gate::new(
            resource,
            &self.issuers,
            &scopes,
            self.resource_name.as_deref(),
            self.documentation.as_deref(),
            verifiers,
            self.hierarchy.clone(),
            self.public_discover,
            self.hide_unpermitted,
            dpop,
        ))
    }

    fn verifiers(&self, resource: &ResourceUri) -> Result<Verifiers, String> {
        // Only the built-in verifiers (feature `auth`) add to it.
        #[cfg_attr(
            not(feature = "auth"),
            expect(unused_mut, reason = "only the built-in verifiers change it")
        )]
        let mut verifiers = Verifiers {
            custom: self.custom.clone(),
            ..Verifiers::default()
        };
        #[cfg(feature = "auth")]
        {
            let fetcher = Fetcher::new(self.timeout);
            verifiers.jwt = self.jwt.clone().map(|settings| {
                Arc::new(JwtVerifier::new(
                    resource.clone(),
                    &self.issuers,
                    settings,
                    &fetcher,
                )) as Arc<dyn TokenVerifier>
            });
            verifiers.introspection = self.introspection.clone().map(|settings| {
                Arc::new(IntrospectionVerifier::new(
                    resource.clone(),
                    &self.issuers,
                    settings,
                    &fetcher,
                )) as Arc<dyn TokenVerifier>
            });
        }
        #[cfg(not(feature = "auth"))]
        let _ = resource;
        if verifiers.is_empty() {
            return Err(
                "authorization: choose how tokens are verified: `.jwt()`, `.introspection(..)` or `.verifier(..)`"
                    .into(),
            );
        }
        Ok(verifiers)
    }
}

fn loopback_http(url: &str) -> bool {
    url.strip_prefix("http://")
        .and_then(|rest| format!("http://{rest}").parse::<http::Uri>().ok())
        .is_some_and(|uri| uri.host().is_some_and(super::resource::is_loopback))
}

//! The authenticated caller of an HTTP request, as authentication
//! establishes it: the built-in OAuth resource server (`auth` feature) or
//! your own middleware.

use std::collections::BTreeSet;
use std::sync::Arc;

use serde_json::{Map, Value};

/// Who made the request: set by the built-in authorization (see
/// `HttpOptions::authorization`) or by your own middleware as an HTTP
/// request extension (`request.extensions_mut().insert(Principal::new(..))`).
///
/// Handlers take it as `#[ctx] principal: Option<&Principal>` for their own
/// object-level checks (does this subject own this note?).
///
/// A `requestState` sealed for one principal does not open for another, so
/// a round started by one user cannot be finished by another who captured
/// the state. The binding uses [`id`](Self::id).
///
/// It never holds the access token itself: nothing downstream can pass the
/// caller's token on to another service.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Principal {
    inner: Arc<Inner>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
struct Inner {
    id: String,
    subject: Option<String>,
    client_id: Option<String>,
    issuer: Option<String>,
    scopes: BTreeSet<String>,
    claims: Map<String, Value>,
}

impl std::hash::Hash for Principal {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.inner.id.hash(state);
    }
}

impl Principal {
    /// A principal identified by `id` (a subject, client id or account),
    /// with no scopes and no claims.
    pub fn new(id: impl Into<String>) -> Self {
        Principal {
            inner: Arc::new(Inner {
                id: id.into(),
                subject: None,
                client_id: None,
                issuer: None,
                scopes: BTreeSet::new(),
                claims: Map::new(),
            }),
        }
    }

    /// The identifier `requestState` is bound to. For a verified token it
    /// is the issuer and the subject (or, without a subject, the client
    /// id), so equal subjects of two issuers stay apart.
    pub fn id(&self) -> &str {
        &self.inner.id
    }

    /// The token's subject (`sub`): the user, or the client acting for
    /// itself.
    pub fn subject(&self) -> Option<&str> {
        self.inner.subject.as_deref()
    }

    /// The OAuth client the token was issued to (`client_id`, or `azp`).
    pub fn client_id(&self) -> Option<&str> {
        self.inner.client_id.as_deref()
    }

    /// Whether the token was issued to a client acting for itself, with no
    /// user behind it (the client credentials grant: a CI job, a daemon, a
    /// backend agent): it names a client, and either no subject or the
    /// client as its subject, as RFC 9068 (§2.2) has an authorization
    /// server write `sub` when no resource owner is involved. A user's
    /// token has a subject of its own.
    pub fn is_client(&self) -> bool {
        match (&self.inner.client_id, &self.inner.subject) {
            (Some(client), Some(subject)) => client == subject,
            (Some(_), None) => true,
            (None, _) => false,
        }
    }

    /// The authorization server that issued the token (`iss`).
    pub fn issuer(&self) -> Option<&str> {
        self.inner.issuer.as_deref()
    }

    /// The scopes granted, including those implied by broader scopes the
    /// server configured (`Authorization::scope_implies`).
    pub fn scopes(&self) -> impl Iterator<Item = &str> {
        self.inner.scopes.iter().map(String::as_str)
    }

    /// Whether `scope` was granted (directly or implied).
    pub fn has_scope(&self, scope: &str) -> bool {
        self.inner.scopes.contains(scope)
    }

    /// Whether every one of `scopes` was granted.
    pub fn has_scopes(&self, scopes: &[&str]) -> bool {
        scopes.iter().all(|s| self.has_scope(s))
    }

    /// Every claim of the token (JWT payload or introspection response),
    /// for checks of your own (tenant, roles).
    pub fn claims(&self) -> &Map<String, Value> {
        &self.inner.claims
    }

    /// One claim.
    pub fn claim(&self, name: &str) -> Option<&Value> {
        self.inner.claims.get(name)
    }

    fn edit(mut self, f: impl FnOnce(&mut Inner)) -> Self {
        f(Arc::make_mut(&mut self.inner));
        self
    }

    /// Sets the subject.
    #[must_use]
    pub fn with_subject(self, subject: impl Into<String>) -> Self {
        self.edit(|i| i.subject = Some(subject.into()))
    }

    /// Sets the client id.
    #[must_use]
    pub fn with_client_id(self, client_id: impl Into<String>) -> Self {
        self.edit(|i| i.client_id = Some(client_id.into()))
    }

    /// Sets the issuer.
    #[must_use]
    pub fn with_issuer(self, issuer: impl Into<String>) -> Self {
        self.edit(|i| i.issuer = Some(issuer.into()))
    }

    /// Sets the granted scopes.
    #[must_use]
    pub fn with_scopes<S: Into<String>>(self, scopes: impl IntoIterator<Item = S>) -> Self {
        let scopes = scopes.into_iter().map(Into::into).collect();
        self.edit(|i| i.scopes = scopes)
    }

    /// Sets the claims.
    #[must_use]
    pub fn with_claims(self, claims: Map<String, Value>) -> Self {
        self.edit(|i| i.claims = claims)
    }
}

/// Whether `scope` is one RFC 6749 scope-token: one or more printable ASCII
/// characters other than space, `"` and `\` (`%x21 / %x23-5B / %x5D-7E`).
pub(crate) fn is_scope_token(scope: &str) -> bool {
    !scope.is_empty()
        && scope
            .bytes()
            .all(|b| matches!(b, 0x21 | 0x23..=0x5B | 0x5D..=0x7E))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builder_sets_every_field_and_id_stays_the_binding() {
        let p = Principal::new("https://as ann")
            .with_subject("ann")
            .with_client_id("cli")
            .with_issuer("https://as")
            .with_scopes(["notes:read", "notes:write"]);
        assert_eq!(p.id(), "https://as ann");
        assert_eq!(p.subject(), Some("ann"));
        assert_eq!(p.client_id(), Some("cli"));
        assert_eq!(p.issuer(), Some("https://as"));
        assert!(p.has_scopes(&["notes:read", "notes:write"]));
        assert!(!p.has_scope("notes:admin"));
        assert_eq!(
            p.scopes().collect::<Vec<_>>(),
            ["notes:read", "notes:write"]
        );
    }

    #[test]
    fn a_client_acting_for_itself_is_told_from_a_user() {
        let user = Principal::new("u")
            .with_subject("ann")
            .with_client_id("cli");
        assert!(!user.is_client());
        // RFC 9068 §2.2: no resource owner, `sub` is the client.
        let client = Principal::new("c")
            .with_subject("cli")
            .with_client_id("cli");
        assert!(client.is_client());
        // Introspection of a client credentials token: no `sub` at all.
        assert!(Principal::new("c").with_client_id("cli").is_client());
        // No client named: whatever it is, not a client.
        assert!(!Principal::new("x").with_subject("ann").is_client());
        assert!(!Principal::new("x").is_client());
    }
}

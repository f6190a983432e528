//! A notes server behind OAuth 2.1. Scopes are declared where each
//! capability is declared (`scopes = ["notes:write"]`), checked before the
//! handler runs, and published in the protected resource metadata. Each
//! handler takes the authenticated caller (`#[ctx] Option<&Principal>`) for
//! the check no scope can express: a note belongs to whoever wrote it.
//! The notes themselves are the server's application state, [`Notes`],
//! which handlers take as `#[ctx] notes: State<Notes>`.
//!
//! The handlers live in this library so that tests link them; `main.rs`
//! serves them over HTTP with [`authorization`] and an empty [`Notes`].

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use mcp_runtime::auth::{Authorization, JwtSettings};
use mcp_runtime::security::Principal;
use mcp_runtime::{State, prompt, resource, tool};

/// Notes by owner (the token's issuer and subject), then by slug: the
/// server's state (`.state(Notes::default())`). A handle, cheap to clone
/// (each request that takes it clones it), to one map shared by the
/// server's requests; each `Notes::default()` is a new, empty one.
#[derive(Clone, Debug, Default)]
pub struct Notes(Arc<Mutex<BTreeMap<String, BTreeMap<String, String>>>>);

impl Notes {
    fn lock(&self) -> MutexGuard<'_, BTreeMap<String, BTreeMap<String, String>>> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The caller's key in the store. Without authorization (stdio, where
/// credentials come from the environment) everything is one local owner.
fn owner(principal: Option<&Principal>) -> String {
    principal.map_or_else(|| "local".to_owned(), |p| p.id().to_owned())
}

/// The authorization this server uses on HTTP: tokens for `resource` (its
/// canonical URI, e.g. `https://notes.example.com/mcp`) issued by `issuer`,
/// verified as JWTs against the issuer's published keys (`jwt`:
/// `JwtSettings::new()` unless you tune leeway, algorithms or key refresh).
pub fn authorization(resource: &str, issuer: &str, jwt: JwtSettings) -> Authorization {
    Authorization::new(resource)
        .authorization_server(issuer)
        .jwt_with(jwt)
        .resource_name("Secure notes")
        // `notes:admin` is broader: it passes every `notes:*` check.
        .scope_implies("notes:admin", ["notes:read", "notes:write"])
        .scopes_supported(["notes:admin"])
}

/// Who you are, as this server sees your token.
#[tool(annotations(read_only))]
fn whoami(#[ctx] principal: Option<&Principal>) -> String {
    let scopes = |p: &Principal| p.scopes().collect::<Vec<_>>().join(" ");
    match principal {
        // A client acting for itself: the client credentials grant.
        Some(p) if p.is_client() => format!(
            "client {}, scopes [{}]",
            p.client_id().unwrap_or("-"),
            scopes(p)
        ),
        Some(p) => format!(
            "user {}, through client {}, scopes [{}]",
            p.subject().unwrap_or("-"),
            p.client_id().unwrap_or("-"),
            scopes(p)
        ),
        None => "anonymous (no authorization on this transport)".to_owned(),
    }
}

/// Your notes' slugs, one per line.
#[tool(scopes = ["notes:read"], annotations(read_only))]
fn list_notes(#[ctx] principal: Option<&Principal>, #[ctx] notes: State<Notes>) -> String {
    notes
        .lock()
        .get(&owner(principal))
        .map(|mine| mine.keys().cloned().collect::<Vec<_>>().join("\n"))
        .unwrap_or_default()
}

/// Writes a note (yours only: other callers never see it).
#[tool(scopes = ["notes:write"], annotations(idempotent, destructive = false))]
fn write_note(
    /// A short identifier.
    slug: String,
    /// The note's text.
    body: String,
    #[ctx] principal: Option<&Principal>,
    #[ctx] notes: State<Notes>,
) -> Result<String, String> {
    if slug.is_empty() || slug.len() > 64 {
        return Err("the slug must have 1 to 64 characters".to_owned());
    }
    notes
        .lock()
        .entry(owner(principal))
        .or_default()
        .insert(slug.clone(), body);
    Ok(format!("saved {slug}"))
}

/// One of your notes. Its content depends on who asks, so it is cached
/// per caller only.
#[resource("secure-notes://note/{slug}", name = "note", scopes = ["notes:read"], cache = private, ttl_ms = 0)]
fn note(
    slug: String,
    #[ctx] principal: Option<&Principal>,
    #[ctx] notes: State<Notes>,
) -> Option<String> {
    notes.lock().get(&owner(principal))?.get(&slug).cloned()
}

/// Asks the model to summarize one of your notes.
#[prompt(scopes = ["notes:read"])]
fn summarize(
    /// The note's slug.
    slug: String,
    #[ctx] principal: Option<&Principal>,
    #[ctx] notes: State<Notes>,
) -> Result<String, String> {
    let notes = notes.lock();
    let body = notes
        .get(&owner(principal))
        .and_then(|mine| mine.get(&slug))
        .ok_or_else(|| format!("you have no note `{slug}`"))?;
    Ok(format!("Summarize this note in one sentence:\n\n{body}"))
}

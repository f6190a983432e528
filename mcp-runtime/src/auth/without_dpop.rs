//! The stand-in for the DPoP checks without the `auth` feature (no JOSE
//! library): there is no checker, so every DPoP-bound token is refused.

use http::{HeaderMap, Method};

use super::gate::Denied;

/// What a proof must match (unread: there is never a checker).
#[allow(dead_code, reason = "read by the checker of the `auth` feature")]
pub(crate) struct Presented<'a> {
    pub(crate) method: &'a Method,
    pub(crate) path: &'a str,
    pub(crate) token: &'a str,
    pub(crate) jkt: &'a str,
}

/// Uninhabited: a gate built without the `auth` feature has none.
#[derive(Debug)]
pub(crate) enum ProofChecker {}

/// Uninhabited too: nothing can configure proofs without the feature.
#[derive(Debug)]
pub(crate) enum DpopSettings {}

impl DpopSettings {
    pub(crate) fn is_required(&self) -> bool {
        match *self {}
    }

    pub(crate) fn algorithm_names(&self) -> Vec<&'static str> {
        match *self {}
    }
}

impl ProofChecker {
    pub(crate) fn settings(&self) -> &DpopSettings {
        match *self {}
    }

    pub(crate) async fn check(&self, _: &HeaderMap, _: &Presented<'_>) -> Result<(), Denied> {
        match *self {}
    }
}

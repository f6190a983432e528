//! The stand-in for the DPoP checks without the `auth` feature (no JOSE
//! library): there is no checker, so every DPoP-bound token is refused.

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

    pub(crate) fn algs(&self) -> &str {
        match *self {}
    }
}

//! Without the `oauth-client-jose` feature: no DPoP key can exist (the
//! type has no values), so the code that would use one compiles to nothing
//! and the JOSE crates stay out of the binary.

use crate::client::transport::TransportError;

/// Stands in for the DPoP key: never made.
#[derive(Clone, Debug)]
pub(crate) enum DpopKey {}

impl DpopKey {
    pub(crate) fn generate() -> Result<DpopKey, TransportError> {
        Err(needs_jose())
    }

    pub(crate) fn from_cached(_: &str) -> Result<DpopKey, TransportError> {
        Err(needs_jose())
    }

    pub(crate) fn to_cached(&self) -> String {
        match *self {}
    }

    pub(crate) fn proof(
        &self,
        _: &str,
        _: &str,
        _: Option<&str>,
        _: Option<&str>,
    ) -> Result<String, TransportError> {
        match *self {}
    }
}

fn needs_jose() -> TransportError {
    TransportError::new("DPoP needs mcp-runtime's `oauth-client-jose` feature".into())
}

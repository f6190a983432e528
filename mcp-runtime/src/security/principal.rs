//! The authenticated caller of an HTTP request, as authentication
//! middleware establishes it.

/// Who made the request, set by authentication middleware as an HTTP
/// request extension (`request.extensions_mut().insert(Principal::new(..))`).
///
/// A `requestState` sealed for one principal does not open for another, so
/// a round started by one user cannot be finished by another who captured
/// the state.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Principal(String);

impl Principal {
    /// A principal identified by `id` (a subject, client id or account).
    pub fn new(id: impl Into<String>) -> Self {
        Principal(id.into())
    }

    /// The identifier.
    pub fn id(&self) -> &str {
        &self.0
    }
}

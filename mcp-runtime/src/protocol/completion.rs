//! `completion/complete` shapes.

use serde::{Deserialize, Serialize};

/// The most values one completion result may carry.
pub const MAX_COMPLETION_VALUES: usize = 100;

/// Suggested values for an argument.
#[derive(Clone, Debug, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Completion {
    /// Suggestions, best first (at most 100 are sent).
    pub values: Vec<String>,
    /// How many matches exist in all, if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<u64>,
    /// Whether more matches exist than were sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub has_more: Option<bool>,
}

impl Completion {
    /// Suggestions from a list. Beyond 100, the rest are counted in `total`
    /// and flagged with `hasMore`.
    pub fn new(values: impl IntoIterator<Item = impl Into<String>>) -> Self {
        Completion {
            values: values.into_iter().map(Into::into).collect(),
            total: None,
            has_more: None,
        }
        .bounded()
    }

    /// Declares the total number of matches.
    #[must_use]
    pub fn with_total(mut self, total: u64) -> Self {
        self.total = Some(total);
        self
    }

    /// Declares whether more matches exist.
    #[must_use]
    pub fn with_has_more(mut self, has_more: bool) -> Self {
        self.has_more = Some(has_more);
        self
    }

    /// Enforces the spec's limit of 100 values.
    pub(crate) fn bounded(mut self) -> Self {
        if self.values.len() > MAX_COMPLETION_VALUES {
            let total = self.values.len() as u64;
            self.values.truncate(MAX_COMPLETION_VALUES);
            self.total = Some(self.total.map_or(total, |t| t.max(total)));
            self.has_more = Some(true);
        }
        self
    }
}

//! Pieces every result shares: `resultType`, result `_meta` with the
//! server's identity, and the caching hints of cacheable results.

use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::value::RawValue;

use super::JsonObject;
use super::meta::SERVER_INFO_KEY;

/// The `resultType` of a final result.
pub(crate) const COMPLETE: &str = "complete";

/// A result's `_meta`: the server's identity (when the server reports it)
/// followed by the result's own entries. Serialized only when non-empty.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct ResultMeta<'a> {
    pub(crate) server_info: Option<&'a RawValue>,
    pub(crate) extra: Option<&'a JsonObject>,
}

impl ResultMeta<'_> {
    pub(crate) fn is_empty(&self) -> bool {
        self.server_info.is_none() && self.extra.is_none_or(JsonObject::is_empty)
    }
}

impl Serialize for ResultMeta<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        if let Some(info) = self.server_info {
            map.serialize_entry(SERVER_INFO_KEY, info)?;
        }
        for (k, v) in self.extra.into_iter().flatten() {
            // The runtime owns the serverInfo key; a handler cannot spoof it.
            if k != SERVER_INFO_KEY || self.server_info.is_none() {
                map.serialize_entry(k, v)?;
            }
        }
        map.end()
    }
}

//! Pre-serialized pages of list results, addressed by opaque cursors.
//!
//! Lists are fixed once the server is built, so every page is serialized
//! once at startup and a `*/list` request only picks a page by its cursor.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use bytes::Bytes;
use serde::Serialize;
use serde::ser::{SerializeMap, Serializer};
use serde_json::value::RawValue;

use crate::protocol::result::{COMPLETE, ResultMeta};
use crate::protocol::{CacheScope, ErrorObject};

/// Caching hints attached to a cacheable result.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CacheHint {
    /// How long the client may consider the result fresh, in milliseconds.
    pub ttl_ms: u64,
    /// Who may cache it.
    pub scope: CacheScope,
}

impl CacheHint {
    /// A hint with the given freshness and scope.
    pub const fn new(ttl_ms: u64, scope: CacheScope) -> Self {
        CacheHint { ttl_ms, scope }
    }
}

#[derive(Debug)]
pub(crate) struct Pages {
    kind: &'static str,
    fingerprint: u64,
    pages: Vec<Bytes>,
}

impl Pages {
    /// Splits `items` into pages of `page_size` under `list_key`.
    pub(crate) fn build<T: Serialize>(
        kind: &'static str,
        list_key: &'static str,
        items: &[T],
        names: impl Iterator<Item = String>,
        page_size: usize,
        cache: CacheHint,
        server_info: Option<&RawValue>,
    ) -> Pages {
        let fingerprint = fingerprint(names);
        let chunks: Vec<&[T]> = if items.is_empty() {
            vec![&[]]
        } else {
            items.chunks(page_size.max(1)).collect()
        };
        let count = chunks.len();
        let pages = chunks
            .into_iter()
            .enumerate()
            .map(|(index, chunk)| {
                let next = (index + 1 < count).then(|| cursor(kind, index + 1, fingerprint));
                let page = Page {
                    list_key,
                    items: chunk,
                    next_cursor: next.as_deref(),
                    cache,
                    meta: ResultMeta {
                        server_info,
                        extra: None,
                    },
                };
                Bytes::from(serde_json::to_vec(&page).expect("list items serialize"))
            })
            .collect();
        Pages {
            kind,
            fingerprint,
            pages,
        }
    }

    /// The page a request's `cursor` points at (the first without one).
    pub(crate) fn page(&self, cursor: Option<&str>) -> Result<&Bytes, ErrorObject> {
        let index = match cursor {
            None => 0,
            Some(cursor) => self
                .decode(cursor)
                .ok_or_else(|| ErrorObject::invalid_params("Invalid cursor"))?,
        };
        Ok(&self.pages[index])
    }

    fn decode(&self, cursor: &str) -> Option<usize> {
        let bytes = URL_SAFE_NO_PAD.decode(cursor).ok()?;
        let text = std::str::from_utf8(&bytes).ok()?;
        let mut parts = text.split(':');
        let (kind, index, fingerprint) = (parts.next()?, parts.next()?, parts.next()?);
        let index: usize = index.parse().ok()?;
        let valid = parts.next().is_none()
            && kind == self.kind
            && u64::from_str_radix(fingerprint, 16).ok()? == self.fingerprint
            && index > 0
            && index < self.pages.len();
        valid.then_some(index)
    }
}

fn cursor(kind: &str, index: usize, fingerprint: u64) -> String {
    URL_SAFE_NO_PAD.encode(format!("{kind}:{index}:{fingerprint:016x}"))
}

/// FNV-1a over the item names: stable across processes and builds, so a
/// cursor minted by one instance is valid on another serving the same list.
fn fingerprint(names: impl Iterator<Item = String>) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for name in names {
        for byte in name.bytes().chain([0]) {
            hash ^= u64::from(byte);
            hash = hash.wrapping_mul(0x0100_0000_01b3);
        }
    }
    hash
}

struct Page<'a, T> {
    list_key: &'static str,
    items: &'a [T],
    next_cursor: Option<&'a str>,
    cache: CacheHint,
    meta: ResultMeta<'a>,
}

impl<T: Serialize> Serialize for Page<'_, T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("resultType", COMPLETE)?;
        map.serialize_entry(self.list_key, self.items)?;
        if let Some(next) = self.next_cursor {
            map.serialize_entry("nextCursor", next)?;
        }
        map.serialize_entry("ttlMs", &self.cache.ttl_ms)?;
        map.serialize_entry("cacheScope", &self.cache.scope)?;
        if !self.meta.is_empty() {
            map.serialize_entry("_meta", &self.meta)?;
        }
        map.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pages(n: usize, size: usize) -> Pages {
        let items: Vec<u32> = (0..u32::try_from(n).unwrap()).collect();
        Pages::build(
            "tools",
            "tools",
            &items,
            items.iter().map(ToString::to_string),
            size,
            CacheHint::default(),
            None,
        )
    }

    fn json(bytes: &Bytes) -> serde_json::Value {
        serde_json::from_slice(bytes).unwrap()
    }

    #[test]
    fn cursors_walk_every_page_once() {
        let pages = pages(5, 2);
        let mut seen = Vec::new();
        let mut cursor: Option<String> = None;
        loop {
            let page = json(pages.page(cursor.as_deref()).unwrap());
            seen.extend(page["tools"].as_array().unwrap().iter().cloned());
            match page.get("nextCursor") {
                Some(next) => cursor = Some(next.as_str().unwrap().to_owned()),
                None => break,
            }
        }
        assert_eq!(
            seen,
            (0..5).map(serde_json::Value::from).collect::<Vec<_>>()
        );
    }

    #[test]
    fn foreign_or_forged_cursors_are_invalid() {
        let pages = pages(5, 2);
        let other = self::pages(6, 2);
        let first = json(other.page(None).unwrap());
        let foreign = first["nextCursor"].as_str().unwrap();
        for bad in [
            foreign,
            "",
            "!!",
            &cursor("tools", 0, 1),
            &cursor("tools", 9, 1),
        ] {
            assert_eq!(pages.page(Some(bad)).unwrap_err().code, -32602, "{bad}");
        }
    }

    #[test]
    fn empty_lists_have_one_empty_page() {
        let page = json(pages(0, 10).page(None).unwrap());
        assert_eq!(
            page,
            serde_json::json!({"resultType": "complete", "tools": [], "ttlMs": 0, "cacheScope": "private"})
        );
    }
}

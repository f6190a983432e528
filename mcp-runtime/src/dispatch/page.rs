//! Pages of list results, addressed by opaque cursors and serialized once.
//!
//! Lists are fixed once the server is built, so each page is serialized
//! once, the first time it is asked for, and a `*/list` request only picks
//! a page by its cursor.

use std::ops::Range;
use std::sync::OnceLock;

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

/// A list split into pages addressed by opaque cursors.
///
/// The split and the cursors are fixed when the server is built. Each page
/// is serialized the first time it is asked for and kept: a `*/list`
/// request then only picks a page by its cursor, and a server with
/// thousands of tools does not serialize them all before it can answer
/// its first request.
#[derive(Debug)]
pub(crate) struct Pages {
    kind: &'static str,
    list_key: &'static str,
    fingerprint: u64,
    len: usize,
    page_size: usize,
    cache: CacheHint,
    pages: Box<[OnceLock<Bytes>]>,
}

impl Pages {
    /// Pages of `page_size` over the items `names` names, in order, under
    /// `list_key`.
    pub(crate) fn new<'a>(
        kind: &'static str,
        list_key: &'static str,
        names: impl ExactSizeIterator<Item = &'a str>,
        page_size: usize,
        cache: CacheHint,
    ) -> Pages {
        let len = names.len();
        let page_size = page_size.max(1);
        // An empty list still has its one (empty) page.
        let count = len.div_ceil(page_size).max(1);
        Pages {
            kind,
            list_key,
            fingerprint: fingerprint(names),
            len,
            page_size,
            cache,
            pages: (0..count).map(|_| OnceLock::new()).collect(),
        }
    }

    /// The page a request's `cursor` points at (the first without one).
    /// `items` gives the items at a range of positions, for a page not yet
    /// serialized.
    pub(crate) fn page<T: Serialize>(
        &self,
        cursor: Option<&str>,
        server_info: Option<&RawValue>,
        items: impl FnOnce(Range<usize>) -> T,
    ) -> Result<Bytes, ErrorObject> {
        let index = match cursor {
            None => 0,
            Some(cursor) => self
                .decode(cursor)
                .ok_or_else(|| ErrorObject::invalid_params("Invalid cursor"))?,
        };
        let page = self.pages[index].get_or_init(|| {
            let start = index * self.page_size;
            let range = start..self.len.min(start + self.page_size);
            self.serialize(index, &items(range), server_info)
        });
        Ok(page.clone())
    }

    fn serialize<T: Serialize>(
        &self,
        index: usize,
        items: &T,
        server_info: Option<&RawValue>,
    ) -> Bytes {
        let next =
            (index + 1 < self.pages.len()).then(|| cursor(self.kind, index + 1, self.fingerprint));
        let page = Page {
            list_key: self.list_key,
            items,
            next_cursor: next.as_deref(),
            cache: self.cache,
            meta: ResultMeta {
                server_info,
                extra: None,
            },
        };
        Bytes::from(serde_json::to_vec(&page).expect("list items serialize"))
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
fn fingerprint<'a>(names: impl Iterator<Item = &'a str>) -> u64 {
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
    items: &'a T,
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

    /// `n` numbers named by their digits, in pages of `size`.
    struct List {
        items: Vec<u32>,
        pages: Pages,
    }

    impl List {
        fn page(&self, cursor: Option<&str>) -> Result<Bytes, ErrorObject> {
            self.pages.page(cursor, None, |range| &self.items[range])
        }
    }

    fn pages(n: usize, size: usize) -> List {
        let items: Vec<u32> = (0..u32::try_from(n).unwrap()).collect();
        let names: Vec<String> = items.iter().map(ToString::to_string).collect();
        let names = names.iter().map(String::as_str);
        let pages = Pages::new("tools", "tools", names, size, CacheHint::default());
        List { items, pages }
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
            let page = json(&pages.page(cursor.as_deref()).unwrap());
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
        let first = json(&other.page(None).unwrap());
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
        let page = json(&pages(0, 10).page(None).unwrap());
        assert_eq!(
            page,
            serde_json::json!({"resultType": "complete", "tools": [], "ttlMs": 0, "cacheScope": "private"})
        );
    }

    #[test]
    fn each_page_is_serialized_once_from_its_own_items() {
        let list = pages(5, 2);
        let mut asked = Vec::new();
        let mut page = |cursor: Option<&str>| {
            list.pages
                .page(cursor, None, |range| {
                    asked.push(range.clone());
                    &list.items[range]
                })
                .unwrap()
        };
        let first = page(None);
        assert_eq!(page(None), first);
        let next = json(&first)["nextCursor"].as_str().unwrap().to_owned();
        let second = page(Some(&next));
        let last = json(&second)["nextCursor"].as_str().unwrap().to_owned();
        assert_eq!(json(&page(Some(&last)))["tools"], serde_json::json!([4]));
        page(Some(&next));
        assert_eq!(asked, [0..2, 2..4, 4..5]);
    }
}

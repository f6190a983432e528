//! Pages of list results, addressed by opaque cursors and serialized once.
//!
//! Lists are fixed once the server is built, so each page is serialized
//! once, the first time it is asked for, and a `*/list` request only picks
//! a page by its cursor.

use std::borrow::Borrow;
use std::fmt;
use std::marker::PhantomData;
use std::sync::OnceLock;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use bytes::Bytes;
use serde::Serialize;
use serde::ser::{SerializeMap, Serializer};
use serde_json::value::RawValue;

use crate::protocol::result::{COMPLETE, ResultMeta};
use crate::protocol::{CacheHint, ErrorObject};

/// One kind of `*/list`: what its cursors are minted for, the result
/// member its items go under, and how an item is named (for the cursor
/// fingerprint) and shown.
pub(crate) trait Listing {
    /// The kind a cursor carries, so that one list's cursor is refused by
    /// another.
    const KIND: &'static str;
    /// The result member holding the items.
    const KEY: &'static str;
    type Item: ?Sized;
    fn name(item: &Self::Item) -> &str;
    fn show(item: &Self::Item) -> impl Serialize + '_;
}

/// A list split into pages addressed by opaque cursors.
///
/// The split and the cursors are fixed when the server is built. Each page
/// is serialized the first time it is asked for and kept: a `*/list`
/// request then only picks a page by its cursor, and a server with
/// thousands of tools does not serialize them all before it can answer
/// its first request.
pub(crate) struct Pages<L> {
    fingerprint: u64,
    len: usize,
    page_size: usize,
    cache: CacheHint,
    pages: Box<[OnceLock<Bytes>]>,
    listing: PhantomData<L>,
}

impl<L> fmt::Debug for Pages<L> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Pages")
            .field("items", &self.len)
            .field("pages", &self.pages.len())
            .finish_non_exhaustive()
    }
}

impl<L: Listing> Pages<L> {
    /// Pages of `page_size` over `items`, in order.
    pub(crate) fn new<I: Borrow<L::Item>>(items: &[I], page_size: usize, cache: CacheHint) -> Self {
        let page_size = page_size.max(1);
        Pages {
            fingerprint: fingerprint(items.iter().map(|item| L::name(item.borrow()))),
            len: items.len(),
            page_size,
            cache,
            // An empty list still has its one (empty) page.
            pages: (0..items.len().div_ceil(page_size).max(1))
                .map(|_| OnceLock::new())
                .collect(),
            listing: PhantomData,
        }
    }

    /// The page a request's `cursor` points at (the first without one), out
    /// of the same `items` the pages were built over.
    pub(crate) fn page<I: Borrow<L::Item>>(
        &self,
        cursor: Option<&str>,
        server_info: Option<&RawValue>,
        items: &[I],
    ) -> Result<Bytes, ErrorObject> {
        let index = match cursor {
            None => 0,
            Some(cursor) => self
                .decode(cursor)
                .ok_or_else(|| ErrorObject::invalid_params("Invalid cursor"))?,
        };
        let page = self.pages[index].get_or_init(|| {
            let start = index * self.page_size;
            let shown: Vec<_> = items[start..self.len.min(start + self.page_size)]
                .iter()
                .map(|item| L::show(item.borrow()))
                .collect();
            self.serialize(index, &shown, server_info)
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
            (index + 1 < self.pages.len()).then(|| cursor(L::KIND, index + 1, self.fingerprint));
        let page = Page {
            list_key: L::KEY,
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
            && kind == L::KIND
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

    /// Numbers named by their digits, listed as `tools`.
    struct Numbers;

    thread_local! {
        /// Every number shown so far on this thread, in order.
        static SHOWN: std::cell::RefCell<Vec<u32>> = const { std::cell::RefCell::new(Vec::new()) };
    }

    impl Listing for Numbers {
        const KIND: &'static str = "tools";
        const KEY: &'static str = "tools";
        type Item = (String, u32);
        fn name(item: &(String, u32)) -> &str {
            &item.0
        }
        fn show(item: &(String, u32)) -> impl Serialize + '_ {
            SHOWN.with(|shown| shown.borrow_mut().push(item.1));
            item.1
        }
    }

    /// `n` numbers in pages of `size`.
    struct List {
        items: Vec<(String, u32)>,
        pages: Pages<Numbers>,
    }

    impl List {
        fn page(&self, cursor: Option<&str>) -> Result<Bytes, ErrorObject> {
            self.pages.page(cursor, None, &self.items)
        }
    }

    fn pages(n: usize, size: usize) -> List {
        let items: Vec<_> = (0..u32::try_from(n).unwrap())
            .map(|i| (i.to_string(), i))
            .collect();
        let pages = Pages::new(&items, size, CacheHint::default());
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
        let page = |cursor: Option<&str>| list.page(cursor).unwrap();
        SHOWN.with(|shown| shown.borrow_mut().clear());
        let first = page(None);
        assert_eq!(page(None), first);
        let next = json(&first)["nextCursor"].as_str().unwrap().to_owned();
        let second = page(Some(&next));
        let last = json(&second)["nextCursor"].as_str().unwrap().to_owned();
        assert_eq!(json(&page(Some(&last)))["tools"], serde_json::json!([4]));
        page(Some(&next));
        assert_eq!(SHOWN.with(|shown| shown.take()), [0, 1, 2, 3, 4]);
    }
}

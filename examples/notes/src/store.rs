//! The notebook: an in-memory map, seeded with a few notes. The server is
//! given one as its state (`.state(Store::seeded())`) and its handlers take
//! it as `#[ctx] store: State<Store>`.

use std::collections::BTreeMap;
use std::sync::{Arc, RwLock, RwLockReadGuard};

#[derive(Debug)]
pub(crate) struct Note {
    pub(crate) title: String,
    pub(crate) body: String,
    pub(crate) tags: Vec<String>,
}

impl Note {
    pub(crate) fn new(title: &str, body: &str, tags: Vec<String>) -> Note {
        Note {
            title: title.to_owned(),
            body: body.to_owned(),
            tags,
        }
    }
}

/// The notes, by slug: a handle, cheap to clone (each request that takes
/// it clones it), to one map shared by the server's requests.
#[derive(Clone, Debug)]
pub struct Store(Arc<RwLock<BTreeMap<String, Note>>>);

impl Store {
    /// A notebook with a few notes: groceries, a garden plan and a release
    /// checklist. Each call makes a new one, which shares nothing.
    pub fn seeded() -> Store {
        let tags = |t: &[&str]| t.iter().map(|s| (*s).to_owned()).collect();
        Store(Arc::new(RwLock::new(BTreeMap::from([
            (
                "groceries".to_owned(),
                Note::new("Groceries", "Milk, eggs, coffee.", tags(&["#home"])),
            ),
            (
                "garden".to_owned(),
                Note::new(
                    "Garden plan",
                    "Tomatoes by the fence; basil in pots.",
                    tags(&["#home", "#spring"]),
                ),
            ),
            (
                "release".to_owned(),
                Note::new(
                    "Release checklist",
                    "Tag, build, publish, announce.",
                    tags(&["#work"]),
                ),
            ),
        ]))))
    }

    pub(crate) fn read(&self) -> RwLockReadGuard<'_, BTreeMap<String, Note>> {
        self.0
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    pub(crate) fn write(&self, slug: String, note: Note) {
        self.0
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert(slug, note);
    }
}

/// A one-pixel transparent PNG.
pub(crate) const LOGO_PNG: [u8; 68] = [
    137, 80, 78, 71, 13, 10, 26, 10, 0, 0, 0, 13, 73, 72, 68, 82, 0, 0, 0, 1, 0, 0, 0, 1, 8, 4, 0,
    0, 0, 181, 28, 12, 2, 0, 0, 0, 11, 73, 68, 65, 84, 120, 218, 99, 100, 96, 0, 0, 0, 6, 0, 2, 48,
    129, 208, 47, 0, 0, 0, 0, 73, 69, 78, 68, 174, 66, 96, 130,
];

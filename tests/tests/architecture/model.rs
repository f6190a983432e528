//! The checker's vocabulary: module paths and source locations.

use std::fmt;

/// A module's absolute path, always starting at `crate`
/// (e.g. `crate::dispatch::envelope`).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct ModPath(Vec<String>);

impl ModPath {
    /// The crate root (`lib.rs`).
    pub(crate) fn root() -> Self {
        Self(vec!["crate".to_owned()])
    }

    /// The module a source file defines, from its path relative to `src/`:
    /// `lib.rs` is the root, `foo.rs` and `foo/mod.rs` are `crate::foo`,
    /// `foo/bar.rs` is `crate::foo::bar`.
    pub(crate) fn of_file(relative_path: &str) -> Self {
        let stem = relative_path
            .strip_suffix(".rs")
            .unwrap_or_else(|| panic!("{relative_path}: not a .rs file"));
        let mut path = Self::root();
        path.0.extend(stem.split('/').map(str::to_owned));
        if matches!(path.0.last().map(String::as_str), Some("mod" | "lib")) {
            path.0.pop();
        }
        path
    }

    /// The module whose segments are exactly `segments` (which must start
    /// with `crate`).
    pub(crate) fn from_segments(segments: &[String]) -> Self {
        assert_eq!(
            segments.first().map(String::as_str),
            Some("crate"),
            "module paths start at the crate root: {segments:?}"
        );
        Self(segments.to_vec())
    }

    pub(crate) fn segments(&self) -> &[String] {
        &self.0
    }

    pub(crate) fn is_root(&self) -> bool {
        self.0.len() == 1
    }

    pub(crate) fn child(&self, name: &str) -> Self {
        let mut child = self.clone();
        child.0.push(name.to_owned());
        child
    }

    pub(crate) fn parent(&self) -> Option<Self> {
        (!self.is_root()).then(|| Self(self.0[..self.0.len() - 1].to_vec()))
    }

    /// Whether `self` contains `other` (or is it): parent/child pairs are
    /// one unit of code split over files, not a dependency between layers.
    pub(crate) fn contains(&self, other: &Self) -> bool {
        other.0.starts_with(&self.0)
    }

    /// Whether either module contains the other.
    pub(crate) fn is_related_to(&self, other: &Self) -> bool {
        self.contains(other) || other.contains(self)
    }

    /// The top-level module this one lives in (`crate::a` for
    /// `crate::a::x::y`); `None` for the root.
    pub(crate) fn top_level(&self) -> Option<Self> {
        (!self.is_root()).then(|| Self(self.0[..2].to_vec()))
    }

    /// The name of the top-level module this one lives in (`a` for
    /// `crate::a::x`); `None` for the root.
    pub(crate) fn top_level_name(&self) -> Option<&str> {
        self.0.get(1).map(String::as_str)
    }
}

impl fmt::Display for ModPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0.join("::"))
    }
}

/// A place in the analysed source: a path relative to `src/` and a
/// 1-based line.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct Site {
    pub(crate) file: String,
    pub(crate) line: usize,
}

impl fmt::Display for Site {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.file, self.line)
    }
}

//! Turning written paths into module dependencies: `crate::`, `self::`,
//! `super::`, names a `use` brought in, child modules, and names a glob
//! import brought in when they are modules. Everything else (external
//! crates, the prelude, local items and variables) is not a dependency.

use crate::model::{ModPath, Site};
use crate::scan::Facts;
use crate::tokens::WrittenPath;

/// How many `use` hops a path may go through before it is given up on
/// (only a malformed `use` chain gets near this).
const MAX_IMPORT_HOPS: usize = 16;

/// One written path that names another module or an item inside it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Dependency {
    pub(crate) from: ModPath,
    /// The deepest known module the path names, or names an item of.
    pub(crate) to: ModPath,
    pub(crate) site: Site,
    /// The path as written (`envelope::parse`).
    pub(crate) written: String,
}

impl Dependency {
    /// `file:line `written``, for reports.
    pub(crate) fn example(&self) -> String {
        format!("{} `{}`", self.site, self.written)
    }
}

/// Every dependency of every module on another module, in source order.
pub(crate) fn dependencies(facts: &Facts) -> Vec<Dependency> {
    let resolver = Resolver { facts };
    let mut found = Vec::new();
    for (module, module_facts) in &facts.modules {
        for path in &module_facts.paths {
            if let Some(dependency) = resolver.dependency(module, &module_facts.file, path) {
                found.push(dependency);
            }
        }
    }
    found.sort_by(|a, b| (&a.site, &a.written).cmp(&(&b.site, &b.written)));
    found.dedup();
    found
}

/// Resolves paths against the modules of one crate.
struct Resolver<'a> {
    facts: &'a Facts,
}

impl Resolver<'_> {
    fn dependency(&self, from: &ModPath, file: &str, path: &WrittenPath) -> Option<Dependency> {
        let absolute = self.resolve(from, &path.segments, 0)?;
        let to = self.deepest_module(&absolute);
        (to != *from).then(|| Dependency {
            from: from.clone(),
            to,
            site: Site {
                file: file.to_owned(),
                line: path.line,
            },
            written: path.segments.join("::"),
        })
    }

    fn is_module(&self, path: &ModPath) -> bool {
        self.facts.modules.contains_key(path)
    }

    /// The longest prefix of an absolute path that is a known module.
    fn deepest_module(&self, absolute: &[String]) -> ModPath {
        (1..=absolute.len())
            .rev()
            .map(|len| ModPath::from_segments(&absolute[..len]))
            .find(|prefix| self.is_module(prefix))
            .unwrap_or_else(ModPath::root)
    }

    /// The absolute path (`crate::..`) that `segments`, written in
    /// `module`, names; `None` when it leaves the crate or is local.
    fn resolve(&self, module: &ModPath, segments: &[String], hops: usize) -> Option<Vec<String>> {
        let (first, rest) = segments.split_first()?;
        let mut base = match first.as_str() {
            "crate" => ModPath::root().segments().to_vec(),
            "self" => module.segments().to_vec(),
            "super" => return Self::resolve_super(module, segments),
            "Self" => return None,
            name => self.resolve_name(module, name, hops)?,
        };
        base.extend_from_slice(rest);
        Some(base)
    }

    /// `super::super::x` in `module`.
    fn resolve_super(module: &ModPath, segments: &[String]) -> Option<Vec<String>> {
        let supers = segments.iter().take_while(|s| *s == "super").count();
        let mut base = module.clone();
        for _ in 0..supers {
            base = base.parent()?;
        }
        let mut absolute = base.segments().to_vec();
        absolute.extend_from_slice(&segments[supers..]);
        Some(absolute)
    }

    /// A bare first segment: a `use`d name, a child module, or a module a
    /// glob import brought in.
    fn resolve_name(&self, module: &ModPath, name: &str, hops: usize) -> Option<Vec<String>> {
        if hops > MAX_IMPORT_HOPS {
            return None;
        }
        let facts = self.facts.modules.get(module)?;
        if let Some(import) = facts.imports.iter().find(|import| import.name == name) {
            return self.resolve(module, &import.segments, hops + 1);
        }
        let child = module.child(name);
        if self.is_module(&child) {
            return Some(child.segments().to_vec());
        }
        facts.globs.iter().find_map(|glob| {
            let target = ModPath::from_segments(&self.resolve(module, glob, hops + 1)?);
            let child = target.child(name);
            self.is_module(&child).then(|| child.segments().to_vec())
        })
    }
}

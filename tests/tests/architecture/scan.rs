//! One pass of `syn::visit` over every file, collecting what each module's
//! non-test code writes: `use` bindings, every path, `legacy` cfgs and the
//! extent of every function. Nothing is resolved here (see `resolve`).

use std::collections::{BTreeMap, BTreeSet};

use syn::ext::IdentExt as _;
use syn::visit::{self, Visit};
use syn::{Attribute, Item, UseTree};

use crate::model::{ModPath, Site};
use crate::tokens::{self, WrittenPath};

/// A name a `use` brings into a module, and the path it names as written.
#[derive(Clone, Debug)]
pub(crate) struct Import {
    pub(crate) name: String,
    pub(crate) segments: Vec<String>,
}

/// What one module's non-test code writes, unresolved.
#[derive(Debug, Default)]
pub(crate) struct ModuleFacts {
    /// The file holding the module (for inline `mod x { .. }`, the file
    /// holding the block).
    pub(crate) file: String,
    pub(crate) imports: Vec<Import>,
    /// The modules of glob imports (`use super::*`), as written.
    pub(crate) globs: Vec<Vec<String>>,
    /// Every path written in the module: `use` leaves, paths in types,
    /// expressions, patterns, bounds and impl headers, and multi-segment
    /// paths inside macro invocations.
    pub(crate) paths: Vec<WrittenPath>,
}

/// A function's extent, from its signature's first token (visibility or
/// `fn`, not its doc comment) to its closing brace.
#[derive(Clone, Debug)]
pub(crate) struct FunctionSpan {
    pub(crate) module: ModPath,
    pub(crate) site: Site,
    /// `name`, or `Owner::name` for methods.
    pub(crate) name: String,
    pub(crate) last_line: usize,
}

impl FunctionSpan {
    pub(crate) fn lines(&self) -> usize {
        self.last_line + 1 - self.site.line
    }
}

/// A `cfg`/`cfg_attr` attribute mentioning `feature = "legacy"`.
#[derive(Clone, Debug)]
pub(crate) struct LegacyCfg {
    pub(crate) module: ModPath,
    pub(crate) site: Site,
    /// The trimmed source line holding the attribute.
    pub(crate) text: String,
}

/// Everything the rules look at, for the non-test code of a crate.
#[derive(Debug, Default)]
pub(crate) struct Facts {
    /// Every non-test module (the root always), with what it writes.
    pub(crate) modules: BTreeMap<ModPath, ModuleFacts>,
    pub(crate) functions: Vec<FunctionSpan>,
    pub(crate) legacy_cfgs: Vec<LegacyCfg>,
}

impl Facts {
    /// Scans `(path relative to src/, source text)` pairs.
    ///
    /// # Panics
    ///
    /// If a file does not parse: the rules would silently miss its code.
    pub(crate) fn scan(files: &[(String, String)]) -> Self {
        let mut facts = Self::default();
        facts.modules.entry(ModPath::root()).or_default();
        let mut test_modules = BTreeSet::new();
        for (path, text) in files {
            let file = syn::parse_file(text)
                .unwrap_or_else(|error| panic!("{path} does not parse: {error}"));
            let mut scanner = Scanner {
                file: path,
                lines: text.lines().collect(),
                modules: vec![ModPath::of_file(path)],
                owners: Vec::new(),
                facts: &mut facts,
                test_modules: &mut test_modules,
            };
            // The root's entry exists before `lib.rs` is read.
            scanner.facts_mut().file.clone_from(path);
            scanner.visit_file(&file);
        }
        facts.drop_modules(&test_modules);
        facts
    }

    /// Drops the facts of `#[cfg(test)] mod x;` files and their children.
    fn drop_modules(&mut self, test_modules: &BTreeSet<ModPath>) {
        let is_test = |module: &ModPath| test_modules.iter().any(|test| test.contains(module));
        self.modules.retain(|module, _| !is_test(module));
        self.functions.retain(|function| !is_test(&function.module));
        self.legacy_cfgs.retain(|cfg| !is_test(&cfg.module));
    }
}

/// The `syn` visitor for one file.
struct Scanner<'a> {
    file: &'a str,
    lines: Vec<&'a str>,
    /// The module being visited, innermost last (inline `mod` blocks push).
    modules: Vec<ModPath>,
    /// The type or trait whose methods are being visited, innermost last
    /// (`None` inside free functions, to name nested `fn`s plainly).
    owners: Vec<Option<String>>,
    facts: &'a mut Facts,
    /// Out-of-line modules declared `#[cfg(test)] mod x;`.
    test_modules: &'a mut BTreeSet<ModPath>,
}

impl Scanner<'_> {
    fn module(&self) -> &ModPath {
        self.modules
            .last()
            .expect("the file's own module is never popped")
    }

    fn facts_mut(&mut self) -> &mut ModuleFacts {
        let module = self.module().clone();
        let file = self.file;
        self.facts
            .modules
            .entry(module)
            .or_insert_with(|| ModuleFacts {
                file: file.to_owned(),
                ..ModuleFacts::default()
            })
    }

    fn site(&self, line: usize) -> Site {
        Site {
            file: self.file.to_owned(),
            line,
        }
    }

    fn record_function(&mut self, name: &syn::Ident, first_line: usize, block: &syn::Block) {
        let name = match self.owners.last() {
            Some(Some(owner)) => format!("{owner}::{name}"),
            _ => name.to_string(),
        };
        self.facts.functions.push(FunctionSpan {
            module: self.module().clone(),
            site: self.site(first_line),
            name,
            last_line: block.brace_token.span.close().start().line,
        });
    }

    fn record_use(&mut self, tree: &UseTree) {
        let mut leaves = Vec::new();
        use_leaves(tree, &mut Vec::new(), &mut leaves);
        let facts = self.facts_mut();
        for leaf in leaves {
            match leaf.binding {
                Binding::Name(name) => facts.imports.push(Import {
                    name,
                    segments: leaf.path.segments.clone(),
                }),
                Binding::Glob => facts.globs.push(leaf.path.segments.clone()),
                Binding::Nothing => {}
            }
            facts.paths.push(leaf.path);
        }
    }
}

impl<'ast> Visit<'ast> for Scanner<'_> {
    fn visit_item(&mut self, item: &'ast Item) {
        if !tokens::is_test_code(item_attrs(item)) {
            visit::visit_item(self, item);
        } else if let Item::Mod(module) = item
            && module.content.is_none()
        {
            let child = self.module().child(&module.ident.unraw().to_string());
            self.test_modules.insert(child);
        }
    }

    fn visit_item_mod(&mut self, module: &'ast syn::ItemMod) {
        if module.content.is_none() {
            // A file module: its file is scanned on its own.
            visit::visit_item_mod(self, module);
        } else {
            let child = self.module().child(&module.ident.unraw().to_string());
            self.modules.push(child);
            self.facts_mut();
            visit::visit_item_mod(self, module);
            self.modules.pop();
        }
    }

    fn visit_item_impl(&mut self, item: &'ast syn::ItemImpl) {
        let owner = match &*item.self_ty {
            syn::Type::Path(path) => path.path.segments.last().map(|s| s.ident.to_string()),
            _ => None,
        };
        self.owners
            .push(Some(owner.unwrap_or_else(|| "impl".to_owned())));
        visit::visit_item_impl(self, item);
        self.owners.pop();
    }

    fn visit_item_trait(&mut self, item: &'ast syn::ItemTrait) {
        self.owners.push(Some(item.ident.to_string()));
        visit::visit_item_trait(self, item);
        self.owners.pop();
    }

    fn visit_impl_item(&mut self, item: &'ast syn::ImplItem) {
        let attrs: &[Attribute] = match item {
            syn::ImplItem::Const(item) => &item.attrs,
            syn::ImplItem::Fn(item) => &item.attrs,
            syn::ImplItem::Type(item) => &item.attrs,
            syn::ImplItem::Macro(item) => &item.attrs,
            _ => &[],
        };
        if !tokens::is_test_code(attrs) {
            visit::visit_impl_item(self, item);
        }
    }

    fn visit_trait_item(&mut self, item: &'ast syn::TraitItem) {
        let attrs: &[Attribute] = match item {
            syn::TraitItem::Const(item) => &item.attrs,
            syn::TraitItem::Fn(item) => &item.attrs,
            syn::TraitItem::Type(item) => &item.attrs,
            syn::TraitItem::Macro(item) => &item.attrs,
            _ => &[],
        };
        if !tokens::is_test_code(attrs) {
            visit::visit_trait_item(self, item);
        }
    }

    fn visit_item_fn(&mut self, item: &'ast syn::ItemFn) {
        self.record_function(
            &item.sig.ident,
            first_line(&item.vis, &item.sig),
            &item.block,
        );
        self.owners.push(None);
        visit::visit_item_fn(self, item);
        self.owners.pop();
    }

    fn visit_impl_item_fn(&mut self, item: &'ast syn::ImplItemFn) {
        self.record_function(
            &item.sig.ident,
            first_line(&item.vis, &item.sig),
            &item.block,
        );
        self.owners.push(None);
        visit::visit_impl_item_fn(self, item);
        self.owners.pop();
    }

    fn visit_trait_item_fn(&mut self, item: &'ast syn::TraitItemFn) {
        if let Some(block) = &item.default {
            let line = first_line(&syn::Visibility::Inherited, &item.sig);
            self.record_function(&item.sig.ident, line, block);
        }
        self.owners.push(None);
        visit::visit_trait_item_fn(self, item);
        self.owners.pop();
    }

    fn visit_item_use(&mut self, item: &'ast syn::ItemUse) {
        for attr in &item.attrs {
            self.visit_attribute(attr);
        }
        if item.leading_colon.is_none() {
            self.record_use(&item.tree);
        }
    }

    fn visit_path(&mut self, path: &'ast syn::Path) {
        if path.leading_colon.is_none()
            && let Some(first) = path.segments.first()
        {
            let written = WrittenPath {
                segments: path
                    .segments
                    .iter()
                    .map(|s| s.ident.unraw().to_string())
                    .collect(),
                line: first.ident.span().start().line,
            };
            self.facts_mut().paths.push(written);
        }
        visit::visit_path(self, path);
    }

    /// `pub(crate)`, `pub(super)`, `pub(in ..)` only name ancestors.
    fn visit_vis_restricted(&mut self, _: &'ast syn::VisRestricted) {}

    /// Reads paths out of the macro's tokens; its own name (`a::b!`) is
    /// not a module reference, so it is not visited.
    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        if mac.path.is_ident("cfg") && tokens::mentions_legacy_feature(mac.tokens.clone()) {
            let line = mac.bang_token.span.start().line;
            self.record_legacy_cfg(line);
        }
        let found = tokens::paths_in_tokens(mac.tokens.clone());
        self.facts_mut().paths.extend(found);
    }

    fn visit_attribute(&mut self, attr: &'ast Attribute) {
        if tokens::is_legacy_cfg(attr) {
            self.record_legacy_cfg(attr.pound_token.span.start().line);
        }
        visit::visit_attribute(self, attr);
    }
}

impl Scanner<'_> {
    fn record_legacy_cfg(&mut self, line: usize) {
        let text = self.lines.get(line - 1).map_or("", |text| text.trim());
        self.facts.legacy_cfgs.push(LegacyCfg {
            module: self.module().clone(),
            site: self.site(line),
            text: text.to_owned(),
        });
    }
}

/// The line of a function's first signature token: its visibility if it
/// has one, else `const`/`async`/`unsafe`/`extern`/`fn`.
fn first_line(vis: &syn::Visibility, sig: &syn::Signature) -> usize {
    let span = match vis {
        syn::Visibility::Public(token) => token.span,
        syn::Visibility::Restricted(restricted) => restricted.pub_token.span,
        syn::Visibility::Inherited => [
            sig.constness.map(|t| t.span),
            sig.asyncness.map(|t| t.span),
            sig.unsafety.map(|t| t.span),
            sig.abi.as_ref().map(|abi| abi.extern_token.span),
        ]
        .into_iter()
        .flatten()
        .next()
        .unwrap_or(sig.fn_token.span),
    };
    span.start().line
}

/// What a `use` leaf binds in the module.
#[derive(Debug)]
enum Binding {
    Name(String),
    Glob,
    /// `use x as _`: a trait brought into scope anonymously.
    Nothing,
}

/// One leaf of a `use` tree: the full path it names, and what it binds.
#[derive(Debug)]
struct UseLeaf {
    path: WrittenPath,
    binding: Binding,
}

/// Flattens `use a::{b, c::{self, d as e}, f::*}` into its leaves.
fn use_leaves(tree: &UseTree, prefix: &mut Vec<String>, out: &mut Vec<UseLeaf>) {
    let leaf = |prefix: &[String], ident: &syn::Ident, binding| {
        let mut segments = prefix.to_vec();
        if ident != "self" {
            segments.push(ident.unraw().to_string());
        }
        let path = WrittenPath {
            segments,
            line: ident.span().start().line,
        };
        UseLeaf { path, binding }
    };
    match tree {
        UseTree::Path(path) => {
            prefix.push(path.ident.unraw().to_string());
            use_leaves(&path.tree, prefix, out);
            prefix.pop();
        }
        UseTree::Name(name) => {
            let bound = if name.ident == "self" {
                prefix.last().cloned().unwrap_or_default()
            } else {
                name.ident.unraw().to_string()
            };
            out.push(leaf(prefix, &name.ident, Binding::Name(bound)));
        }
        UseTree::Rename(rename) => {
            let binding = if rename.rename == "_" {
                Binding::Nothing
            } else {
                Binding::Name(rename.rename.unraw().to_string())
            };
            out.push(leaf(prefix, &rename.ident, binding));
        }
        UseTree::Glob(glob) => out.push(UseLeaf {
            path: WrittenPath {
                segments: prefix.clone(),
                line: glob.star_token.span.start().line,
            },
            binding: Binding::Glob,
        }),
        UseTree::Group(group) => {
            for tree in &group.items {
                use_leaves(tree, prefix, out);
            }
        }
    }
}

/// An item's attributes (`syn::Item` has no accessor for them).
fn item_attrs(item: &Item) -> &[Attribute] {
    match item {
        Item::Const(item) => &item.attrs,
        Item::Enum(item) => &item.attrs,
        Item::ExternCrate(item) => &item.attrs,
        Item::Fn(item) => &item.attrs,
        Item::ForeignMod(item) => &item.attrs,
        Item::Impl(item) => &item.attrs,
        Item::Macro(item) => &item.attrs,
        Item::Mod(item) => &item.attrs,
        Item::Static(item) => &item.attrs,
        Item::Struct(item) => &item.attrs,
        Item::Trait(item) => &item.attrs,
        Item::TraitAlias(item) => &item.attrs,
        Item::Type(item) => &item.attrs,
        Item::Union(item) => &item.attrs,
        Item::Use(item) => &item.attrs,
        _ => &[],
    }
}

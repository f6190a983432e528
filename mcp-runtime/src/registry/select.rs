//! Which linked items a server serves: all of them by default, or the
//! groups, modules and names a builder chooses
//! ([`ServerBuilder::items`](crate::ServerBuilder::items)).

use std::collections::BTreeSet;
use std::fmt;

use super::{BuildError, Location};

/// A set of linked `#[tool]`s, `#[resource]`s and `#[prompt]`s, for
/// [`ServerBuilder::items`](crate::ServerBuilder::items): two servers in
/// one process can serve different items.
///
/// ```
/// use mcp_runtime::Items;
///
/// // Everything not in a group, and the `reports` group.
/// let public = Items::ungrouped().with(Items::group("reports"));
/// // The `admin` group, without one of its tools.
/// let admin = Items::group("admin").without(Items::tool("drop_everything"));
/// # let _ = (public, admin);
/// ```
///
/// Every group, module and name a set mentions must match at least one
/// linked item: a misspelt one stops the server when it is built, with the
/// names that exist.
#[derive(Clone, PartialEq, Eq)]
pub struct Items(Rule);

#[derive(Clone, PartialEq, Eq)]
enum Rule {
    All,
    Ungrouped,
    Group(String),
    Module(String),
    Named(ItemKind, String),
    Union(Vec<Rule>),
    Difference(Box<Rule>, Box<Rule>),
}

/// The kind of a linked item.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum ItemKind {
    Tool,
    Resource,
    Prompt,
    /// An extension's method (layers select them; `items` does not).
    Method,
}

impl ItemKind {
    pub(crate) fn noun(self) -> &'static str {
        match self {
            ItemKind::Tool => "tool",
            ItemKind::Resource => "resource",
            ItemKind::Prompt => "prompt",
            ItemKind::Method => "method",
        }
    }
}

/// What a set is matched against: one linked item.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ItemInfo<'a> {
    pub(crate) kind: ItemKind,
    /// Tools and prompts: the name; resources: the name, and `uri`.
    pub(crate) name: &'a str,
    pub(crate) uri: Option<&'a str>,
    pub(crate) group: Option<&'a str>,
    pub(crate) location: Location,
}

impl fmt::Debug for Items {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Rule::All => f.write_str("all"),
            Rule::Ungrouped => f.write_str("ungrouped"),
            Rule::Group(group) => write!(f, "group({group})"),
            Rule::Module(module) => write!(f, "module({module})"),
            Rule::Named(kind, name) => write!(f, "{}({name})", kind.noun()),
            Rule::Union(rules) => {
                let parts: Vec<_> = rules.iter().map(ToString::to_string).collect();
                write!(f, "({})", parts.join(" + "))
            }
            Rule::Difference(from, without) => write!(f, "({from} - {without})"),
        }
    }
}

impl Default for Items {
    fn default() -> Self {
        Items::all()
    }
}

impl Items {
    /// Every linked item (the default).
    pub fn all() -> Items {
        Items(Rule::All)
    }

    /// No item: a server of extension methods alone, or a set to build
    /// up with [`with`](Self::with).
    pub fn none() -> Items {
        Items(Rule::Union(Vec::new()))
    }

    /// The items declared with `group = "name"`.
    pub fn group(name: impl Into<String>) -> Items {
        Items(Rule::Group(name.into()))
    }

    /// The items declared without a `group`.
    pub fn ungrouped() -> Items {
        Items(Rule::Ungrouped)
    }

    /// The items defined in `module` or a module inside it, written as
    /// `module_path!()` writes it: `my_crate::admin`.
    pub fn module(module: impl Into<String>) -> Items {
        Items(Rule::Module(module.into()))
    }

    /// The tool named `name`.
    pub fn tool(name: impl Into<String>) -> Items {
        Items(Rule::Named(ItemKind::Tool, name.into()))
    }

    /// The resource or resource template with this name or URI (template).
    pub fn resource(name_or_uri: impl Into<String>) -> Items {
        Items(Rule::Named(ItemKind::Resource, name_or_uri.into()))
    }

    /// The prompt named `name`.
    pub fn prompt(name: impl Into<String>) -> Items {
        Items(Rule::Named(ItemKind::Prompt, name.into()))
    }

    /// The extension method `name` (e.g. `tasks/get`): for
    /// [`ServerBuilder::layer_on`](crate::ServerBuilder::layer_on), since
    /// methods are the extensions' and a server serves all of its
    /// extensions' methods.
    pub fn method(name: impl Into<String>) -> Items {
        Items(Rule::Named(ItemKind::Method, name.into()))
    }

    /// These items and `other`'s.
    pub fn with(self, other: Items) -> Items {
        match self.0 {
            Rule::Union(mut rules) => {
                rules.push(other.0);
                Items(Rule::Union(rules))
            }
            rule => Items(Rule::Union(vec![rule, other.0])),
        }
    }

    /// These items, less `other`'s.
    pub fn without(self, other: Items) -> Items {
        Items(Rule::Difference(Box::new(self.0), Box::new(other.0)))
    }

    /// Whether every linked item is in the set (nothing to filter).
    pub(crate) fn is_all(&self) -> bool {
        self.0 == Rule::All
    }

    pub(crate) fn contains(&self, item: &ItemInfo<'_>) -> bool {
        self.0.matches(item)
    }

    /// Every group, module and name the set mentions matches a linked
    /// item: a misspelt one would silently serve less than meant.
    pub(crate) fn check(&self, linked: &[ItemInfo<'_>]) -> Result<(), BuildError> {
        let mut unmatched = Vec::new();
        self.0.unmatched(linked, &mut unmatched);
        let Some(first) = unmatched.first() else {
            return Ok(());
        };
        let groups: BTreeSet<_> = linked.iter().filter_map(|i| i.group).collect();
        let groups: Vec<_> = groups.into_iter().collect();
        Err(BuildError::Items(format!(
            "{first} matches no linked item (groups linked: {})",
            if groups.is_empty() {
                "none".to_owned()
            } else {
                groups.join(", ")
            }
        )))
    }
}

impl Rule {
    fn matches(&self, item: &ItemInfo<'_>) -> bool {
        match self {
            Rule::All => true,
            Rule::Ungrouped => item.group.is_none(),
            Rule::Group(group) => item.group == Some(group.as_str()),
            Rule::Module(module) => in_module(item.location.module, module),
            Rule::Named(kind, name) => {
                *kind == item.kind && (item.name == name || item.uri == Some(name.as_str()))
            }
            Rule::Union(rules) => rules.iter().any(|rule| rule.matches(item)),
            Rule::Difference(from, without) => from.matches(item) && !without.matches(item),
        }
    }

    /// The parts of the rule that name something no linked item has.
    fn unmatched(&self, linked: &[ItemInfo<'_>], out: &mut Vec<String>) {
        match self {
            Rule::All | Rule::Ungrouped => {}
            Rule::Group(_) | Rule::Module(_) | Rule::Named(..) => {
                if !linked.iter().any(|item| self.matches(item)) {
                    out.push(format!("`Items::{self}`"));
                }
            }
            Rule::Union(rules) => rules.iter().for_each(|rule| rule.unmatched(linked, out)),
            Rule::Difference(from, without) => {
                from.unmatched(linked, out);
                without.unmatched(linked, out);
            }
        }
    }
}

/// `module` is `parent` or inside it (`a::b` is in `a`, `ab` is not).
fn in_module(module: &str, parent: &str) -> bool {
    module
        .strip_prefix(parent)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with("::"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(kind: ItemKind, name: &'static str, group: Option<&'static str>) -> ItemInfo<'static> {
        ItemInfo {
            kind,
            name,
            uri: None,
            group,
            location: Location {
                file: "src/lib.rs",
                line: 1,
                module: "app::admin",
            },
        }
    }

    #[test]
    fn sets_select_by_group_module_and_name() {
        let close = item(ItemKind::Tool, "close", Some("admin"));
        let list = item(ItemKind::Tool, "list", None);
        let review = item(ItemKind::Prompt, "list", None);
        let public = Items::ungrouped();
        assert!(!public.contains(&close) && public.contains(&list));
        let admin = Items::group("admin").with(Items::prompt("list"));
        assert!(admin.contains(&close) && !admin.contains(&list) && admin.contains(&review));
        assert!(Items::module("app").contains(&close));
        assert!(Items::module("app::admin").contains(&close));
        assert!(!Items::module("app::ad").contains(&close));
        let most = Items::all().without(Items::tool("close"));
        assert!(!most.contains(&close) && most.contains(&list));
        assert!(!Items::none().contains(&list));
    }

    #[test]
    fn a_name_that_matches_nothing_is_an_error() {
        let linked = [item(ItemKind::Tool, "close", Some("admin"))];
        assert!(Items::group("admin").check(&linked).is_ok());
        let error = Items::ungrouped()
            .with(Items::group("admn"))
            .check(&linked)
            .unwrap_err();
        assert_eq!(
            error.to_string(),
            "items: `Items::group(admn)` matches no linked item (groups linked: admin)"
        );
        let error = Items::all()
            .without(Items::prompt("close"))
            .check(&linked)
            .unwrap_err();
        assert_eq!(
            error.to_string(),
            "items: `Items::prompt(close)` matches no linked item (groups linked: admin)"
        );
    }
}

//! Reading attributes and raw token streams, which `syn` leaves unparsed:
//! `cfg` predicates and the paths written inside macro invocations.

use proc_macro2::{Spacing, TokenStream, TokenTree};
use syn::punctuated::Punctuated;
use syn::{Attribute, Meta, Token};

/// A path as written: its segments (no leading `::`) and the line of its
/// first segment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct WrittenPath {
    pub(crate) segments: Vec<String>,
    pub(crate) line: usize,
}

/// Whether the attributes mark test-only code: `#[test]`, `#[tokio::test]`
/// (any attribute whose last segment is `test`), or a `cfg` that can only
/// hold under `cfg(test)`, such as `cfg(all(test, feature = "auth"))`.
pub(crate) fn is_test_code(attrs: &[Attribute]) -> bool {
    attrs.iter().any(|attr| {
        let path = attr.path();
        if path.is_ident("cfg") {
            attr.parse_args::<Meta>()
                .is_ok_and(|predicate| requires_test(&predicate))
        } else {
            path.segments
                .last()
                .is_some_and(|last| last.ident == "test")
        }
    })
}

/// Whether a `cfg` predicate is false outside test builds.
fn requires_test(predicate: &Meta) -> bool {
    match predicate {
        Meta::Path(path) => path.is_ident("test"),
        Meta::List(list) => {
            let Ok(nested) = list.parse_args_with(Punctuated::<Meta, Token![,]>::parse_terminated)
            else {
                return false;
            };
            if list.path.is_ident("all") {
                nested.iter().any(requires_test)
            } else if list.path.is_ident("any") {
                !nested.is_empty() && nested.iter().all(requires_test)
            } else {
                false
            }
        }
        Meta::NameValue(_) => false,
    }
}

/// Whether the attribute is a `cfg` or `cfg_attr` whose tokens contain
/// `feature = "legacy"` at any depth (`all(..)`, `not(..)`, `any(..)`).
pub(crate) fn is_legacy_cfg(attr: &Attribute) -> bool {
    let path = attr.path();
    if !(path.is_ident("cfg") || path.is_ident("cfg_attr")) {
        return false;
    }
    match &attr.meta {
        Meta::List(list) => mentions_legacy_feature(list.tokens.clone()),
        _ => false,
    }
}

/// Whether `feature = "legacy"` appears anywhere in the tokens.
pub(crate) fn mentions_legacy_feature(tokens: TokenStream) -> bool {
    let trees: Vec<TokenTree> = tokens.into_iter().collect();
    trees.iter().enumerate().any(|(index, tree)| match tree {
        TokenTree::Group(group) => mentions_legacy_feature(group.stream()),
        TokenTree::Ident(ident) if ident == "feature" => matches!(
            (trees.get(index + 1), trees.get(index + 2)),
            (Some(TokenTree::Punct(eq)), Some(TokenTree::Literal(value)))
                if eq.as_char() == '=' && value.to_string() == "\"legacy\""
        ),
        _ => false,
    })
}

/// The paths of two or more segments written in a macro's tokens (which
/// `syn` does not parse), skipping absolute `::extern` paths and macro
/// names (`a::b!`).
pub(crate) fn paths_in_tokens(tokens: TokenStream) -> Vec<WrittenPath> {
    let mut scan = PathScan::default();
    scan.feed(tokens);
    scan.flush();
    scan.found
}

/// The state of [`paths_in_tokens`]: the path being read, if any.
#[derive(Debug, Default)]
struct PathScan {
    segments: Vec<String>,
    line: usize,
    /// A `::` was read and a segment should follow.
    after_separator: bool,
    /// The first `:` of a possible `::` was read.
    half_separator: bool,
    /// The path began with `::` (an external crate).
    absolute: bool,
    found: Vec<WrittenPath>,
}

impl PathScan {
    fn feed(&mut self, tokens: TokenStream) {
        for tree in tokens {
            match tree {
                TokenTree::Ident(ident) => {
                    if !self.after_separator {
                        self.flush();
                        self.line = ident.span().start().line;
                    }
                    self.after_separator = false;
                    self.segments.push(ident.to_string());
                }
                TokenTree::Punct(punct) => self.punct(punct.as_char(), punct.spacing()),
                TokenTree::Group(group) => {
                    self.flush();
                    self.feed(group.stream());
                }
                TokenTree::Literal(_) => self.flush(),
            }
        }
    }

    fn punct(&mut self, ch: char, spacing: Spacing) {
        if ch == ':' && self.half_separator {
            self.half_separator = false;
            self.absolute |= self.segments.is_empty();
            self.after_separator = true;
        } else if ch == ':' && spacing == Spacing::Joint {
            self.half_separator = true;
        } else if ch == '!' && !self.after_separator {
            // `path!`: a macro's name, not a module reference.
            self.segments.clear();
            self.flush();
        } else {
            self.flush();
        }
    }

    fn flush(&mut self) {
        let segments = std::mem::take(&mut self.segments);
        if segments.len() >= 2 && !self.absolute {
            self.found.push(WrittenPath {
                segments,
                line: self.line,
            });
        }
        self.after_separator = false;
        self.half_separator = false;
        self.absolute = false;
    }
}

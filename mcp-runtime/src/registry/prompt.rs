//! Registered prompts.

use super::common::{Location, StaticIcon, icons, parse_static_meta};
use crate::complete::ArgumentCompleter;
use crate::prompt::PromptGetFn;
use crate::protocol::{Prompt, PromptArgument};

/// A prompt argument as the macro declares it.
#[derive(Debug)]
pub struct StaticPromptArgument {
    /// The argument name.
    pub name: &'static str,
    /// From the parameter's doc comment or `#[arg(description = "...")]`.
    pub description: Option<&'static str>,
    /// Whether the parameter's type requires it.
    pub required: bool,
}

/// One `#[prompt]` function, as the macro registers it.
///
/// Built only by generated code; not a stable API.
#[derive(Debug)]
pub struct PromptEntry {
    /// Wire name.
    pub name: &'static str,
    /// `title = "..."`.
    pub title: Option<&'static str>,
    /// From doc comments or `description = "..."`.
    pub description: Option<&'static str>,
    /// The arguments, in parameter order.
    pub arguments: &'static [StaticPromptArgument],
    /// `icon(...)` entries.
    pub icons: &'static [StaticIcon],
    /// `meta = "{...}"`.
    pub meta: Option<&'static str>,
    /// Parses the arguments and starts rendering.
    pub get: PromptGetFn,
    /// `complete(argument = function)` entries.
    pub completers: &'static [ArgumentCompleter],
    /// Asks declared on parameters (`#[elicit]`, `#[sample]`, ...).
    pub asks: &'static [crate::mrtr::declared::DeclaredAsk],
    /// Whether a context parameter lets the handler send log messages.
    pub can_log: bool,
    /// `scopes = [...]`: OAuth scopes a caller needs (checked at compile
    /// time against RFC 6749 scope-token syntax).
    pub scopes: &'static [&'static str],
    /// `group = "..."`: the group a server selects it by
    /// ([`Items::group`](crate::Items::group)).
    pub group: Option<&'static str>,
    /// What its `#[ctx]` parameters need (one list per parameter):
    /// states, checked when the server is built, and request extensions,
    /// checked before each call.
    pub requires: &'static [&'static [crate::state::Requirement]],
    /// `layer = ...`: the item's own layer, inside the server's
    /// ([`middleware`](crate::middleware)).
    pub layer: Option<fn() -> crate::middleware::ItemLayer>,
    /// `timeout_ms = ...`: how long one invocation may run; past it the
    /// handler is dropped and the request answered with `-31002`.
    pub timeout_ms: Option<u64>,
    /// Definition site.
    pub location: Location,
}

impl PromptEntry {
    pub(crate) fn to_prompt(&self) -> Prompt {
        Prompt {
            name: self.name.to_owned(),
            title: self.title.map(str::to_owned),
            description: self.description.map(str::to_owned),
            arguments: self
                .arguments
                .iter()
                .map(|a| PromptArgument {
                    name: a.name.to_owned(),
                    title: None,
                    description: a.description.map(str::to_owned),
                    required: a.required,
                })
                .collect(),
            icons: icons(self.icons),
            meta: self.meta.map(parse_static_meta),
        }
    }
}

//! Attribute keywords, in one place.

use std::fmt;

use syn::{Ident, Path};

#[derive(Clone, Copy)]
pub(crate) struct Symbol(pub(crate) &'static str);

pub(crate) const NAME: Symbol = Symbol("name");
pub(crate) const TITLE: Symbol = Symbol("title");
pub(crate) const DESCRIPTION: Symbol = Symbol("description");
pub(crate) const ANNOTATIONS: Symbol = Symbol("annotations");
pub(crate) const ICON: Symbol = Symbol("icon");
pub(crate) const META: Symbol = Symbol("meta");
pub(crate) const CRATE: Symbol = Symbol("crate");
pub(crate) const SCOPES: Symbol = Symbol("scopes");
pub(crate) const GROUP: Symbol = Symbol("group");
pub(crate) const LAYER: Symbol = Symbol("layer");
pub(crate) const TIMEOUT_MS: Symbol = Symbol("timeout_ms");
pub(crate) const BLOCKING: Symbol = Symbol("blocking");

pub(crate) const READ_ONLY: Symbol = Symbol("read_only");
pub(crate) const DESTRUCTIVE: Symbol = Symbol("destructive");
pub(crate) const IDEMPOTENT: Symbol = Symbol("idempotent");
pub(crate) const OPEN_WORLD: Symbol = Symbol("open_world");
pub(crate) const INPUT_SCHEMA: Symbol = Symbol("input_schema");
pub(crate) const OUTPUT_SCHEMA: Symbol = Symbol("output_schema");
pub(crate) const REQUIRES_EXTENSION: Symbol = Symbol("requires_extension");
pub(crate) const REPLAYABLE_STATE: Symbol = Symbol("replayable_state");
pub(crate) const TASK: Symbol = Symbol("task");
pub(crate) const REQUIRED: Symbol = Symbol("required");
pub(crate) const ANSWER_WITHIN_MS: Symbol = Symbol("answer_within_ms");
pub(crate) const POLL_INTERVAL_MS: Symbol = Symbol("poll_interval_ms");
// MCP Apps
pub(crate) const UI: Symbol = Symbol("ui");
pub(crate) const VISIBILITY: Symbol = Symbol("visibility");
pub(crate) const APP: Symbol = Symbol("app");
pub(crate) const CSP: Symbol = Symbol("csp");
pub(crate) const PERMISSIONS: Symbol = Symbol("permissions");
pub(crate) const PREFERS_BORDER: Symbol = Symbol("prefers_border");
pub(crate) const DOMAIN: Symbol = Symbol("domain");

pub(crate) const COMPLETE: Symbol = Symbol("complete");
pub(crate) const SIZE: Symbol = Symbol("size");
pub(crate) const TTL_MS: Symbol = Symbol("ttl_ms");
pub(crate) const CACHE: Symbol = Symbol("cache");
pub(crate) const AUDIENCE: Symbol = Symbol("audience");
pub(crate) const PRIORITY: Symbol = Symbol("priority");
pub(crate) const LAST_MODIFIED: Symbol = Symbol("last_modified");

pub(crate) const SRC: Symbol = Symbol("src");
pub(crate) const MIME_TYPE: Symbol = Symbol("mime_type");
pub(crate) const SIZES: Symbol = Symbol("sizes");
pub(crate) const THEME: Symbol = Symbol("theme");

/// Parameter attributes.
pub(crate) const CTX: Symbol = Symbol("ctx");
pub(crate) const ARG: Symbol = Symbol("arg");
pub(crate) const RENAME: Symbol = Symbol("rename");
pub(crate) const HEADER: Symbol = Symbol("header");
pub(crate) const DOC: Symbol = Symbol("doc");

/// Declared asks on parameters.
pub(crate) const ELICIT: Symbol = Symbol("elicit");
pub(crate) const ELICIT_URL: Symbol = Symbol("elicit_url");
pub(crate) const SAMPLE: Symbol = Symbol("sample");
pub(crate) const ROOTS: Symbol = Symbol("roots");
pub(crate) const MESSAGE: Symbol = Symbol("message");
pub(crate) const URL: Symbol = Symbol("url");
pub(crate) const PROMPT: Symbol = Symbol("prompt");
pub(crate) const SYSTEM: Symbol = Symbol("system");
pub(crate) const MAX_TOKENS: Symbol = Symbol("max_tokens");
pub(crate) const ELICIT_FORM: Symbol = Symbol("elicit_form");

impl PartialEq<Symbol> for Ident {
    fn eq(&self, word: &Symbol) -> bool {
        self == word.0
    }
}

impl PartialEq<Symbol> for &Ident {
    fn eq(&self, word: &Symbol) -> bool {
        *self == word.0
    }
}

impl PartialEq<Symbol> for Path {
    fn eq(&self, word: &Symbol) -> bool {
        self.is_ident(word.0)
    }
}

impl PartialEq<Symbol> for &Path {
    fn eq(&self, word: &Symbol) -> bool {
        self.is_ident(word.0)
    }
}

impl fmt::Display for Symbol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0)
    }
}

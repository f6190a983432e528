//! `#[prompt(...)]` arguments.

use proc_macro2::TokenStream;
use syn::parse::Parser as _;

use super::common::{CommonAttr, unknown_key};
use super::completers::{self, CompleterAttr};
use crate::ctxt::Ctxt;
use crate::symbol::COMPLETE;

/// The arguments of `#[prompt(...)]`.
#[derive(Default)]
pub(crate) struct PromptAttr {
    pub(crate) common: CommonAttr,
    pub(crate) completers: Vec<CompleterAttr>,
}

const PROMPT_KEYS: &str = "`name`, `title`, `description`, `icon(...)`, `meta`, `scopes`, `group`, `layer`, `timeout_ms`, `blocking`, `complete(...)` or `crate`";

impl PromptAttr {
    pub(crate) fn parse(cx: &Ctxt, args: TokenStream) -> PromptAttr {
        let mut attr = PromptAttr::default();
        let parser = syn::meta::parser(|meta| {
            if attr.common.parse_key(cx, &meta)? {
            } else if meta.path == COMPLETE {
                completers::parse(cx, &meta, &mut attr.completers)?;
            } else {
                unknown_key(cx, &meta, "#[prompt]", PROMPT_KEYS)?;
            }
            Ok(())
        });
        if let Err(error) = parser.parse2(args) {
            cx.push(error);
        }
        attr
    }
}

//! Attributes on parameters: `#[ctx]`, `#[arg(...)]` and doc comments.

use syn::{Attribute, LitStr};

use super::ask::AskAttr;
use super::common::{lit_str, set_once, unknown_key};
use crate::ctxt::Ctxt;
use crate::symbol::{ARG, CTX, DESCRIPTION, DOC, HEADER, RENAME};

/// What a parameter's attributes say about it.
#[derive(Default)]
pub(crate) struct ParamAttr {
    /// `#[ctx]`: filled from the request context, not from arguments.
    pub(crate) ctx: Option<Attribute>,
    /// `#[arg(rename = "...")]`.
    pub(crate) rename: Option<LitStr>,
    /// `#[arg(description = "...")]`.
    pub(crate) description: Option<LitStr>,
    /// `#[arg(header = "Name")]`: mirrored into `Mcp-Param-Name` on HTTP.
    pub(crate) header: Option<LitStr>,
    /// The `#[arg(...)]` attribute, if present.
    pub(crate) arg: Option<Attribute>,
    /// Doc comments on the parameter.
    pub(crate) docs: Vec<Attribute>,
    /// `#[elicit]`, `#[elicit_url]`, `#[sample]` or `#[roots]`.
    pub(crate) ask: Option<AskAttr>,
}

impl ParamAttr {
    /// Reads our attributes off a parameter; returns the attributes that
    /// are not ours (they stay on the function).
    pub(crate) fn parse(cx: &Ctxt, attrs: &[Attribute]) -> (ParamAttr, Vec<Attribute>) {
        let mut param = ParamAttr::default();
        let mut kept = Vec::new();
        for attr in attrs {
            let path = attr.path();
            if path == CTX {
                if !matches!(attr.meta, syn::Meta::Path(_)) {
                    cx.error_spanned_by(
                        &attr.meta,
                        "`#[ctx]` takes no arguments; the parameter's type says what it receives",
                    );
                }
                param.ctx = Some(attr.clone());
            } else if path == ARG {
                param.arg = Some(attr.clone());
                let result = attr.parse_nested_meta(|meta| {
                    if meta.path == RENAME {
                        set_once(
                            cx,
                            &meta,
                            RENAME,
                            &mut param.rename,
                            lit_str(&meta, RENAME)?,
                        );
                    } else if meta.path == DESCRIPTION {
                        let value = lit_str(&meta, DESCRIPTION)?;
                        set_once(cx, &meta, DESCRIPTION, &mut param.description, value);
                    } else if meta.path == HEADER {
                        let value = lit_str(&meta, HEADER)?;
                        set_once(cx, &meta, HEADER, &mut param.header, value);
                    } else {
                        unknown_key(cx, &meta, "#[arg]", "`rename`, `description` or `header`")?;
                    }
                    Ok(())
                });
                if let Err(error) = result {
                    cx.push(error);
                }
            } else if AskAttr::is_ask(attr) {
                if let Some(first) = &param.ask {
                    cx.error_spanned_by(
                        attr,
                        format!(
                            "this parameter is already answered by `#[{}]`; a parameter takes one ask, so give each ask its own parameter",
                            quote::ToTokens::to_token_stream(first.attr.path())
                        ),
                    );
                } else if let Some(ask) = AskAttr::parse(cx, attr) {
                    param.ask = Some(ask);
                }
            } else if path == DOC {
                param.docs.push(attr.clone());
            } else {
                kept.push(attr.clone());
            }
        }
        (param, kept)
    }
}

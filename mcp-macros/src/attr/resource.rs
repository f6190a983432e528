//! `#[resource("uri", ...)]` arguments.

use proc_macro2::{Span, TokenStream};
use syn::meta::ParseNestedMeta;
use syn::parse::{ParseStream, Parser as _};
use syn::{Ident, LitInt, LitStr, Token};

use super::common::{CommonAttr, lit_str, set_once, unknown_key};
use super::completers::{self, CompleterAttr};
use crate::ctxt::Ctxt;
use crate::symbol::{
    ANNOTATIONS, AUDIENCE, CACHE, COMPLETE, LAST_MODIFIED, MIME_TYPE, PRIORITY, SIZE, TTL_MS,
};

/// `annotations(audience = [...], priority = 0.5, last_modified = "...")`.
#[derive(Default)]
pub(crate) struct ContentAnnotationsAttr {
    pub(crate) audience: Option<Vec<LitStr>>,
    pub(crate) priority: Option<syn::Lit>,
    pub(crate) last_modified: Option<LitStr>,
}

/// The arguments of `#[resource(...)]`.
pub(crate) struct ResourceAttr {
    /// The URI or URI template; `None` when it was not given.
    pub(crate) uri: Option<LitStr>,
    /// Where to report a missing URI.
    pub(crate) span: Span,
    pub(crate) common: CommonAttr,
    pub(crate) mime_type: Option<LitStr>,
    pub(crate) size: Option<LitInt>,
    pub(crate) annotations: ContentAnnotationsAttr,
    pub(crate) ttl_ms: Option<LitInt>,
    pub(crate) cache: Option<Ident>,
    pub(crate) completers: Vec<CompleterAttr>,
}

const RESOURCE_KEYS: &str = "`name`, `title`, `description`, `mime_type`, `size`, `annotations(...)`, `icon(...)`, `meta`, `ttl_ms`, `cache`, `complete(...)` or `crate`";

impl ResourceAttr {
    pub(crate) fn parse(cx: &Ctxt, args: TokenStream) -> ResourceAttr {
        let mut attr = ResourceAttr {
            uri: None,
            span: Span::call_site(),
            common: CommonAttr::default(),
            mime_type: None,
            size: None,
            annotations: ContentAnnotationsAttr::default(),
            ttl_ms: None,
            cache: None,
            completers: Vec::new(),
        };
        let parser = |input: ParseStream<'_>| {
            if input.peek(LitStr) {
                attr.uri = Some(input.parse()?);
                if input.is_empty() {
                    return Ok(());
                }
                input.parse::<Token![,]>()?;
            }
            let options = syn::meta::parser(|meta| attr.parse_key(cx, &meta));
            options.parse2(input.parse()?)
        };
        if let Err(error) = parser.parse2(args) {
            cx.push(error);
        }
        attr
    }

    fn parse_key(&mut self, cx: &Ctxt, meta: &ParseNestedMeta<'_>) -> syn::Result<()> {
        if self.common.parse_key(cx, meta)? {
        } else if meta.path == MIME_TYPE {
            let value = lit_str(meta, MIME_TYPE)?;
            set_once(cx, meta, MIME_TYPE, &mut self.mime_type, value);
        } else if meta.path == SIZE {
            set_once(cx, meta, SIZE, &mut self.size, lit_int(meta, SIZE)?);
        } else if meta.path == TTL_MS {
            set_once(cx, meta, TTL_MS, &mut self.ttl_ms, lit_int(meta, TTL_MS)?);
        } else if meta.path == CACHE {
            let scope: Ident = meta.value()?.parse().map_err(|error| {
                syn::Error::new(error.span(), "`cache` is `public` or `private`")
            })?;
            set_once(cx, meta, CACHE, &mut self.cache, scope);
        } else if meta.path == ANNOTATIONS {
            meta.parse_nested_meta(|inner| parse_annotation(cx, &inner, &mut self.annotations))?;
        } else if meta.path == COMPLETE {
            completers::parse(cx, meta, &mut self.completers)?;
        } else {
            unknown_key(cx, meta, "#[resource]", RESOURCE_KEYS)?;
        }
        Ok(())
    }
}

fn lit_int(meta: &ParseNestedMeta<'_>, key: crate::symbol::Symbol) -> syn::Result<LitInt> {
    meta.value()?.parse().map_err(|error| {
        syn::Error::new(
            error.span(),
            format!("`{key}` takes an integer literal: `{key} = 1024`"),
        )
    })
}

fn parse_annotation(
    cx: &Ctxt,
    meta: &ParseNestedMeta<'_>,
    annotations: &mut ContentAnnotationsAttr,
) -> syn::Result<()> {
    if meta.path == AUDIENCE {
        let list: syn::ExprArray = meta.value()?.parse()?;
        let mut roles = Vec::new();
        for element in list.elems {
            match element {
                syn::Expr::Lit(syn::ExprLit {
                    lit: syn::Lit::Str(role),
                    ..
                }) => roles.push(role),
                other => cx.error_spanned_by(
                    other,
                    "`audience` lists roles as strings: `audience = [\"user\", \"assistant\"]`",
                ),
            }
        }
        set_once(cx, meta, AUDIENCE, &mut annotations.audience, roles);
    } else if meta.path == PRIORITY {
        let value: syn::Lit = meta.value()?.parse()?;
        set_once(cx, meta, PRIORITY, &mut annotations.priority, value);
    } else if meta.path == LAST_MODIFIED {
        let value = lit_str(meta, LAST_MODIFIED)?;
        set_once(
            cx,
            meta,
            LAST_MODIFIED,
            &mut annotations.last_modified,
            value,
        );
    } else {
        unknown_key(
            cx,
            meta,
            "annotations",
            "`audience`, `priority` or `last_modified`",
        )?;
    }
    Ok(())
}

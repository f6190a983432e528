//! `#[resource("uri", ...)]` arguments.

use proc_macro2::{Span, TokenStream, TokenTree};
use syn::meta::ParseNestedMeta;
use syn::parse::{ParseStream, Parser as _};
use syn::{Ident, LitInt, LitStr, Token};

use super::common::{CommonAttr, lit_int, lit_str, set_once, unknown_key};
use super::completers::{self, CompleterAttr};
use crate::ctxt::Ctxt;
use crate::symbol::{
    ANNOTATIONS, APP, AUDIENCE, CACHE, COMPLETE, LAST_MODIFIED, MIME_TYPE, PRIORITY, SIZE, TTL_MS,
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
    /// Whether a URI that is not a string literal was already reported, so
    /// that it is not reported again as missing.
    pub(crate) uri_reported: bool,
    /// Where to report a missing URI: the first argument, or the attribute
    /// when there are none.
    pub(crate) span: Span,
    pub(crate) common: CommonAttr,
    pub(crate) mime_type: Option<LitStr>,
    pub(crate) size: Option<LitInt>,
    pub(crate) annotations: ContentAnnotationsAttr,
    pub(crate) ttl_ms: Option<LitInt>,
    pub(crate) cache: Option<Ident>,
    pub(crate) completers: Vec<CompleterAttr>,
    /// MCP Apps: `app(...)`, an app's HTML view.
    pub(crate) app: Option<super::AppViewAttr>,
}

const RESOURCE_KEYS: &str = "`name`, `title`, `description`, `mime_type`, `size`, `annotations(...)`, `icon(...)`, `meta`, `scopes`, `group`, `layer`, `timeout_ms`, `blocking`, `ttl_ms`, `cache`, `complete(...)`, `app(...)` or `crate`";

impl ResourceAttr {
    /// Takes the URI out of the arguments, wherever it is, then reads the
    /// options. A URI after the options, a second URI, or a URI that is not
    /// a string literal is one error at that argument, rather than a syntax
    /// error followed by a missing-URI error.
    pub(crate) fn parse(cx: &Ctxt, args: TokenStream) -> ResourceAttr {
        let mut attr = ResourceAttr {
            uri: None,
            uri_reported: false,
            span: args
                .clone()
                .into_iter()
                .next()
                .map_or_else(Span::call_site, |token| token.span()),
            common: CommonAttr::default(),
            mime_type: None,
            size: None,
            annotations: ContentAnnotationsAttr::default(),
            ttl_ms: None,
            cache: None,
            completers: Vec::new(),
            app: None,
        };
        let mut options = TokenStream::new();
        for (index, (argument, comma)) in split_arguments(args).into_iter().enumerate() {
            match syn::parse2::<LitStr>(argument.clone()) {
                Ok(uri) if attr.uri.is_some() => cx.error_spanned_by(
                    uri,
                    "`#[resource]` takes one URI; annotate one function per URI, or use a template such as \"memo://notes/{id}\"",
                ),
                Ok(uri) => {
                    if index > 0 {
                        cx.error_spanned_by(
                            &uri,
                            format!(
                                "the URI goes first, before the options: `#[resource({:?}, ...)]`",
                                uri.value()
                            ),
                        );
                    }
                    attr.uri = Some(uri);
                }
                Err(_) if index == 0 && starts_with_uri(&argument) => {
                    let after: TokenStream = argument.clone().into_iter().skip(1).take(1).collect();
                    cx.error_spanned_by(after, "expected `,` after the URI");
                    attr.uri = syn::parse2(argument.into_iter().take(1).collect()).ok();
                }
                Err(_) if index == 0 && !is_option(&argument) => {
                    cx.error_spanned_by(
                        argument,
                        "`#[resource]` takes its URI as a string literal, such as `#[resource(\"memo://readme\")]`; it is checked at compile time, so constants and macros cannot be used",
                    );
                    attr.uri_reported = true;
                }
                Err(_) => {
                    options.extend(argument);
                    options.extend(comma);
                }
            }
        }
        let parser = syn::meta::parser(|meta| attr.parse_key(cx, &meta));
        if let Err(error) = parser.parse2(options) {
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
            if let Some(value) = lit_int(cx, meta, SIZE)? {
                set_once(cx, meta, SIZE, &mut self.size, value);
            }
        } else if meta.path == TTL_MS {
            if let Some(value) = lit_int(cx, meta, TTL_MS)? {
                set_once(cx, meta, TTL_MS, &mut self.ttl_ms, value);
            }
        } else if meta.path == CACHE {
            let scope: Ident = meta.value()?.parse().map_err(|error| {
                syn::Error::new(error.span(), "`cache` is `public` or `private`")
            })?;
            set_once(cx, meta, CACHE, &mut self.cache, scope);
        } else if meta.path == ANNOTATIONS {
            meta.parse_nested_meta(|inner| parse_annotation(cx, &inner, &mut self.annotations))?;
        } else if meta.path == COMPLETE {
            completers::parse(cx, meta, &mut self.completers)?;
        } else if meta.path == APP {
            let view = super::AppViewAttr::parse(cx, meta)?;
            set_once(cx, meta, APP, &mut self.app, view);
        } else {
            unknown_key(cx, meta, "#[resource]", RESOURCE_KEYS)?;
        }
        Ok(())
    }
}

/// The top-level arguments, each with the comma after it (if any). Commas
/// inside groups, as in `annotations(a = 1, b = 2)`, are inside one token.
fn split_arguments(args: TokenStream) -> Vec<(TokenStream, Option<TokenTree>)> {
    let mut arguments = Vec::new();
    let mut current = TokenStream::new();
    for token in args {
        match &token {
            TokenTree::Punct(punct) if punct.as_char() == ',' => {
                arguments.push((std::mem::take(&mut current), Some(token)));
            }
            _ => current.extend([token]),
        }
    }
    if !current.is_empty() {
        arguments.push((current, None));
    }
    arguments
}

/// Whether `argument` starts with a string literal (and goes on).
fn starts_with_uri(argument: &TokenStream) -> bool {
    argument
        .clone()
        .into_iter()
        .next()
        .is_some_and(|first| syn::parse2::<LitStr>(first.into()).is_ok())
}

/// Whether `argument` is shaped like an option: a key path followed by
/// `= value` or `(...)`. Anything else in the URI's place (a constant, a
/// macro call, another literal) is a URI that is not a string literal.
fn is_option(argument: &TokenStream) -> bool {
    let parser = |input: ParseStream<'_>| {
        input.call(syn::Path::parse_mod_style)?;
        let shaped = input.peek(Token![=]) || input.peek(syn::token::Paren);
        input.parse::<TokenStream>()?;
        Ok(shaped)
    };
    parser.parse2(argument.clone()).unwrap_or(false)
}

/// The integer literal after `key =`. A negative number is reported here,
/// across the sign and the digits (syn spans a negative literal at its sign
/// alone), and gives `None`.
/// What `priority` must be; also checked for literals in `check/`.
pub(crate) const PRIORITY_RANGE: &str = "`priority` is a number from 0.0 to 1.0";

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
        let value = meta.value()?;
        if value.peek(Token![-]) {
            // Reported across the sign and the digits, as for `size`.
            let minus: Token![-] = value.parse()?;
            let number: syn::Lit = value.parse()?;
            cx.error_spanned_by(quote::quote!(#minus #number), PRIORITY_RANGE);
        } else {
            let value: syn::Lit = value.parse()?;
            set_once(cx, meta, PRIORITY, &mut annotations.priority, value);
        }
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

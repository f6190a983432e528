//! Grammar shared by every attribute: string and flag values, icons,
//! `crate = ...`, duplicate and unknown keys, and the options every handler
//! takes (`name`, `title`, `description`, `icon(...)`, `meta`, `scopes`, `group`,
//! `layer`, `timeout_ms`, `blocking`, `crate`).

use proc_macro2::Span;
use syn::meta::ParseNestedMeta;
use syn::{LitBool, LitFloat, LitInt, LitStr, Path, Token};

use crate::ctxt::Ctxt;
use crate::symbol::{
    BLOCKING, CRATE, DESCRIPTION, GROUP, ICON, LAYER, META, MIME_TYPE, NAME, SCOPES, SIZES, SRC,
    Symbol, THEME, TIMEOUT_MS, TITLE,
};

/// Options every kind of handler accepts.
#[derive(Default)]
pub(crate) struct CommonAttr {
    pub(crate) name: Option<LitStr>,
    pub(crate) title: Option<LitStr>,
    pub(crate) description: Option<LitStr>,
    pub(crate) icons: Vec<IconAttr>,
    pub(crate) meta: Option<LitStr>,
    pub(crate) krate: Option<Path>,
    /// `scopes = ["notes:write", ...]`: the list (for its span) and its
    /// string literals.
    pub(crate) scopes: Option<ScopesAttr>,
    /// `group = "admin"`: the group servers select the item by (checked
    /// in `check::group`).
    pub(crate) group: Option<LitStr>,
    /// `layer = expr`: the item's own layer. Any expression; whether its
    /// value is a layer is checked by the compiler, at the expression.
    pub(crate) layer: Option<syn::Expr>,
    /// `timeout_ms = 5000`: the item's time limit, at least 1.
    pub(crate) timeout_ms: Option<u64>,
    /// `blocking`: the body runs on the blocking pool. The keyword as
    /// written, for spans; that the function is not async is checked in
    /// `check`.
    pub(crate) blocking: Option<syn::Path>,
}

/// `scopes = [...]` as written.
pub(crate) struct ScopesAttr {
    pub(crate) list: syn::ExprArray,
    pub(crate) scopes: Vec<LitStr>,
}

impl CommonAttr {
    /// Reads `meta` if it is a common option; `Ok(false)` if it is not.
    pub(crate) fn parse_key(&mut self, cx: &Ctxt, meta: &ParseNestedMeta<'_>) -> syn::Result<bool> {
        if meta.path == NAME {
            set_once(cx, meta, NAME, &mut self.name, lit_str(meta, NAME)?);
        } else if meta.path == TITLE {
            set_once(cx, meta, TITLE, &mut self.title, lit_str(meta, TITLE)?);
        } else if meta.path == DESCRIPTION {
            let value = lit_str(meta, DESCRIPTION)?;
            set_once(cx, meta, DESCRIPTION, &mut self.description, value);
        } else if meta.path == META {
            set_once(cx, meta, META, &mut self.meta, lit_str(meta, META)?);
        } else if meta.path == CRATE {
            set_once(cx, meta, CRATE, &mut self.krate, crate_path(meta)?);
        } else if meta.path == ICON {
            self.icons.push(parse_icon(cx, meta)?);
        } else if meta.path == GROUP {
            set_once(cx, meta, GROUP, &mut self.group, lit_str(meta, GROUP)?);
        } else if meta.path == SCOPES {
            let value = parse_scopes(cx, meta)?;
            set_once(cx, meta, SCOPES, &mut self.scopes, value);
        } else if meta.path == LAYER {
            let layer: syn::Expr = meta.value()?.parse()?;
            set_once(cx, meta, LAYER, &mut self.layer, layer);
        } else if meta.path == BLOCKING {
            if takes_no_value(cx, meta, BLOCKING)? {
                set_once(cx, meta, BLOCKING, &mut self.blocking, meta.path.clone());
            }
        } else if meta.path == TIMEOUT_MS {
            if let Some(value) = parse_timeout_ms(cx, meta)? {
                set_once(cx, meta, TIMEOUT_MS, &mut self.timeout_ms, value);
            }
        } else {
            return Ok(false);
        }
        Ok(true)
    }
}

/// A flag that is present or not, such as `blocking`: `key = value` and
/// `key(...)` are reported (across the key and its value, which is
/// skipped), and give `false`.
fn takes_no_value(cx: &Ctxt, meta: &ParseNestedMeta<'_>, key: Symbol) -> syn::Result<bool> {
    let path = &meta.path;
    let value = if meta.input.peek(Token![=]) {
        let value: syn::Expr = meta.value()?.parse()?;
        quote::quote!(#path = #value)
    } else if meta.input.peek(syn::token::Paren) {
        // The group as a token keeps its span, for the error.
        let group: proc_macro2::TokenTree = meta.input.parse()?;
        quote::quote!(#path #group)
    } else {
        return Ok(true);
    };
    cx.error_spanned_by(
        value,
        format!("`{key}` is a flag and takes no value: write `{key}` alone, or leave it out"),
    );
    Ok(false)
}

/// `timeout_ms = 5000`: a positive integer literal fitting `u64`, without
/// a suffix other than `u64` (`5000ms` is a literal with the suffix `ms`).
/// Anything else is reported (and skipped) here.
fn parse_timeout_ms(cx: &Ctxt, meta: &ParseNestedMeta<'_>) -> syn::Result<Option<u64>> {
    const HELP: &str =
        "`timeout_ms` is a positive number of milliseconds, e.g. `timeout_ms = 5000`";
    let value: syn::Expr = meta
        .value()?
        .parse()
        .map_err(|error| syn::Error::new(error.span(), HELP))?;
    if let syn::Expr::Lit(syn::ExprLit {
        lit: syn::Lit::Int(lit),
        attrs,
    }) = &value
        && attrs.is_empty()
        && matches!(lit.suffix(), "" | "u64")
    {
        match lit.base10_parse::<u64>() {
            Ok(0) => {}
            Ok(millis) => return Ok(Some(millis)),
            Err(_) => {
                cx.error_spanned_by(
                    lit,
                    format!("`timeout_ms` is at most {} milliseconds", u64::MAX),
                );
                return Ok(None);
            }
        }
    }
    cx.error_spanned_by(value, HELP);
    Ok(None)
}

/// `scopes = ["a", "b"]`: an array of string literals. Their syntax is
/// checked in `check::scopes`.
fn parse_scopes(cx: &Ctxt, meta: &ParseNestedMeta<'_>) -> syn::Result<ScopesAttr> {
    let list: syn::ExprArray = meta.value()?.parse().map_err(|error| {
        syn::Error::new(
            error.span(),
            "`scopes` takes an array of string literals: `scopes = [\"notes:write\"]`",
        )
    })?;
    let mut scopes = Vec::new();
    for element in &list.elems {
        match element {
            syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(scope),
                ..
            }) => scopes.push(scope.clone()),
            other => {
                cx.error_spanned_by(other, "a scope is a string literal such as \"notes:write\"")
            }
        }
    }
    Ok(ScopesAttr { list, scopes })
}

/// A boolean flag written as `flag` or `flag = true|false`.
#[derive(Clone, Copy)]
pub(crate) struct Flag {
    pub(crate) value: bool,
}

pub(crate) struct IconAttr {
    pub(crate) span: Span,
    pub(crate) src: Option<LitStr>,
    pub(crate) mime_type: Option<LitStr>,
    pub(crate) sizes: Vec<LitStr>,
    pub(crate) theme: Option<LitStr>,
}

pub(crate) fn parse_flag(meta: &ParseNestedMeta<'_>, key: Symbol) -> syn::Result<Flag> {
    if !meta.input.peek(Token![=]) {
        return Ok(Flag { value: true });
    }
    let lit: LitBool = meta.value()?.parse().map_err(|error| {
        syn::Error::new(
            error.span(),
            format!("`{key}` is `true` or `false`; `{key}` alone means `true`"),
        )
    })?;
    Ok(Flag { value: lit.value })
}

/// The string literal after `key =`, with an error that names the key.
pub(crate) fn lit_str(meta: &ParseNestedMeta<'_>, key: Symbol) -> syn::Result<LitStr> {
    meta.value()?.parse().map_err(|error| {
        syn::Error::new(
            error.span(),
            format!("`{key}` takes a string literal: `{key} = \"...\"`"),
        )
    })
}

/// `crate = path::to::mcp_runtime`. serde spells this as a string; we take
/// a path, like linkme, and say so when given a string.
pub(crate) fn crate_path(meta: &ParseNestedMeta<'_>) -> syn::Result<Path> {
    let value = meta.value()?;
    if let Ok(lit) = value.fork().parse::<LitStr>() {
        return Err(syn::Error::new(
            lit.span(),
            format!(
                "`crate` takes a path, not a string: write `crate = {}`",
                lit.value()
            ),
        ));
    }
    value.parse().map_err(|error| {
        syn::Error::new(
            error.span(),
            "`crate` takes a path to the runtime crate, such as `crate = ::mcp_runtime`",
        )
    })
}

pub(crate) fn parse_icon(cx: &Ctxt, meta: &ParseNestedMeta<'_>) -> syn::Result<IconAttr> {
    let mut icon = IconAttr {
        span: syn::spanned::Spanned::span(&meta.path),
        src: None,
        mime_type: None,
        sizes: Vec::new(),
        theme: None,
    };
    meta.parse_nested_meta(|inner| {
        if inner.path == SRC {
            set_once(cx, &inner, SRC, &mut icon.src, lit_str(&inner, SRC)?);
        } else if inner.path == MIME_TYPE {
            let value = lit_str(&inner, MIME_TYPE)?;
            set_once(cx, &inner, MIME_TYPE, &mut icon.mime_type, value);
        } else if inner.path == THEME {
            set_once(cx, &inner, THEME, &mut icon.theme, lit_str(&inner, THEME)?);
        } else if inner.path == SIZES {
            let list: syn::ExprArray = inner.value()?.parse()?;
            for element in list.elems {
                match element {
                    syn::Expr::Lit(syn::ExprLit {
                        lit: syn::Lit::Str(size),
                        ..
                    }) => icon.sizes.push(size),
                    other => cx.error_spanned_by(
                        other,
                        "icon sizes are string literals such as \"48x48\" or \"any\"",
                    ),
                }
            }
        } else {
            unknown_key(cx, &inner, "icon", "`src`, `mime_type`, `sizes` or `theme`")?;
        }
        Ok(())
    })?;
    Ok(icon)
}

pub(crate) fn set_once<T>(
    cx: &Ctxt,
    meta: &ParseNestedMeta<'_>,
    key: Symbol,
    slot: &mut Option<T>,
    value: T,
) {
    if slot.is_some() {
        cx.error_spanned_by(
            &meta.path,
            format!("duplicate `{key}` option; give it once"),
        );
    } else {
        *slot = Some(value);
    }
}

/// Reports an unknown key at the key, then skips its value so that the
/// keys after it are still checked.
pub(crate) fn unknown_key(
    cx: &Ctxt,
    meta: &ParseNestedMeta<'_>,
    context: &str,
    expected: &str,
) -> syn::Result<()> {
    let key = quote::ToTokens::to_token_stream(&meta.path)
        .to_string()
        .replace(' ', "");
    cx.error_spanned_by(
        &meta.path,
        format!("unknown `{context}` option `{key}`; expected {expected}"),
    );
    if meta.input.peek(Token![=]) {
        meta.value()?.parse::<syn::Expr>()?;
    } else if meta.input.peek(syn::token::Paren) {
        let _content;
        syn::parenthesized!(_content in meta.input);
    }
    Ok(())
}

/// A non-negative integer literal after `key =`; a negative one is
/// reported (and skipped) here.
pub(crate) fn lit_int(
    cx: &Ctxt,
    meta: &ParseNestedMeta<'_>,
    key: Symbol,
) -> syn::Result<Option<LitInt>> {
    let value = meta.value()?;
    if value.peek(Token![-]) && (value.peek2(LitInt) || value.peek2(LitFloat)) {
        let minus: Token![-] = value.parse()?;
        let number: syn::Lit = value.parse()?;
        cx.error_spanned_by(
            quote::quote!(#minus #number),
            format!("`{key}` is a non-negative integer"),
        );
        return Ok(None);
    }
    let lit = value.parse().map_err(|error| {
        syn::Error::new(
            error.span(),
            format!("`{key}` takes an integer literal: `{key} = 1024`"),
        )
    })?;
    Ok(Some(lit))
}

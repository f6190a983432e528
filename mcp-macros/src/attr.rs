//! Parsing attribute arguments into plain structs. Semantic rules live in
//! `check.rs`; here only the grammar is enforced, with unknown keys reported
//! at the key.

use proc_macro2::{Span, TokenStream};
use syn::meta::ParseNestedMeta;
use syn::parse::Parser as _;
use syn::{Attribute, LitBool, LitStr, Path, Token};

use crate::ctxt::Ctxt;
use crate::symbol::{
    ANNOTATIONS, ARG, CRATE, CTX, DESCRIPTION, DESTRUCTIVE, ICON, IDEMPOTENT, META, MIME_TYPE,
    NAME, OPEN_WORLD, READ_ONLY, RENAME, SIZES, SRC, Symbol, THEME, TITLE,
};

/// A boolean flag written as `flag` or `flag = true|false`.
#[derive(Clone, Copy)]
pub(crate) struct Flag {
    pub(crate) value: bool,
}

#[derive(Default)]
pub(crate) struct ToolAnnotationsAttr {
    pub(crate) title: Option<LitStr>,
    pub(crate) read_only: Option<Flag>,
    pub(crate) destructive: Option<Flag>,
    pub(crate) idempotent: Option<Flag>,
    pub(crate) open_world: Option<Flag>,
}

pub(crate) struct IconAttr {
    pub(crate) span: Span,
    pub(crate) src: Option<LitStr>,
    pub(crate) mime_type: Option<LitStr>,
    pub(crate) sizes: Vec<LitStr>,
    pub(crate) theme: Option<LitStr>,
}

/// The arguments of `#[tool(...)]`.
#[derive(Default)]
pub(crate) struct ToolAttr {
    pub(crate) name: Option<LitStr>,
    pub(crate) title: Option<LitStr>,
    pub(crate) description: Option<LitStr>,
    pub(crate) annotations: ToolAnnotationsAttr,
    pub(crate) icons: Vec<IconAttr>,
    pub(crate) meta: Option<LitStr>,
    pub(crate) krate: Option<Path>,
}

const TOOL_KEYS: &str =
    "`name`, `title`, `description`, `annotations(...)`, `icon(...)`, `meta` or `crate`";

impl ToolAttr {
    pub(crate) fn parse(cx: &Ctxt, args: TokenStream) -> ToolAttr {
        let mut attr = ToolAttr::default();
        let parser = syn::meta::parser(|meta| {
            if meta.path == NAME {
                set_once(cx, &meta, NAME, &mut attr.name, meta.value()?.parse()?);
            } else if meta.path == TITLE {
                set_once(cx, &meta, TITLE, &mut attr.title, meta.value()?.parse()?);
            } else if meta.path == DESCRIPTION {
                let value = meta.value()?.parse()?;
                set_once(cx, &meta, DESCRIPTION, &mut attr.description, value);
            } else if meta.path == META {
                set_once(cx, &meta, META, &mut attr.meta, meta.value()?.parse()?);
            } else if meta.path == CRATE {
                set_once(cx, &meta, CRATE, &mut attr.krate, meta.value()?.parse()?);
            } else if meta.path == ANNOTATIONS {
                meta.parse_nested_meta(|inner| {
                    parse_annotation(cx, &inner, &mut attr.annotations)
                })?;
            } else if meta.path == ICON {
                attr.icons.push(parse_icon(cx, &meta)?);
            } else {
                unknown_key(cx, &meta, "#[tool]", TOOL_KEYS)?;
            }
            Ok(())
        });
        if let Err(error) = parser.parse2(args) {
            cx.push(error);
        }
        attr
    }
}

fn parse_annotation(
    cx: &Ctxt,
    meta: &ParseNestedMeta<'_>,
    annotations: &mut ToolAnnotationsAttr,
) -> syn::Result<()> {
    let flags = [
        (READ_ONLY, &mut annotations.read_only),
        (DESTRUCTIVE, &mut annotations.destructive),
        (IDEMPOTENT, &mut annotations.idempotent),
        (OPEN_WORLD, &mut annotations.open_world),
    ];
    if meta.path == TITLE {
        let value = meta.value()?.parse()?;
        set_once(cx, meta, TITLE, &mut annotations.title, value);
        return Ok(());
    }
    for (symbol, slot) in flags {
        if meta.path == symbol {
            let flag = parse_flag(meta)?;
            set_once(cx, meta, symbol, slot, flag);
            return Ok(());
        }
    }
    unknown_key(
        cx,
        meta,
        "annotations",
        "`read_only`, `destructive`, `idempotent`, `open_world` or `title`",
    )
}

fn parse_flag(meta: &ParseNestedMeta<'_>) -> syn::Result<Flag> {
    if meta.input.peek(Token![=]) {
        let lit: LitBool = meta.value()?.parse()?;
        Ok(Flag { value: lit.value })
    } else {
        Ok(Flag { value: true })
    }
}

fn parse_icon(cx: &Ctxt, meta: &ParseNestedMeta<'_>) -> syn::Result<IconAttr> {
    let mut icon = IconAttr {
        span: syn::spanned::Spanned::span(&meta.path),
        src: None,
        mime_type: None,
        sizes: Vec::new(),
        theme: None,
    };
    meta.parse_nested_meta(|inner| {
        if inner.path == SRC {
            set_once(cx, &inner, SRC, &mut icon.src, inner.value()?.parse()?);
        } else if inner.path == MIME_TYPE {
            let value = inner.value()?.parse()?;
            set_once(cx, &inner, MIME_TYPE, &mut icon.mime_type, value);
        } else if inner.path == THEME {
            set_once(cx, &inner, THEME, &mut icon.theme, inner.value()?.parse()?);
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

fn set_once<T>(cx: &Ctxt, meta: &ParseNestedMeta<'_>, key: Symbol, slot: &mut Option<T>, value: T) {
    if slot.is_some() {
        cx.error_spanned_by(&meta.path, format!("duplicate `{key}` option"));
    } else {
        *slot = Some(value);
    }
}

/// Reports an unknown key at the key, then skips its value so that the
/// keys after it are still checked.
fn unknown_key(
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

/// What a parameter's attributes say about it.
#[derive(Default)]
pub(crate) struct ParamAttr {
    /// `#[ctx]`: filled from the request context, not from arguments.
    pub(crate) ctx: Option<Span>,
    /// `#[arg(rename = "...")]`.
    pub(crate) rename: Option<LitStr>,
    /// `#[arg(description = "...")]`.
    pub(crate) description: Option<LitStr>,
    /// `#[arg]` was present.
    pub(crate) arg: Option<Span>,
    /// Doc comments on the parameter.
    pub(crate) docs: Vec<Attribute>,
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
                if let Err(error) = attr.meta.require_path_only() {
                    cx.push(syn::Error::new(error.span(), "`#[ctx]` takes no arguments"));
                }
                param.ctx = Some(syn::spanned::Spanned::span(attr));
            } else if path == ARG {
                param.arg = Some(syn::spanned::Spanned::span(attr));
                let result = attr.parse_nested_meta(|meta| {
                    if meta.path == RENAME {
                        set_once(cx, &meta, RENAME, &mut param.rename, meta.value()?.parse()?);
                    } else if meta.path == DESCRIPTION {
                        let value = meta.value()?.parse()?;
                        set_once(cx, &meta, DESCRIPTION, &mut param.description, value);
                    } else {
                        unknown_key(cx, &meta, "#[arg]", "`rename` or `description`")?;
                    }
                    Ok(())
                });
                if let Err(error) = result {
                    cx.push(error);
                }
            } else if path == crate::symbol::DOC {
                param.docs.push(attr.clone());
            } else {
                kept.push(attr.clone());
            }
        }
        (param, kept)
    }
}

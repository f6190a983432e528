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
                set_once(cx, &meta, NAME, &mut attr.name, lit_str(&meta, NAME)?);
            } else if meta.path == TITLE {
                set_once(cx, &meta, TITLE, &mut attr.title, lit_str(&meta, TITLE)?);
            } else if meta.path == DESCRIPTION {
                let value = lit_str(&meta, DESCRIPTION)?;
                set_once(cx, &meta, DESCRIPTION, &mut attr.description, value);
            } else if meta.path == META {
                set_once(cx, &meta, META, &mut attr.meta, lit_str(&meta, META)?);
            } else if meta.path == CRATE {
                set_once(cx, &meta, CRATE, &mut attr.krate, crate_path(&meta)?);
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
        let value = lit_str(meta, TITLE)?;
        set_once(cx, meta, TITLE, &mut annotations.title, value);
        return Ok(());
    }
    for (symbol, slot) in flags {
        if meta.path == symbol {
            let flag = parse_flag(meta, symbol)?;
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

fn parse_flag(meta: &ParseNestedMeta<'_>, key: Symbol) -> syn::Result<Flag> {
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
fn lit_str(meta: &ParseNestedMeta<'_>, key: Symbol) -> syn::Result<LitStr> {
    meta.value()?.parse().map_err(|error| {
        syn::Error::new(
            error.span(),
            format!("`{key}` takes a string literal: `{key} = \"...\"`"),
        )
    })
}

/// `crate = path::to::mcp_runtime`. serde spells this as a string; we take
/// a path, like linkme, and say so when given a string.
fn crate_path(meta: &ParseNestedMeta<'_>) -> syn::Result<Path> {
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

fn set_once<T>(cx: &Ctxt, meta: &ParseNestedMeta<'_>, key: Symbol, slot: &mut Option<T>, value: T) {
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
    pub(crate) ctx: Option<Attribute>,
    /// `#[arg(rename = "...")]`.
    pub(crate) rename: Option<LitStr>,
    /// `#[arg(description = "...")]`.
    pub(crate) description: Option<LitStr>,
    /// The `#[arg(...)]` attribute, if present.
    pub(crate) arg: Option<Attribute>,
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

#[cfg(test)]
mod tests {
    use quote::quote;

    use super::*;

    fn messages(cx: Ctxt) -> Vec<String> {
        match cx.check() {
            Ok(()) => Vec::new(),
            Err(errors) => errors.into_iter().map(|e| e.to_string()).collect(),
        }
    }

    fn tool_attr(args: TokenStream) -> (ToolAttr, Vec<String>) {
        let cx = Ctxt::new();
        let attr = ToolAttr::parse(&cx, args);
        (attr, messages(cx))
    }

    fn param_attr(attrs: TokenStream) -> (ParamAttr, Vec<Attribute>, Vec<String>) {
        let item: syn::ItemFn = syn::parse2(quote!(fn f(#attrs x: T) {})).unwrap();
        let syn::FnArg::Typed(typed) = &item.sig.inputs[0] else {
            unreachable!()
        };
        let cx = Ctxt::new();
        let (attr, kept) = ParamAttr::parse(&cx, &typed.attrs);
        (attr, kept, messages(cx))
    }

    #[test]
    fn every_tool_option_is_read() {
        let (attr, errors) = tool_attr(quote!(
            name = "n",
            title = "T",
            description = "D",
            annotations(read_only, destructive = false, title = "A"),
            icon(
                src = "https://x/i.png",
                sizes = ["48x48", "any"],
                theme = "dark"
            ),
            icon(src = "data:,"),
            meta = "{}",
            crate = my::runtime
        ));
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(attr.name.unwrap().value(), "n");
        assert_eq!(attr.title.unwrap().value(), "T");
        assert_eq!(attr.description.unwrap().value(), "D");
        assert_eq!(attr.annotations.title.unwrap().value(), "A");
        assert!(attr.annotations.read_only.unwrap().value);
        assert!(!attr.annotations.destructive.unwrap().value);
        assert!(attr.annotations.idempotent.is_none());
        assert_eq!(attr.icons.len(), 2);
        assert_eq!(attr.icons[0].sizes.len(), 2);
        assert_eq!(attr.icons[0].theme.as_ref().unwrap().value(), "dark");
        assert!(attr.icons[1].theme.is_none());
        assert_eq!(attr.meta.unwrap().value(), "{}");
        let krate: Path = syn::parse_quote!(my::runtime);
        assert!(attr.krate.unwrap() == krate);
    }

    #[test]
    fn independent_mistakes_are_all_reported() {
        let (attr, errors) = tool_attr(quote!(nme = "x", name = "a", name = "b", title = "t"));
        assert_eq!(errors.len(), 2, "{errors:?}");
        assert!(errors[0].starts_with("unknown `#[tool]` option `nme`"));
        assert_eq!(errors[1], "duplicate `name` option; give it once");
        // The first value wins and later keys are still read.
        assert_eq!(attr.name.unwrap().value(), "a");
        assert_eq!(attr.title.unwrap().value(), "t");
    }

    #[test]
    fn values_of_the_wrong_kind_name_the_key() {
        let (_, errors) = tool_attr(quote!(crate = "mcp_runtime"));
        assert_eq!(
            errors,
            ["`crate` takes a path, not a string: write `crate = mcp_runtime`"]
        );
        let (_, errors) = tool_attr(quote!(title = 5));
        assert_eq!(
            errors,
            ["`title` takes a string literal: `title = \"...\"`"]
        );
        let (_, errors) = tool_attr(quote!(annotations(idempotent = "yes")));
        assert_eq!(
            errors,
            ["`idempotent` is `true` or `false`; `idempotent` alone means `true`"]
        );
    }

    #[test]
    fn parameter_attributes_are_taken_and_others_kept() {
        let (attr, kept, errors) = param_attr(quote!(
            /// Docs.
            #[arg(rename = "wire", description = "D")]
            #[allow(unused)]
        ));
        assert!(errors.is_empty(), "{errors:?}");
        assert!(attr.ctx.is_none());
        assert!(attr.arg.is_some());
        assert_eq!(attr.rename.unwrap().value(), "wire");
        assert_eq!(attr.description.unwrap().value(), "D");
        assert_eq!(attr.docs.len(), 1);
        assert_eq!(kept.len(), 1);
        assert!(kept[0].path().is_ident("allow"));
    }

    #[test]
    fn ctx_takes_no_arguments() {
        let (attr, _, errors) = param_attr(quote!(#[ctx]));
        assert!(attr.ctx.is_some());
        assert!(errors.is_empty());
        for tokens in [quote!(#[ctx(foo)]), quote!(#[ctx = "x"])] {
            let (attr, _, errors) = param_attr(tokens);
            // Still a context parameter, so no second error about its type.
            assert!(attr.ctx.is_some());
            assert_eq!(errors.len(), 1);
            assert!(errors[0].starts_with("`#[ctx]` takes no arguments"));
        }
    }
}

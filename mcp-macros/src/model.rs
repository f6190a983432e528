//! The macro's view of an annotated function: built from syn, checked in
//! `check.rs`, expanded in `expand/`. Nodes keep references to the original
//! syntax so errors can point at it.

use proc_macro2::{Span, TokenStream};
use syn::ext::IdentExt as _;
use syn::{FnArg, Ident, ItemFn, LitStr, Pat, ReturnType, Type};

use crate::attr::{AskAttrKind, CommonAttr, ParamAttr, placeholders};
use crate::ctxt::Ctxt;
use crate::doc;
use crate::kind::Kind;

/// A parameter filled from the request context (`#[ctx]`).
pub(crate) struct ContextParam<'a> {
    pub(crate) ty: &'a Type,
}

/// A parameter filled from the request's arguments (tool arguments, prompt
/// arguments or URI template variables).
pub(crate) struct ArgumentParam<'a> {
    pub(crate) ident: Ident,
    pub(crate) ty: &'a Type,
    /// The name on the wire: JSON property, prompt argument or template
    /// variable.
    pub(crate) wire_name: String,
    pub(crate) wire_name_span: Span,
    pub(crate) rename: Option<LitStr>,
    pub(crate) description: Option<LitStr>,
    /// `#[arg(header = "...")]`.
    pub(crate) header: Option<LitStr>,
    pub(crate) docs: Vec<syn::Attribute>,
}

/// A parameter answered by the client before the body runs: `#[elicit]`,
/// `#[elicit_url]`, `#[sample]` or `#[roots]`.
pub(crate) struct AskParam<'a> {
    /// Its `inputRequests` key is its name.
    pub(crate) ident: Ident,
    pub(crate) ty: &'a Type,
    pub(crate) kind: AskAttrKind,
}

pub(crate) enum Param<'a> {
    Context(ContextParam<'a>),
    Argument(ArgumentParam<'a>),
    Ask(AskParam<'a>),
}

/// A function under `#[tool]`, `#[resource]` or `#[prompt]`.
pub(crate) struct HandlerFn<'a> {
    pub(crate) kind: Kind,
    pub(crate) original: &'a ItemFn,
    /// The function as it is emitted: only our parameter attributes removed.
    pub(crate) emitted: ItemFn,
    /// The handler's name: `name = "..."`, or the function's identifier.
    pub(crate) name: String,
    /// Whether the name was given with `name = "..."`.
    pub(crate) explicit_name: bool,
    pub(crate) name_span: Span,
    pub(crate) description: Option<TokenStream>,
    pub(crate) params: Vec<Param<'a>>,
    /// The declared return type; `None` for `()`.
    pub(crate) output: Option<&'a Type>,
    pub(crate) is_async: bool,
}

impl<'a> HandlerFn<'a> {
    pub(crate) fn from_syn(
        cx: &Ctxt,
        kind: Kind,
        original: &'a ItemFn,
        common: &CommonAttr,
    ) -> HandlerFn<'a> {
        let mut emitted = original.clone();
        let mut params = Vec::new();
        for (input, emitted_input) in original
            .sig
            .inputs
            .iter()
            .zip(emitted.sig.inputs.iter_mut())
        {
            match (input, emitted_input) {
                (FnArg::Typed(typed), FnArg::Typed(emitted_typed)) => {
                    let (param_attr, kept) = ParamAttr::parse(cx, &typed.attrs);
                    emitted_typed.attrs = kept;
                    if let Some(param) =
                        Param::from_syn(cx, kind, &typed.pat, &typed.ty, param_attr)
                    {
                        params.push(param);
                    }
                }
                (FnArg::Receiver(receiver), _) => cx.error_spanned_by(
                    receiver,
                    format!(
                        "`{}` goes on free functions, not methods; move this function out of the `impl` block",
                        kind.attribute()
                    ),
                ),
                _ => {}
            }
        }
        allow_unused_if_asked_about(&mut emitted, &params);
        let (name, name_span) = match &common.name {
            Some(lit) => (lit.value(), lit.span()),
            None => (
                original.sig.ident.unraw().to_string(),
                original.sig.ident.span(),
            ),
        };
        let description = match &common.description {
            Some(lit) => Some(quote::quote!(#lit)),
            None => doc::description(&original.attrs),
        };
        let output = match &original.sig.output {
            ReturnType::Default => None,
            ReturnType::Type(_, ty) => Some(&**ty),
        };
        HandlerFn {
            kind,
            original,
            emitted,
            name,
            explicit_name: common.name.is_some(),
            name_span,
            description,
            params,
            output,
            is_async: original.sig.asyncness.is_some(),
        }
    }

    pub(crate) fn arguments(&self) -> impl Iterator<Item = &ArgumentParam<'a>> {
        self.params.iter().filter_map(|p| match p {
            Param::Argument(a) => Some(a),
            Param::Context(_) | Param::Ask(_) => None,
        })
    }

    pub(crate) fn asks(&self) -> impl Iterator<Item = (usize, &AskParam<'a>)> {
        self.params
            .iter()
            .enumerate()
            .filter_map(|(index, p)| match p {
                Param::Ask(a) => Some((index, a)),
                Param::Context(_) | Param::Argument(_) => None,
            })
    }
}

/// An argument that only an ask's message uses is still used: the function
/// body need not mention it, so rustc must not call it unused.
fn allow_unused_if_asked_about(emitted: &mut ItemFn, params: &[Param<'_>]) {
    let named: Vec<String> = params
        .iter()
        .filter_map(|param| match param {
            Param::Ask(ask) => Some(ask.kind.templates()),
            Param::Context(_) | Param::Argument(_) => None,
        })
        .flatten()
        .flat_map(|template| placeholders(&template.value()))
        .collect();
    if named.is_empty() {
        return;
    }
    for input in &mut emitted.sig.inputs {
        if let FnArg::Typed(typed) = input
            && let Pat::Ident(pat) = &*typed.pat
            && named.contains(&pat.ident.unraw().to_string())
        {
            typed
                .attrs
                .push(syn::parse_quote!(#[allow(unused_variables)]));
        }
    }
}

impl<'a> Param<'a> {
    fn from_syn(
        cx: &Ctxt,
        kind: Kind,
        pat: &'a Pat,
        ty: &'a Type,
        attr: ParamAttr,
    ) -> Option<Param<'a>> {
        if let Some(ask) = attr.ask {
            let attribute = quote::ToTokens::to_token_stream(ask.attr.path()).to_string();
            if let Some(ctx) = &attr.ctx {
                cx.error_spanned_by(
                    ctx,
                    format!("a `#[{attribute}]` parameter is answered by the client, not taken from the context; remove `#[ctx]`"),
                );
            }
            if let Some(arg) = &attr.arg {
                cx.error_spanned_by(
                    arg,
                    format!("a `#[{attribute}]` parameter is answered by the client, not an argument; remove `#[arg(...)]`"),
                );
            }
            return match pat {
                Pat::Ident(p) if p.by_ref.is_none() && p.subpat.is_none() => {
                    Some(Param::Ask(AskParam {
                        ident: p.ident.clone(),
                        ty,
                        kind: ask.kind,
                    }))
                }
                other => {
                    cx.error_spanned_by(
                        other,
                        format!("a `#[{attribute}]` parameter needs a plain name: it is the ask's key in `inputRequests`"),
                    );
                    None
                }
            };
        }
        if attr.ctx.is_some() {
            if let Some(arg) = &attr.arg {
                cx.error_spanned_by(
                    arg,
                    "a `#[ctx]` parameter is not an argument; remove `#[arg(...)]`",
                );
            }
            return Some(Param::Context(ContextParam { ty }));
        }
        let ident = match pat {
            Pat::Ident(p) if p.by_ref.is_none() && p.subpat.is_none() => p.ident.clone(),
            other => {
                cx.error_spanned_by(
                    other,
                    format!(
                        "{} need a plain name, which is their name on the wire; destructure inside the function, or mark context parameters with `#[ctx]`",
                        kind.parameters()
                    ),
                );
                return None;
            }
        };
        let (wire_name, wire_name_span) = match &attr.rename {
            Some(lit) => (lit.value(), lit.span()),
            None => (ident.unraw().to_string(), ident.span()),
        };
        Some(Param::Argument(ArgumentParam {
            ident,
            ty,
            wire_name,
            wire_name_span,
            rename: attr.rename,
            description: attr.description,
            header: attr.header,
            docs: attr.docs,
        }))
    }
}

#[cfg(test)]
mod tests {
    use quote::quote;

    use super::*;

    /// Builds the model of `item` (with empty `#[tool]` arguments) and
    /// passes it to `inspect` with the errors found on the way.
    fn model(item: TokenStream, inspect: impl FnOnce(&HandlerFn<'_>, Vec<String>)) {
        let item: ItemFn = syn::parse2(item).unwrap();
        let cx = Ctxt::new();
        let tool = HandlerFn::from_syn(&cx, Kind::Tool, &item, &CommonAttr::default());
        let errors = match cx.check() {
            Ok(()) => Vec::new(),
            Err(errors) => errors.into_iter().map(|e| e.to_string()).collect(),
        };
        inspect(&tool, errors);
    }

    #[test]
    fn parameters_are_arguments_unless_marked_ctx() {
        model(
            quote!(
                async fn r#type(#[ctx] ctx: Context, r#in: String, #[arg(rename = "x")] y: i32) {}
            ),
            |tool, errors| {
                assert!(errors.is_empty(), "{errors:?}");
                assert_eq!(tool.name, "type");
                assert!(tool.is_async);
                assert!(tool.output.is_none());
                assert!(matches!(tool.params[0], Param::Context(_)));
                let wire: Vec<_> = tool.arguments().map(|a| a.wire_name.as_str()).collect();
                assert_eq!(wire, ["in", "x"]);
                // Our attributes are gone from the emitted function.
                let emitted = &tool.emitted.sig.inputs;
                assert!(emitted.iter().all(|input| match input {
                    FnArg::Typed(typed) => typed.attrs.is_empty(),
                    FnArg::Receiver(_) => false,
                }));
            },
        );
    }

    #[test]
    fn arguments_need_a_plain_name() {
        for pattern in [
            quote!((a, b): (i32, i32)),
            quote!(ref a: i32),
            quote!(_: i32),
        ] {
            model(quote!(fn f(#pattern) -> String {}), |tool, errors| {
                assert!(tool.params.is_empty());
                assert_eq!(errors.len(), 1, "{errors:?}");
                assert!(errors[0].starts_with("tool arguments need a plain name"));
            });
        }
        // `mut` only affects the function body.
        model(
            quote!(
                fn f(mut a: i32) -> String {}
            ),
            |tool, errors| {
                assert!(errors.is_empty(), "{errors:?}");
                assert_eq!(tool.arguments().count(), 1);
            },
        );
    }

    #[test]
    fn ctx_with_arg_is_one_error_and_stays_context() {
        model(
            quote!(
                fn f(
                    #[ctx]
                    #[arg(rename = "p")]
                    p: Progress,
                ) -> String {
                }
            ),
            |tool, errors| {
                assert_eq!(errors.len(), 1, "{errors:?}");
                assert!(matches!(tool.params[..], [Param::Context(_)]));
            },
        );
    }

    #[test]
    fn methods_are_rejected() {
        model(
            quote!(
                fn f(&self, a: i32) -> String {}
            ),
            |tool, errors| {
                assert_eq!(errors.len(), 1, "{errors:?}");
                assert!(errors[0].contains("not methods"));
                assert_eq!(tool.arguments().count(), 1);
            },
        );
    }
}

//! Declared asks (`#[elicit]`, `#[elicit_url]`, `#[sample]`, `#[roots]`):
//! one constant per ask that checks its type, the code that considers every
//! ask and then takes each answer before the body runs, and the registry's
//! list of them.
//!
//! ```text
//! const __MCP_ASK1: AskFns<Elicitation<Confirm>> = form_ask::<Elicitation<Confirm>>();
//! // in the handler's future, before the call:
//! let __mcp_input = context_input(&__mcp_context);
//! #[allow(unused_variables)] let () = {
//!     let path = &__mcp_param0;                      // arguments, for the format strings
//!     __MCP_ASK1.consider_form(__mcp_input, "confirm", format!("Delete {path}?"));
//! };
//! let __mcp_param1: Elicitation<Confirm> = __MCP_ASK1.take(__mcp_input, "confirm").await;
//! ```

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::Ident;
use syn::ext::IdentExt as _;
use syn::spanned::Spanned as _;

use super::common::{context_local, mixed, param_local};
use crate::attr::AskAttrKind;
use crate::model::{HandlerFn, Param};

/// Tokens a sampling ask asks for when `max_tokens` is not given.
const DEFAULT_MAX_TOKENS: u32 = 1024;

fn ask_const(index: usize) -> Ident {
    format_ident!("__MCP_ASK{}", index)
}

/// `const __MCP_ASKn: AskFns<T> = form_ask::<T>();` per ask, spanned at the
/// type so that a type the attribute cannot take is one error, there.
pub(super) fn consts(handler: &HandlerFn<'_>, private: &TokenStream) -> TokenStream {
    let consts = handler.asks().map(|(index, ask)| {
        let ty = ask.ty;
        let name = ask_const(index);
        let constructor = match ask.kind {
            AskAttrKind::Form { .. } => quote!(form_ask),
            AskAttrKind::Url { .. } => quote!(url_ask),
            AskAttrKind::Sample { .. } => quote!(sample_ask),
            AskAttrKind::Roots => quote!(roots_ask),
        };
        quote_spanned! {ty.span()=>
            const #name: #private::AskFns<#ty> = #private::#constructor::<#ty>();
        }
    });
    quote!(#(#consts)*)
}

/// `&[__MCP_ASK1.declared("confirm"), ..]` for the registry entry.
pub(super) fn declared(handler: &HandlerFn<'_>) -> TokenStream {
    let asks = handler.asks().map(|(index, ask)| {
        let name = ask_const(index);
        let key = ask.ident.unraw().to_string();
        quote!(#name.declared(#key))
    });
    quote!(&[#(#asks),*])
}

/// Inside the handler's future, before the call: considers every ask, so
/// that all unanswered ones go out in one round, then binds each answer.
pub(super) fn bindings(handler: &HandlerFn<'_>, private: &TokenStream) -> TokenStream {
    if handler.asks().next().is_none() {
        return TokenStream::new();
    }
    let input = mixed("__mcp_input");
    let ctx = context_local();
    // The arguments under their own names, for the format strings.
    let arguments = handler
        .params
        .iter()
        .enumerate()
        .filter_map(|(index, param)| match param {
            Param::Argument(argument) => {
                let ident = &argument.ident;
                let local = param_local(index);
                Some(quote!(let #ident = &#local;))
            }
            Param::Context(_) | Param::Ask(_) => None,
        });
    let considers = handler.asks().map(|(index, ask)| {
        let name = ask_const(index);
        let key = ask.ident.unraw().to_string();
        match &ask.kind {
            AskAttrKind::Form { message } => quote! {
                #name.consider_form(#input, #key, ::std::format!(#message));
            },
            AskAttrKind::Url { message, url } => quote! {
                #name.consider_url(#input, #key, ::std::format!(#message), ::std::format!(#url));
            },
            AskAttrKind::Sample {
                prompt,
                max_tokens,
                system,
            } => {
                let max_tokens = match max_tokens {
                    Some(lit) => quote!(#lit),
                    None => quote!(#DEFAULT_MAX_TOKENS),
                };
                let system = system
                    .as_ref()
                    .map(|system| quote!(.system(::std::format!(#system))));
                quote! {
                    #name.consider_sample(
                        #input,
                        #key,
                        #private::SamplingRequest::new(#max_tokens).user(::std::format!(#prompt)) #system,
                    );
                }
            }
            AskAttrKind::Roots => quote! {
                #name.consider_roots(#input, #key);
            },
        }
    });
    let takes = handler.asks().map(|(index, ask)| {
        let name = ask_const(index);
        let key = ask.ident.unraw().to_string();
        let local = param_local(index);
        let ty = ask.ty;
        quote!(let #local: #ty = #name.take(#input, #key).await;)
    });
    quote! {
        let #input: &#private::Input = #private::context_input(&#ctx);
        #[allow(unused_variables, clippy::useless_format)]
        let () = {
            #(#arguments)*
            #(#considers)*
        };
        #(#takes)*
    }
}

//! A tool's return type, checked once: `IntoToolResult` is named in one
//! constant (the output schema), and for `Json<T>` or `Structured<T>`
//! (possibly in a `Result`) `T` is checked first (the `Point` of
//! `Vec<Point>`, as for arguments), so that a `T` without
//! `Serialize` or `JsonSchema` is reported with the output traits' own
//! messages ("derive ...").
//!
//! ```text
//! const __MCP_OUTPUT_SCHEMA: fn() -> Option<Schema> = {
//!     assert_output::<<Sum as Same>::Type>();          // tokens spanning `Json<Sum>`
//!     <Json<Sum> as IntoToolResult>::output_schema
//! };
//! ```
//!
//! rustc reports a failed bound in the words of the bound's trait only
//! when the type lacking it is the type the bound is on (`Sum`, not
//! `Json<Sum>`), and reports one error for failures with the same cause at
//! the same place in one item. The check on `Sum` is written so that rustc
//! places it exactly where the `IntoToolResult` bound is (the return type's
//! first to last token), and comes first; the second one, whose cause is
//! the same missing trait of `Sum`, is then not reported again.

use proc_macro2::{Punct, Spacing, Span, TokenStream, TokenTree};
use quote::{ToTokens as _, quote, quote_spanned};
use syn::{GenericArgument, Ident, PathArguments, Type};

/// The constant holding the tool's output schema function.
pub(super) fn schema_const(
    ret_ty: &TokenStream,
    ret_span: Span,
    declared: Option<&Type>,
    private: &TokenStream,
) -> TokenStream {
    // `Json<Vec<Sum>>` is checked on `Sum`, as arguments are (`super::peel`).
    let checks = declared
        .and_then(|ty| structured_value(ty).map(|value| (ty, value)))
        .map(|(whole, value)| {
            let peeled = super::peel::peel(value, &mut 0);
            let checks = peeled.inner.iter().map(|(_, value)| {
                let value = spanning(whole, value, private);
                quote!(#private::assert_output::<#value>();)
            });
            quote!(#(#checks)*)
        });
    let schema = quote_spanned!(ret_span=> <#ret_ty as #private::IntoToolResult>::output_schema);
    quote! {
        const __MCP_OUTPUT_SCHEMA: fn() -> ::core::option::Option<#private::schemars::Schema> = {
            #checks
            #schema
        };
    }
}

/// The `T` of `Json<T>`, `Structured<T>`, or either in `Result<_, E>`.
fn structured_value(ty: &Type) -> Option<&Type> {
    let (name, arguments) = last_segment(ty)?;
    match (name.to_string().as_str(), arguments.as_slice()) {
        ("Json" | "Structured", [value]) => Some(value),
        ("Result", [ok, _]) => {
            let (name, arguments) = last_segment(ok)?;
            match (name.to_string().as_str(), arguments.as_slice()) {
                ("Json" | "Structured", [value]) => Some(value),
                _ => None,
            }
        }
        _ => None,
    }
}

fn last_segment(ty: &Type) -> Option<(&Ident, Vec<&Type>)> {
    let Type::Path(path) = ty else { return None };
    if path.qself.is_some() {
        return None;
    }
    let last = path.path.segments.last()?;
    let arguments = match &last.arguments {
        PathArguments::AngleBracketed(arguments) => arguments
            .args
            .iter()
            .filter_map(|a| match a {
                GenericArgument::Type(t) => Some(t),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    };
    Some((&last.ident, arguments))
}

/// `<value as Same>::Type`, with its first token placed at `whole`'s first
/// token and its last at `whole`'s last, so that rustc's span for it is
/// `whole`'s.
fn spanning(whole: &Type, value: &Type, private: &TokenStream) -> TokenStream {
    let tokens: Vec<TokenTree> = whole.to_token_stream().into_iter().collect();
    let first = tokens.first().map_or_else(Span::call_site, TokenTree::span);
    let last = tokens.last().map_or_else(Span::call_site, TokenTree::span);
    let mut open = Punct::new('<', Spacing::Alone);
    open.set_span(first);
    let ident = Ident::new("Type", last);
    quote!(#open #value as #private::Same>::#ident)
}

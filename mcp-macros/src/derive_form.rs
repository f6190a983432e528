//! `#[derive(ElicitForm)]`: marks a struct as an elicitation form, or a
//! unit-variant enum as a form choice, checking at compile time that the
//! form is flat.
//!
//! ```text
//! #[derive(Deserialize, JsonSchema, ElicitForm)]
//! struct Confirm { confirm: bool, reason: Option<String> }
//! // expands to
//! impl ElicitForm for Confirm {}
//! const _: () = { assert_form_field::<bool>; assert_form_field::<Option<String>>; };
//! ```
//!
//! The schema itself still comes from `JsonSchema`; the registry checks it
//! against the spec's restricted form schema at startup (formats, serde
//! attributes). Here the field types are checked, one error per field
//! that is not a string, number, integer, boolean or choice.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned as _;
use syn::{Data, DeriveInput, Fields};

use crate::attr::parse_form_crate;
use crate::ctxt::Ctxt;
use crate::paths::Paths;

pub(crate) fn expand(input: TokenStream) -> TokenStream {
    let input: DeriveInput = match syn::parse2(input) {
        Ok(input) => input,
        Err(error) => return error.to_compile_error(),
    };
    let cx = Ctxt::new();
    let krate = parse_form_crate(&cx, &input.attrs);
    let private = Paths::new(krate.as_ref()).private();
    if !input.generics.params.is_empty() {
        cx.error_spanned_by(
            &input.generics,
            "`ElicitForm` types cannot be generic: a form's fields must be known to check that it is flat",
        );
    }
    let ident = &input.ident;
    let expanded = match &input.data {
        Data::Struct(data) => match &data.fields {
            Fields::Named(fields) => {
                let checks = fields.named.iter().map(|field| {
                    let ty = &field.ty;
                    quote_spanned!(ty.span()=> #private::assert_form_field::<#ty>;)
                });
                quote! {
                    impl #private::ElicitForm for #ident {}
                    const _: () = { #(let _ = #checks)* };
                }
            }
            other => {
                cx.error_spanned_by(
                    other,
                    "an elicitation form is a struct with named fields: each field is one input of the form",
                );
                TokenStream::new()
            }
        },
        Data::Enum(data) => {
            for variant in &data.variants {
                if !matches!(variant.fields, Fields::Unit) {
                    cx.error_spanned_by(
                        &variant.fields,
                        "a form choice is an enum of unit variants (each is one option the user picks); remove the variant's fields",
                    );
                }
            }
            quote! {
                impl #private::FormField for #ident {}
                impl #private::FormChoice for #ident {}
            }
        }
        Data::Union(data) => {
            cx.error_spanned_by(
                data.union_token,
                "`ElicitForm` goes on a struct (a form) or a unit-variant enum (a choice), not a union",
            );
            TokenStream::new()
        }
    };
    match cx.check() {
        Ok(()) => quote!(#[doc(hidden)] const _: () = { #expanded };),
        Err(errors) => errors.to_compile_error(),
    }
}

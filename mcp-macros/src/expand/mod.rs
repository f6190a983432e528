//! Code generation. Each expansion emits the user's function unchanged
//! (minus our parameter attributes) and puts all glue beside it in a
//! `const _: () = { ... };` block, so nothing is added to the user's module
//! except one hidden `__mcp_*` constant per name, which makes a name used
//! twice in one module a compile error.

mod app;
mod ask;
mod common;
mod output;
mod peel;
pub(crate) mod prompt;
pub(crate) mod resource;
pub(crate) mod tool;

use proc_macro2::{Span, TokenStream};
use quote::quote;
use syn::Ident;
use syn::ext::IdentExt as _;
use syn::parse::{ParseStream, Parser as _};

use crate::kind::Kind;

/// Parses the item under one of our attributes, or explains what it is
/// instead of a function.
fn parse_function(kind: Kind, item: &TokenStream) -> Result<syn::ItemFn, TokenStream> {
    syn::parse2(item.clone()).map_err(|_| {
        let error = NotAFunction::from_tokens(item.clone())
            .error(kind)
            .to_compile_error();
        quote!(#error #item)
    })
}

/// What to emit when checks failed: the function (so that callers of it
/// still compile and the user sees only our errors) and the errors.
fn fallback(item: &syn::ItemFn, errors: &syn::Error) -> TokenStream {
    let errors = errors.to_compile_error();
    quote!(#item #errors)
}

/// What an attribute was put on instead of a function: the first token
/// after the attributes and visibility, which names the kind of item.
#[derive(Debug)]
struct NotAFunction {
    span: Span,
    keyword: Option<String>,
}

impl NotAFunction {
    fn from_tokens(item: TokenStream) -> NotAFunction {
        let parser = |input: ParseStream<'_>| {
            input.call(syn::Attribute::parse_outer)?;
            input.parse::<syn::Visibility>()?;
            let span = input.span();
            let keyword = input.fork().call(Ident::parse_any).ok();
            input.parse::<TokenStream>()?;
            Ok(NotAFunction {
                span,
                keyword: keyword.map(|k| k.to_string()),
            })
        };
        parser.parse2(item).unwrap_or(NotAFunction {
            span: Span::call_site(),
            keyword: None,
        })
    }

    fn error(&self, kind: Kind) -> syn::Error {
        let attribute = kind.attribute();
        let message = match self.keyword.as_deref() {
            // A function without a body, as in a trait or `extern` block.
            Some("fn" | "async" | "unsafe" | "const" | "extern") => format!(
                "`{attribute}` goes on a function with a body, defined outside traits and `extern` blocks"
            ),
            Some(keyword) => format!(
                "`{attribute}` cannot go on `{keyword}` items; annotate the `fn` that implements it"
            ),
            None => {
                format!("`{attribute}` goes on a function; annotate the `fn` that implements it")
            }
        };
        syn::Error::new(self.span, message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keyword(tokens: TokenStream) -> Option<String> {
        NotAFunction::from_tokens(tokens).keyword
    }

    #[test]
    fn the_item_kind_is_read_past_attributes_and_visibility() {
        assert_eq!(
            keyword(quote!(
                #[derive(Debug)]
                pub(crate) struct S;
            ))
            .as_deref(),
            Some("struct")
        );
        assert_eq!(
            keyword(quote!(
                #[doc = "Docs."]
                impl S {}
            ))
            .as_deref(),
            Some("impl")
        );
        assert_eq!(
            keyword(quote!(
                fn f(&self);
            ))
            .as_deref(),
            Some("fn")
        );
        assert_eq!(keyword(quote!()), None);
    }
}

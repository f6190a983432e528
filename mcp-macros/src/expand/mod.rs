//! Code generation. Each expansion emits the user's function unchanged
//! (minus our parameter attributes) and puts all glue beside it in a
//! `const _: () = { ... };` block, so nothing is added to the user's module.

pub(crate) mod tool;

use proc_macro2::TokenStream;
use quote::quote;

/// What to emit when checks failed: the function (so that callers of it
/// still compile and the user sees only our errors) and the errors.
pub(crate) fn fallback(item: &syn::ItemFn, errors: &syn::Error) -> TokenStream {
    let errors = errors.to_compile_error();
    quote!(#item #errors)
}

//! Every path generated code uses to reach the runtime, built from one root
//! so that `crate = path::to::mcp_runtime` re-routes all of them.

use proc_macro2::TokenStream;
use quote::{ToTokens, quote};
use syn::Path;

pub(crate) struct Paths {
    krate: TokenStream,
}

impl Paths {
    pub(crate) fn new(krate: Option<&Path>) -> Paths {
        let krate = match krate {
            Some(path) => path.to_token_stream(),
            None => quote!(::mcp_runtime),
        };
        Paths { krate }
    }

    /// `::mcp_runtime::__private`
    pub(crate) fn private(&self) -> TokenStream {
        let krate = &self.krate;
        quote!(#krate::__private)
    }

    /// The string form serde and schemars expect in `crate = "..."`.
    pub(crate) fn private_crate_str(&self, name: &str) -> String {
        format!("{}::__private::{name}", self.krate).replace(' ', "")
    }
}

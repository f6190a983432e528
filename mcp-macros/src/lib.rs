//! Procedural macros for [`mcp-runtime`](https://docs.rs/mcp-runtime).
//!
//! Depend on `mcp-runtime` and use the macros through it
//! (`mcp_runtime::tool`); the generated code reaches the runtime through
//! `::mcp_runtime::__private`, which is not a public API.

#![warn(missing_docs)]

mod attr;
mod check;
mod ctxt;
mod derive_form;
mod doc;
mod expand;
mod kind;
mod link;
mod model;
mod paths;
mod skills;
mod symbol;
mod uri;

use proc_macro::TokenStream;

/// Turns a function into an MCP tool; documented at `mcp_runtime::tool`.
#[proc_macro_attribute]
pub fn tool(args: TokenStream, item: TokenStream) -> TokenStream {
    expand::tool::expand(args.into(), item.into()).into()
}

/// Turns a function into an MCP resource or resource template; documented
/// at `mcp_runtime::resource`.
#[proc_macro_attribute]
pub fn resource(args: TokenStream, item: TokenStream) -> TokenStream {
    expand::resource::expand(args.into(), item.into()).into()
}

/// Turns a function into an MCP prompt; documented at `mcp_runtime::prompt`.
#[proc_macro_attribute]
pub fn prompt(args: TokenStream, item: TokenStream) -> TokenStream {
    expand::prompt::expand(args.into(), item.into()).into()
}

/// Marks a struct as an elicitation form (or a unit-variant enum as a form
/// choice); documented at `mcp_runtime::ElicitForm`.
#[proc_macro_derive(ElicitForm, attributes(elicit_form))]
pub fn derive_elicit_form(input: TokenStream) -> TokenStream {
    derive_form::expand(input.into()).into()
}

/// Embeds a directory of Agent Skills, checked at compile time;
/// documented at `mcp_runtime::skills!`.
#[proc_macro]
pub fn skills(input: TokenStream) -> TokenStream {
    skills::expand(input.into()).into()
}

/// Links the calling package's library into the crate being compiled, if
/// cargo links it there and it is not that library; used by
/// `mcp_runtime::server!()`.
#[doc(hidden)]
#[proc_macro]
pub fn link_package_library(input: TokenStream) -> TokenStream {
    let _ = input;
    link::expand().into()
}

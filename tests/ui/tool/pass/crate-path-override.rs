//! `crate = ...` routes generated code through a re-export, for crates that
//! wrap mcp-runtime.

use mcp_runtime as my_reexport;

mod wrapper {
    pub mod inner {
        pub use mcp_runtime as runtime;
    }
}

/// The default path, written out.
#[mcp_runtime::tool(crate = ::mcp_runtime)]
fn absolute(text: String) -> String {
    text
}

/// A re-export at the crate root.
#[my_reexport::tool(crate = my_reexport)]
fn renamed(text: String, count: Option<u32>) -> String {
    text.repeat(count.unwrap_or(1) as usize)
}

/// A re-export in a nested module, by an absolute path.
#[wrapper::inner::runtime::tool(crate = crate::wrapper::inner::runtime)]
async fn nested(#[ctx] ctx: &wrapper::inner::runtime::Context, text: String) -> String {
    format!("{} {text}", ctx.method())
}

fn main() {}

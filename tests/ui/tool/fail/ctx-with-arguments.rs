use mcp_runtime::{Context, tool};

/// Says hello.
#[tool]
fn hello(#[ctx(foo)] ctx: &Context) -> String {
    ctx.method().to_owned()
}

fn main() {}

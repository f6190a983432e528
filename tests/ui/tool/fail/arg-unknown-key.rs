use mcp_runtime::tool;

/// Says hello.
#[tool]
fn hello(#[arg(renam = "who")] name: String) -> String {
    format!("hello {name}")
}

fn main() {}

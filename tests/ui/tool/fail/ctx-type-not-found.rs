use mcp_runtime::tool;

/// Says hello.
#[tool]
fn hello(#[ctx] progress: Progres) -> String {
    let _ = progress;
    "hello".to_owned()
}

fn main() {}

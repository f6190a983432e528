use mcp_runtime::tool;

#[derive(Debug)]
struct Failure;

/// Says hello.
#[tool]
fn hello() -> Result<String, Failure> {
    Err(Failure)
}

fn main() {}

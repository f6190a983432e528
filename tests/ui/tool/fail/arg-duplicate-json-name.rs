use mcp_runtime::tool;

/// Says hello.
#[tool]
fn hello(name: String, #[arg(rename = "name")] nickname: String) -> String {
    format!("hello {name} ({nickname})")
}

fn main() {}

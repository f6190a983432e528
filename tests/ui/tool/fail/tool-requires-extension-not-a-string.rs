use mcp_runtime::tool;

const PING: &str = "com.example/ping";

/// An extension identifier is a string literal (it is published in the
/// registry at build time), not a constant.
#[tool(requires_extension = PING)]
fn ping() -> String {
    "pong".to_owned()
}

/// One literal per key: repeat the key for each extension.
#[tool(requires_extension = ["com.example/a", "com.example/b"])]
fn both() -> String {
    "x".to_owned()
}

fn main() {}

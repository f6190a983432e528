use mcp_runtime::tool;

/// A view is a `ui://` resource, not a web page.
#[tool(ui = "https://example.com/view.html")]
fn web() -> String {
    "x".to_owned()
}

/// `ui://` alone names nothing.
#[tool(ui = "ui://")]
fn empty() -> String {
    "x".to_owned()
}

/// Not a string literal.
#[tool(ui = VIEW)]
fn constant() -> String {
    "x".to_owned()
}

const VIEW: &str = "ui://x/view.html";

fn main() {}

use mcp_runtime::tool;

/// Empty strings, spaces, quotes, backslashes and non-ASCII are not OAuth
/// scope-tokens (RFC 6749 §3.3); a scope listed twice is a typo.
#[tool(scopes = ["", "notes write", "notes\"x", "notes\\x", "notés", "ok", "ok"])]
fn write() -> String {
    "x".to_owned()
}

fn main() {}

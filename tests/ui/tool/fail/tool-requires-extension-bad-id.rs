use mcp_runtime::tool;

/// Extension identifiers are `{vendor-prefix}/{name}`: the prefix is
/// mandatory, its labels start with a letter and end with a letter or
/// digit, and the name starts and ends with a letter or digit.
#[tool(
    requires_extension = "my-extension",
    requires_extension = "/my-extension",
    requires_extension = "com..example/x",
    requires_extension = "com.1example/x",
    requires_extension = "com.example-/x",
    requires_extension = "com.example/",
    requires_extension = "com.example/-x",
    requires_extension = "com.example/a b",
    requires_extension = "com.example/ok"
)]
fn render() -> String {
    "x".to_owned()
}

fn main() {}

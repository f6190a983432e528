use mcp_runtime::resource;

/// A resource's scopes follow the same syntax.
#[resource("memo://secret", scopes = ["secret read"], scopes = ["again"])]
fn secret() -> String {
    "x".to_owned()
}

fn main() {}

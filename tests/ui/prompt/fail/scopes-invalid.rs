use mcp_runtime::prompt;

/// A prompt's scopes follow the same syntax.
#[prompt(scopes = ["\u{7f}"])]
fn review() -> String {
    "x".to_owned()
}

fn main() {}

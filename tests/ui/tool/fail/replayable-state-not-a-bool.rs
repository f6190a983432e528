use mcp_runtime::tool;

/// Deletes a file.
#[tool(annotations(destructive), replayable_state = "yes")]
fn delete_file(path: String) -> String {
    path
}

fn main() {}

use mcp_runtime::tool;

/// Reads a file.
#[tool(annotations(read_only), replayable_state)]
fn read_file(path: String) -> String {
    path
}

fn main() {}

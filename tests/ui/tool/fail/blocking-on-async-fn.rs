use mcp_runtime::tool;

/// Awaits, so it has no business on the blocking pool.
#[tool(blocking)]
async fn fetch() -> String {
    "fetched".to_owned()
}

fn main() {}

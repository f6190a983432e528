use mcp_runtime::prompt;

/// Awaits, so it has no business on the blocking pool.
#[prompt(blocking)]
async fn fetch() -> String {
    "fetched".to_owned()
}

fn main() {}

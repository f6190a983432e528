use mcp_runtime::resource;

/// Awaits, so it has no business on the blocking pool.
#[resource("memo://fetched", blocking)]
async fn fetched() -> String {
    "fetched".to_owned()
}

fn main() {}

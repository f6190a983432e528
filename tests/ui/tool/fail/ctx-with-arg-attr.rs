use mcp_runtime::{Progress, tool};

/// Says hello.
#[tool]
fn hello(
    #[ctx]
    #[arg(rename = "p")]
    progress: Progress,
) -> String {
    progress.report(1.0);
    "hello".to_owned()
}

fn main() {}

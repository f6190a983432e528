use mcp_runtime::tool;

/// Runs a query where the gateway routes on mirrored headers.
#[tool]
fn execute_sql(
    /// Where to run it.
    #[arg(header = "Region")]
    region: String,
    query: String,
    #[arg(header = "Shard")] shard: Option<u32>,
    #[arg(header = "Dry-Run", rename = "dryRun")] dry_run: Option<bool>,
) -> String {
    format!("{region} {query} {shard:?} {dry_run:?}")
}

fn main() {
    let _ = execute_sql("eu".into(), "SELECT 1".into(), None, Some(true));
}

//! A server with 10,000 tools plus `echo`: lookup must stay O(1), startup
//! fast and list pages bounded. The tools live in four generated crates
//! (`benches/scale/`); naming them links them.

use mcp_bench_shard_0 as _;
use mcp_bench_shard_1 as _;
use mcp_bench_shard_2 as _;
use mcp_bench_shard_3 as _;

/// Echoes the text back.
#[mcp_runtime::tool(annotations(read_only))]
fn echo(text: String) -> String {
    text
}

fn main() -> std::process::ExitCode {
    mcp_runtime::server!().run()
}

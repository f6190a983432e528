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

/// Serves like any server; `--time-build` instead builds the registry and
/// the precomputed answers once and prints how long that took, in
/// microseconds (the benchmark's startup metric).
fn main() -> std::process::ExitCode {
    if std::env::args().nth(1).as_deref() == Some("--time-build") {
        let started = std::time::Instant::now();
        let built = mcp_runtime::server!().build();
        let elapsed = started.elapsed().as_micros();
        return match built {
            Ok(_) => {
                println!("{elapsed}");
                std::process::ExitCode::SUCCESS
            }
            Err(error) => {
                eprintln!("error: {error}");
                std::process::ExitCode::FAILURE
            }
        };
    }
    mcp_runtime::server!().run()
}

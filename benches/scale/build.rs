//! Generates this shard's quarter of the 10,000 benchmark tools; the shard
//! number is the last character of the package name.

use std::fmt::Write as _;

const SHARDS: usize = 4;

fn main() {
    // Cargo reruns a build script whose own source changed; naming it in
    // rerun-if-changed would not work here, since paths are read from the
    // package root (shard-N/), where no build.rs is, and a missing file
    // makes the script and the shard (a quarter of the 10,000 tools) run
    // and compile again on every build.
    println!("cargo:rerun-if-env-changed=BENCH_SCALE_TOOLS");
    let name = std::env::var("CARGO_PKG_NAME").expect("cargo sets CARGO_PKG_NAME");
    let shard: usize = name[name.len() - 1..].parse().expect("a shard number");
    let total: usize = std::env::var("BENCH_SCALE_TOOLS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10_000);
    let per_shard = total / SHARDS;
    let mut out = String::new();
    for n in shard * per_shard..(shard + 1) * per_shard {
        let _ = write!(
            out,
            "/// Benchmark tool {n}: echoes the text.\n\
             #[mcp_runtime::tool(annotations(read_only))]\n\
             fn tool_{n:05}(text: String) -> String {{\n    text\n}}\n\n"
        );
    }
    let dir = std::env::var("OUT_DIR").expect("cargo sets OUT_DIR");
    std::fs::write(std::path::Path::new(&dir).join("tools.rs"), out).expect("writes tools.rs");
}

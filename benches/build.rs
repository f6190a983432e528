//! Generates the tool modules of the benchmark servers: 50 tools for the
//! list workload, and 10,000 (with the `scale` feature) for the scale run.

use std::fmt::Write as _;

fn tools(count: usize) -> String {
    let mut out = String::new();
    for n in 0..count {
        let _ = write!(
            out,
            "/// Benchmark tool {n}: echoes `text`, `count` times.\n\
             #[mcp_runtime::tool(annotations(read_only))]\n\
             fn tool_{n:05}(\n    /// The text.\n    text: String,\n    /// How often (default once).\n    count: Option<u8>,\n) -> String {{\n    text.repeat(usize::from(count.unwrap_or(1)))\n}}\n\n"
        );
    }
    out
}

fn main() {
    let out = std::env::var("OUT_DIR").expect("OUT_DIR is set by cargo");
    let out = std::path::Path::new(&out);
    std::fs::write(out.join("tools50.rs"), tools(50)).expect("writes tools50.rs");
    if std::env::var_os("CARGO_FEATURE_SCALE").is_some() {
        std::fs::write(out.join("tools10k.rs"), tools(10_000)).expect("writes tools10k.rs");
    }
    println!("cargo:rerun-if-changed=build.rs");
}

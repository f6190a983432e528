//! Generates the 50 tools of the `tools/list` benchmark server (the
//! 10,000-tool server's are generated in `scale/`).

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
    // Shared with benches/scale/server, whose package root has no build.rs:
    // naming the script would make that server rebuild on every build (a
    // missing file is always stale). Cargo reruns a script whose own source
    // changed; this only stops other files from rerunning it.
    println!("cargo:rerun-if-changed=Cargo.toml");
}

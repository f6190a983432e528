//! A server with 50 tools plus `echo`, for the `tools/list` workload.

include!(concat!(env!("OUT_DIR"), "/tools50.rs"));

/// Echoes the text back.
#[mcp_runtime::tool(annotations(read_only))]
fn echo(text: String) -> String {
    text
}

fn main() -> std::process::ExitCode {
    mcp_runtime::server!().run()
}

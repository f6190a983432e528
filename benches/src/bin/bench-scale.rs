//! A server with 10,000 tools plus `echo`: lookup must stay O(1), startup
//! fast and list pages bounded.

include!(concat!(env!("OUT_DIR"), "/tools10k.rs"));

/// Echoes the text back.
#[mcp_runtime::tool(annotations(read_only))]
fn echo(text: String) -> String {
    text
}

fn main() -> std::process::ExitCode {
    mcp_runtime::server!().run()
}

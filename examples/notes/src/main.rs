//! The notes server: `cargo run -p notes`, then send JSON-RPC lines on
//! stdin.

// The handlers are in the library; naming it links them in.
use notes as _;

fn main() -> std::process::ExitCode {
    mcp_runtime::server!()
        .title("Notes")
        .instructions(notes::INSTRUCTIONS)
        .run()
}

//! The notes server: `cargo run -p notes`, then send JSON-RPC lines on
//! stdin.

// The handlers are in this package's library, which `server!()` links;
// they take the notebook it is given as its state.

fn main() -> std::process::ExitCode {
    mcp_runtime::server!()
        .title("Notes")
        .instructions(notes::INSTRUCTIONS)
        .state(notes::Store::seeded())
        .run()
}

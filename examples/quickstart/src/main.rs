//! The quickstart server: `cargo run -p quickstart`, then send JSON-RPC
//! lines on stdin (or `-- --http 127.0.0.1:8080`).

// The handlers are in this package's library, which `server!()` links.

fn main() -> std::process::ExitCode {
    mcp_runtime::server!()
        .instructions(quickstart::INSTRUCTIONS)
        .run()
}

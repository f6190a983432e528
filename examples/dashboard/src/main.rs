//! The dashboard server: `cargo run -p dashboard -- --http 127.0.0.1:8080`
//! (add `--allow-origin https://your-host.example` for a web host on
//! another origin).

// The handlers are in the library; naming it links them in.
use dashboard as _;

fn main() -> std::process::ExitCode {
    mcp_runtime::server!()
        .instructions(
            "sales_report shows a week's sales by region; hosts with MCP Apps render it as a dashboard.",
        )
        .run()
}

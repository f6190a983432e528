//! `cargo run -p middleware -- --http 127.0.0.1:8080`, or stdio without
//! arguments.

fn main() -> std::process::ExitCode {
    middleware::configure(mcp_runtime::ServerBuilder::new("middleware", "0.1.0")).run()
}

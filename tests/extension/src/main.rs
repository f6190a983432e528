//! A server offering the `com.example/ping` extension: serves MCP over
//! stdio (the default) or Streamable HTTP (`--http ADDR`).

use std::process::ExitCode;

fn main() -> ExitCode {
    mcp_extension_example::server().run()
}

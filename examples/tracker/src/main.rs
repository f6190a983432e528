//! The issue tracker:
//!
//! ```text
//! DATABASE_URL=postgres://127.0.0.1:5432/test cargo run -p tracker -- --http 127.0.0.1:8080
//! ```
//!
//! Over HTTP with `TRACKER_ISSUER` set (an OAuth authorization server's
//! issuer URL, and `TRACKER_RESOURCE`, this server's public URI), callers
//! need a token, and `issues:write` to change anything. Without `--http` it
//! serves stdio. The inspector aimed at another server
//! (`tracker list --url ...`) needs no database: the start-up hook only
//! runs for this server.

use std::process::ExitCode;

use mcp_runtime::HttpOptions;
use mcp_runtime::auth::{Authorization, JwtSettings};

// The handlers are in this package's library, which `server!()` links.

fn main() -> ExitCode {
    let mut server = tracker::configure(mcp_runtime::server!());
    if let Ok(issuer) = std::env::var("TRACKER_ISSUER") {
        let resource = std::env::var("TRACKER_RESOURCE")
            .unwrap_or_else(|_| "http://127.0.0.1:8080/mcp".to_owned());
        let authorization = Authorization::new(resource)
            .authorization_server(issuer)
            .jwt_with(JwtSettings::new())
            .scopes_supported(["issues:write"])
            .hide_unpermitted();
        server = server.http(HttpOptions::new().authorization(authorization));
    }
    server.run()
}

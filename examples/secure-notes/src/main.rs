//! The secure notes server over Streamable HTTP, behind OAuth 2.1:
//!
//! ```text
//! SECURE_NOTES_RESOURCE=https://notes.example.com/mcp \
//! SECURE_NOTES_ISSUER=https://auth.example.com \
//!     cargo run -p secure-notes -- --http 127.0.0.1:8080
//! ```
//!
//! The resource is this server's public URI (what tokens carry as their
//! audience); the issuer is the authorization server trusted to issue
//! them. Without `--http` it serves stdio, where none of this applies.

use std::process::ExitCode;

use mcp_runtime::HttpOptions;
use mcp_runtime::auth::JwtSettings;

// The handlers are in this package's library, which `server!()` links;
// they take the notes it is given as its state, empty at start.

fn main() -> ExitCode {
    let resource = std::env::var("SECURE_NOTES_RESOURCE")
        .unwrap_or_else(|_| "http://127.0.0.1:8080/mcp".to_owned());
    let Ok(issuer) = std::env::var("SECURE_NOTES_ISSUER") else {
        eprintln!("error: set SECURE_NOTES_ISSUER to the authorization server's issuer URL");
        return ExitCode::FAILURE;
    };
    let authorization =
        secure_notes::authorization(&resource, &issuer, JwtSettings::new()).hide_unpermitted();
    mcp_runtime::server!()
        .title("Secure notes")
        .state(secure_notes::Notes::default())
        .http(HttpOptions::new().authorization(authorization))
        .run()
}

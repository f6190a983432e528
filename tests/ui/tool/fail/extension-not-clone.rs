use mcp_runtime::middleware::Extension;
use mcp_runtime::tool;

/// A request extension is cloned for the handler that takes it: a type
/// that is not `Clone` goes in an `Arc`.
struct Tenant(String);

#[tool]
fn whoami(#[ctx] tenant: Extension<Tenant>) -> String {
    tenant.0.0
}

fn main() {}

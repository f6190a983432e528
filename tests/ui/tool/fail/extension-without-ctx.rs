use mcp_runtime::middleware::Extension;
use mcp_runtime::tool;

/// A request extension comes from a request layer, not from the client's
/// arguments: it needs `#[ctx]`.
#[derive(Clone)]
struct Tenant(String);

#[tool]
fn whoami(tenant: Extension<Tenant>) -> String {
    tenant.0.0
}

fn main() {}

use mcp_runtime::middleware::Extension;
use mcp_runtime::tool;

#[derive(Clone)]
struct Tenant(String);

#[derive(Clone)]
struct Plan(&'static str);

/// Request extensions, several, next to arguments, in an async tool.
#[tool]
async fn whoami(
    greeting: String,
    #[ctx] tenant: Extension<Tenant>,
    #[ctx] plan: Extension<Plan>,
) -> String {
    format!("{greeting}, {} on {}", tenant.0.0, plan.0.0)
}

fn main() {}

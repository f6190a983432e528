//! A complete app: a view embedded from a file next to the source, a tool
//! linked to it that reads the host's support, and a tool only the view
//! calls. The server builds (every link checks out) and advertises Apps.

use mcp_runtime::apps::{UiCapability, ui_capability};
use mcp_runtime::{ClientCapabilities, Structured, resource, tool};

/// The sales view.
#[resource(
    "ui://sales/view.html",
    title = "Sales",
    app(
        csp(connect_domains = ["https://api.example.com"], resource_domains = ["https://*.example.com"]),
        permissions(clipboard_write, camera = false),
        prefers_border = true,
        domain = "sales.example.com"
    )
)]
fn sales_view() -> &'static str {
    include_str!("apps-view.html")
}

#[derive(serde::Serialize, schemars::JsonSchema)]
struct Sales {
    total: u64,
}

/// Sales, in the view or as text.
#[tool(ui = "ui://sales/view.html", visibility = ["model", "app"])]
async fn sales(#[ctx] ui: UiCapability<'_>) -> Structured<Sales> {
    let text = if ui.supports_apps() { "in the view" } else { "42" };
    Structured::new(Sales { total: 42 }).with_text(text)
}

/// Only the view calls it.
#[tool(visibility = ["app"])]
fn refresh(#[ctx] capabilities: &ClientCapabilities) -> String {
    ui_capability(capabilities).mime_types().collect::<Vec<_>>().join(",")
}

fn main() {
    assert!(sales_view().contains("<title>Sales</title>"));
    let server = mcp_runtime::server!().build().expect("every view link checks out");
    let _ = server;
}

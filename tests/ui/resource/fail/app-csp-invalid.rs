use mcp_runtime::resource;

/// Domains are origins: a scheme and a host, nothing a host could paste
/// into a policy as another directive.
#[resource(
    "ui://sales/view.html",
    app(csp(
        connect_domains = ["api.example.com", "https://api.example.com; script-src *"],
        resource_domains = ["https://cdn.example.com/js/app.js", "ftp://files.example.com"]
    ))
)]
fn view() -> String {
    "<p>x</p>".to_owned()
}

/// An unknown list, and a list given twice.
#[resource(
    "ui://other/view.html",
    app(csp(script_domains = ["https://x.example.com"], frame_domains = [], frame_domains = []))
)]
fn other() -> String {
    "<p>x</p>".to_owned()
}

fn main() {}

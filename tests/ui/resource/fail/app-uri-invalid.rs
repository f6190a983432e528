use mcp_runtime::resource;

/// An app view is served under `ui://`.
#[resource("https://example.com/view.html", app)]
fn web() -> String {
    "<p>x</p>".to_owned()
}

/// Tools link to one fixed URI.
#[resource("ui://views/{name}", app)]
fn templated(name: String) -> String {
    name
}

fn main() {}

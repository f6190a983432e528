use mcp_runtime::tool;

/// `_meta.ui` is written by `ui = ...`; writing it in `meta` too would
/// contradict it.
#[tool(ui = "ui://sales/view.html", meta = r#"{"ui": {"resourceUri": "ui://other/view.html"}}"#)]
fn sales() -> String {
    "x".to_owned()
}

/// The same for the older key.
#[tool(visibility = ["app"], meta = r#"{"ui/resourceUri": "ui://other/view.html"}"#)]
fn refresh() -> String {
    "x".to_owned()
}

fn main() {}

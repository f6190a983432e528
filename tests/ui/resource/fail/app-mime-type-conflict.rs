use mcp_runtime::resource;

/// `app` serves the view as `text/html;profile=mcp-app`.
#[resource("ui://sales/view.html", mime_type = "text/html", app)]
fn view() -> String {
    "<p>x</p>".to_owned()
}

/// `_meta.ui` is written by `app(...)`.
#[resource("ui://other/view.html", app(prefers_border), meta = r#"{"ui": {}}"#)]
fn other() -> String {
    "<p>x</p>".to_owned()
}

fn main() {}

use mcp_runtime::resource;

/// An unknown option, an unknown permission, a domain that is a URL, and a
/// border given twice.
#[resource(
    "ui://sales/view.html",
    app(
        border = true,
        permissions(camera, usb),
        domain = "https://sales.example.com",
        prefers_border,
        prefers_border = false
    )
)]
fn view() -> String {
    "<p>x</p>".to_owned()
}

/// `prefers_border` is a flag.
#[resource("ui://other/view.html", app(prefers_border = "yes"))]
fn other() -> String {
    "<p>x</p>".to_owned()
}

fn main() {}

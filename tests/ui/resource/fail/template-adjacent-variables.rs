use mcp_runtime::resource;

/// A file by name and extension.
#[resource("file:///{name}{ext}")]
fn file(name: String, ext: String) -> String {
    format!("{name}{ext}")
}

fn main() {}

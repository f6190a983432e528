use mcp_runtime::resource;

/// `{+path}` keeps reserved characters such as `/` in the value.
#[resource("file:///{+path}", mime_type = "text/plain")]
fn file(path: String) -> Result<String, std::io::Error> {
    std::fs::read_to_string(path)
}

/// Reserved and simple variables together, with a literal suffix.
#[resource("docs://{version}/{+page}.md")]
fn page(version: u32, page: std::path::PathBuf) -> String {
    format!("v{version}: {}", page.display())
}

fn main() {}

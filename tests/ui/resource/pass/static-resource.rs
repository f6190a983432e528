use mcp_runtime::resource;

/// The project's readme.
#[resource("memo://readme")]
fn readme() -> &'static str {
    "# Readme"
}

/// A file URI with an empty authority and a MIME type.
#[resource("file:///etc/motd.txt", mime_type = "text/plain")]
async fn motd() -> String {
    "Welcome".to_owned()
}

/// Schemes may contain `+`, `-` and `.`.
#[resource("git+ssh.v-2://host/repo")]
fn repository() -> &'static str {
    "repo"
}

fn main() {}

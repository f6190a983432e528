use mcp_runtime::tool;

/// Overridden by `description`.
#[tool(
    name = "admin.tools-list_v2",
    title = "List tools",
    description = "Lists the tools.",
    annotations(
        read_only,
        destructive = false,
        idempotent,
        open_world = false,
        title = "Tool lister"
    ),
    icon(
        src = "https://example.com/icon.png",
        mime_type = "image/png",
        sizes = ["48x48", "96x96"],
        theme = "light"
    ),
    icon(src = "data:image/svg+xml;base64,PHN2Zy8+", sizes = ["any"], theme = "dark"),
    meta = r#"{"com.example/owner": "ops", "plain": [1, 2]}"#,
    group = "admin.v2_ops-1"
)]
fn list_tools() -> String {
    String::new()
}

/// Flags written as `flag = true` mean the same as `flag` alone.
#[tool(annotations(
    read_only = true,
    destructive = true,
    idempotent = false,
    open_world = true
))]
fn explicit_flags() -> String {
    String::new()
}

/// An icon with only a source.
#[tool(icon(src = "https://example.com/plain.svg"))]
fn plain_icon() -> String {
    String::new()
}

fn main() {}

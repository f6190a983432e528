use mcp_runtime::tool;

struct Point {
    x: i32,
    y: i32,
}

/// Formats a point.
#[tool]
fn show(point: Point) -> String {
    format!("{} {}", point.x, point.y)
}

fn main() {}

use mcp_runtime::tool;

#[derive(schemars::JsonSchema)]
struct Point {
    x: i32,
    y: i32,
}

/// Formats a point.
#[tool]
fn show(origin: Option<i32>, point: Point) -> String {
    format!("{origin:?} {} {}", point.x, point.y)
}

fn main() {}

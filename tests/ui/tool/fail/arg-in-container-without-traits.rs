use std::collections::HashMap;

use mcp_runtime::tool;

struct Point {
    x: i32,
}

/// Counts points. The types inside `Option`, `Vec` and maps are checked
/// themselves, so the error names `Point` and says what to derive.
#[tool]
fn count(origin: Option<Point>, rest: Vec<Point>, named: HashMap<String, Point>) -> String {
    let first = origin.map_or(0, |p| p.x);
    format!("{first} {} {}", rest.len(), named.len())
}

fn main() {}

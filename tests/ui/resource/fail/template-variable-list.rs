use mcp_runtime::resource;

/// A point on the map.
#[resource("map://{x,y}")]
fn point(x: i32, y: i32) -> String {
    format!("{x},{y}")
}

fn main() {}

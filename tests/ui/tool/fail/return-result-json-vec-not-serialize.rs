use mcp_runtime::{Json, tool};

#[derive(schemars::JsonSchema)]
struct Day {
    high: i32,
}

/// A forecast: `Day` lacks `Serialize`, reported once, at the return type.
#[tool]
fn forecast(days: u8) -> Result<Json<Vec<Day>>, String> {
    Ok(Json((0..days).map(|d| Day { high: i32::from(d) }).collect()))
}

fn main() {}

use mcp_runtime::ElicitForm;

#[derive(serde::Deserialize, schemars::JsonSchema, ElicitForm)]
struct Pair(String, String);

#[derive(serde::Deserialize, schemars::JsonSchema, ElicitForm)]
enum Choice {
    Plain,
    WithData(String),
}

fn main() {}

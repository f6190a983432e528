use mcp_runtime::ElicitForm;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Address {
    street: String,
}

#[derive(serde::Deserialize, schemars::JsonSchema, ElicitForm)]
struct Profile {
    name: String,
    address: Address,
    tags: Vec<String>,
}

fn main() {}

use mcp_runtime::ElicitForm;

#[derive(serde::Deserialize, ElicitForm)]
struct Confirm {
    ok: bool,
}

fn main() {}

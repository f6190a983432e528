use mcp_runtime::tool;

/// Called from C.
#[tool]
extern "C" fn from_c(value: i32) -> String {
    value.to_string()
}

fn main() {}

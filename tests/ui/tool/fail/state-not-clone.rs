use mcp_runtime::{State, tool};

/// Application state is cloned for each request that takes it: a type
/// that is not `Clone` goes in an `Arc`.
struct Pool;

#[tool]
fn query(#[ctx] pool: State<Pool>) -> String {
    let _ = pool;
    "x".to_owned()
}

fn main() {}

use std::marker::PhantomData;

use mcp_runtime::{Json, tool};

/// A result that cannot leave the thread that made it.
#[derive(serde::Serialize, schemars::JsonSchema)]
struct Report {
    count: u32,
    #[serde(skip)]
    #[schemars(skip)]
    thread_bound: PhantomData<*const ()>,
}

/// Made on the blocking pool, so it has to move back.
#[tool(blocking)]
fn report() -> Json<Report> {
    Json(Report {
        count: 1,
        thread_bound: PhantomData,
    })
}

fn main() {}

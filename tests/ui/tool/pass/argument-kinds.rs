use std::collections::BTreeMap;

use mcp_runtime::tool;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Filter {
    field: String,
    value: serde_json::Value,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Order {
    Asc,
    Desc,
}

/// Every way of declaring an argument.
#[tool]
#[allow(clippy::too_many_arguments, clippy::needless_pass_by_value)]
fn search(
    /// What to look for.
    query: String,
    /// At most this many results.
    limit: Option<u32>,
    r#type: String,
    #[arg(rename = "orderBy", description = "Sort order.")] order: Option<Order>,
    #[arg(description = "Filters to apply.")] filters: Vec<Filter>,
    mut tags: Vec<String>,
    _unused: bool,
    weights: BTreeMap<String, f64>,
    #[allow(unused_variables)] raw: serde_json::Value,
) -> String {
    tags.sort();
    let _ = (order, filters, weights);
    format!("{query} {limit:?} {type} {tags:?}", type = r#type)
}

/// An owned `Cow` with an elided lifetime: deserialized as `'static`.
#[tool]
fn greet(name: std::borrow::Cow<'_, str>) -> String {
    format!("hello {name}")
}

fn main() {}

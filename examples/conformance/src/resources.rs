//! Resources and the resource template the `resources-*`, `caching` and
//! `sep-2164-resource-not-found` scenarios read. Unknown URIs need no code:
//! the runtime answers them with `-32602` and `data.uri`.

use mcp_runtime::resource;

use crate::assets::PIXEL_PNG;

/// A static text resource.
#[resource("test://static-text", name = "static_text", mime_type = "text/plain")]
fn static_text() -> &'static str {
    "This is the content of the static text resource."
}

/// A static binary resource: a 1x1 PNG, sent as a base64 `blob`.
#[resource(
    "test://static-binary",
    name = "static_binary",
    mime_type = "image/png"
)]
fn static_binary() -> Vec<u8> {
    PIXEL_PNG.to_vec()
}

/// Data for any ID: `test://template/123/data` is a JSON document about
/// item `123`.
#[resource(
    "test://template/{id}/data",
    name = "template_data",
    mime_type = "application/json"
)]
fn template_data(id: String) -> String {
    serde_json::json!({"id": id, "templateTest": true, "data": format!("Data for ID: {id}")})
        .to_string()
}

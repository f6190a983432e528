//! Validating MCP Apps metadata against the vendored `schema.json` of
//! `@modelcontextprotocol/ext-apps` (spec version 2026-01-26).

use std::sync::OnceLock;

use serde_json::Value;

/// The vendored MCP Apps schema.
pub fn apps_schema() -> &'static Value {
    static SCHEMA: OnceLock<Value> = OnceLock::new();
    SCHEMA.get_or_init(|| {
        serde_json::from_str(include_str!("../../../spec/extensions/apps/schema.json"))
            .expect("the MCP Apps schema.json parses")
    })
}

/// Validates `instance` against `#/$defs/{definition}` of the MCP Apps
/// schema (`McpUiToolMeta`, `McpUiResourceMeta`, ...), panicking with every
/// violation.
pub fn assert_valid_app(definition: &str, instance: &Value) {
    crate::assert_valid_in("apps 2026-01-26", apps_schema(), definition, instance);
}

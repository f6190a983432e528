//! JSON Schema generation with the MCP rules applied in one place.
//!
//! Input schemas describe the generated arguments struct, which always
//! carries `deny_unknown_fields`, so the published schema and the
//! deserializer that runs come from one source. The rules here only clean
//! up presentation: no root `$schema`/`title`, `properties` always present,
//! and optional parameters without a `null` type.
//!
//! [`input_schema`] and [`output_schema`] are the schemas of a Rust type
//! as `#[tool]` publishes them (for a hand-written schema, or a tool built
//! at run time): nested types inlined, since clients commonly drop
//! `$defs`, and each as seen from its side of serde.
//!
//! ```rust
//! use mcp_runtime::schema::{input_schema, output_schema};
//! use serde_json::json;
//!
//! #[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
//! struct Point {
//!     x: f64,
//!     y: f64,
//! }
//!
//! #[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
//! struct Route {
//!     from: Point,
//!     /// Stops on the way (none when left out).
//!     #[serde(default)]
//!     stops: Vec<Point>,
//! }
//!
//! let input = input_schema::<Route>();
//! assert_eq!(input.get("type"), Some(&json!("object")));
//! // Nested types inlined, no `$schema` or `$defs`.
//! assert_eq!(input.as_value()["properties"]["from"]["properties"]["x"]["type"], "number");
//! assert!(input.get("$schema").is_none() && input.get("$defs").is_none());
//! // Read by `Deserialize`, `stops` may be left out; written by
//! // `Serialize` (a tool's structured output), it is always there.
//! assert_eq!(input.get("required"), Some(&json!(["from"])));
//! assert_eq!(output_schema::<Route>().get("required"), Some(&json!(["from", "stops"])));
//! ```

use std::fmt;

use schemars::generate::SchemaSettings;
use schemars::{JsonSchema, Schema};
use serde_json::Value;

use crate::protocol::JsonObject;

/// Why a generated schema cannot be used as a tool input schema.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum SchemaError {
    /// Tool arguments are JSON objects; the schema's root must say so.
    RootNotObject(String),
    /// An `x-mcp-header` annotation breaks the spec's rules.
    InvalidHeader(String),
    /// A hand-written schema does not compile as JSON Schema (a keyword
    /// with a value of the wrong type, a reference that cannot be
    /// resolved), so calls could not be checked against it.
    Invalid(String),
}

impl fmt::Display for SchemaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SchemaError::RootNotObject(found) => write!(
                f,
                "the input schema must have `\"type\": \"object\"` at its root, found {found}"
            ),
            SchemaError::InvalidHeader(problem) => write!(f, "invalid `x-mcp-header`: {problem}"),
            SchemaError::Invalid(problem) => write!(f, "the schema does not compile: {problem}"),
        }
    }
}

/// The JSON type of a header-mirrored parameter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum HeaderKind {
    String,
    Integer,
    Boolean,
}

/// A tool parameter mirrored into an `Mcp-Param-{name}` HTTP header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct HeaderParam {
    /// The `x-mcp-header` value: the header is `Mcp-Param-{name}`.
    pub(crate) name: String,
    /// The chain of `properties` keys from the schema root.
    pub(crate) path: Vec<String>,
    pub(crate) kind: HeaderKind,
}

/// Finds every `x-mcp-header` annotation and checks the spec's rules: a
/// token name, unique ignoring case, on a string, integer or boolean
/// property reachable from the root through `properties` only.
pub(crate) fn header_params(schema: &JsonObject) -> Result<Vec<HeaderParam>, SchemaError> {
    let mut found = Vec::new();
    collect_headers(schema, &mut Vec::new(), true, &mut found)?;
    for (i, a) in found.iter().enumerate() {
        if found[..i]
            .iter()
            .any(|b| b.name.eq_ignore_ascii_case(&a.name))
        {
            return Err(SchemaError::InvalidHeader(format!(
                "`{}` is used twice (header names ignore case)",
                a.name
            )));
        }
    }
    Ok(found)
}

fn collect_headers<'a>(
    schema: &'a JsonObject,
    path: &mut Vec<&'a str>,
    reachable: bool,
    found: &mut Vec<HeaderParam>,
) -> Result<(), SchemaError> {
    if let Some(header) = schema.get("x-mcp-header") {
        let invalid = |problem: String| Err(SchemaError::InvalidHeader(problem));
        let Some(name) = header.as_str() else {
            return invalid("the value must be a string".into());
        };
        if !reachable || path.is_empty() {
            return invalid(format!(
                "`{name}` must sit on a property reachable from the root through `properties` only"
            ));
        }
        if name.is_empty() || !name.bytes().all(is_tchar) {
            return invalid(format!("`{name}` is not an HTTP header token"));
        }
        let kind = match schema.get("type").and_then(Value::as_str) {
            Some("string") => HeaderKind::String,
            Some("integer") => HeaderKind::Integer,
            Some("boolean") => HeaderKind::Boolean,
            _ => {
                return invalid(format!(
                    "`{name}` must be on a string, integer or boolean property"
                ));
            }
        };
        found.push(HeaderParam {
            name: name.to_owned(),
            path: path.iter().map(|&key| key.to_owned()).collect(),
            kind,
        });
    }
    for (key, value) in schema {
        match (key.as_str(), value) {
            ("properties", Value::Object(properties)) => {
                for (name, property) in properties {
                    if let Value::Object(property) = property {
                        path.push(name);
                        collect_headers(property, path, reachable, found)?;
                        path.pop();
                    }
                }
            }
            ("x-mcp-header", _) => {}
            (_, Value::Object(nested)) => collect_headers(nested, path, false, found)?,
            (_, Value::Array(items)) => {
                for item in items.iter().filter_map(Value::as_object) {
                    collect_headers(item, path, false, found)?;
                }
            }
            _ => {}
        }
    }
    Ok(())
}

/// RFC 9110 `tchar`.
fn is_tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

impl std::error::Error for SchemaError {}

fn settings() -> SchemaSettings {
    SchemaSettings::draft2020_12().with(|s| {
        // Clients commonly drop `$defs`/`$ref`; inline what is finite.
        s.inline_subschemas = true;
        s.meta_schema = None;
    })
}

/// The schema of `T` as read by `Deserialize` (tool and prompt inputs).
pub fn input_schema<T: JsonSchema + ?Sized>() -> Schema {
    settings().into_generator().into_root_schema_for::<T>()
}

/// The schema of `T` as written by `Serialize` (structured tool output).
pub fn output_schema<T: JsonSchema + ?Sized>() -> Schema {
    settings()
        .for_serialize()
        .into_generator()
        .into_root_schema_for::<T>()
}

/// Applies the MCP rules to a tool input schema.
pub(crate) fn finish_input(schema: Schema) -> Result<JsonObject, SchemaError> {
    let mut object = into_object(schema);
    strip_root_noise(&mut object);
    match object.get("type") {
        Some(Value::String(t)) if t == "object" => {}
        other => {
            let found = other.map_or_else(|| "no `type`".to_owned(), |t| format!("`{t}`"));
            return Err(SchemaError::RootNotObject(found));
        }
    }
    // Taken out while `properties` is changed, and put back in its place.
    let required = object.get_mut("required").map(Value::take);
    let is_required = |name: &String| match &required {
        Some(Value::Array(names)) => names.iter().any(|n| n.as_str() == Some(name)),
        _ => false,
    };
    let properties = object
        .entry("properties")
        .or_insert_with(|| Value::Object(JsonObject::new()));
    if let Value::Object(properties) = properties {
        for (name, property) in properties.iter_mut() {
            if !is_required(name) {
                drop_null_type(property);
            }
        }
    }
    if let (Some(slot), Some(required)) = (object.get_mut("required"), required) {
        *slot = required;
    }
    Ok(object)
}

/// Checks a hand-written input schema: an object whose root `type` is
/// `"object"`; everything else (`$schema`, `$defs`, composition) is
/// published as written.
pub(crate) fn check_raw_input(schema: Value) -> Result<JsonObject, SchemaError> {
    let Value::Object(object) = schema else {
        return Err(SchemaError::RootNotObject(format!("`{schema}`")));
    };
    match object.get("type") {
        Some(Value::String(t)) if t == "object" => Ok(object),
        other => Err(SchemaError::RootNotObject(
            other.map_or_else(|| "no `type`".to_owned(), |t| format!("`{t}`")),
        )),
    }
}

/// Applies the MCP rules to a tool output schema.
pub(crate) fn finish_output(schema: Schema) -> Result<JsonObject, SchemaError> {
    let mut object = into_object(schema);
    strip_root_noise(&mut object);
    Ok(object)
}

/// Checks a hand-written output schema: any JSON Schema, as an object
/// (the spec's `outputSchema` is one), published as written.
pub(crate) fn check_raw_output(schema: Value) -> Result<JsonObject, SchemaError> {
    match schema {
        Value::Object(object) => Ok(object),
        other => Err(SchemaError::Invalid(format!(
            "an output schema must be a JSON object, found `{other}`"
        ))),
    }
}

fn into_object(schema: Schema) -> JsonObject {
    match schema.to_value() {
        Value::Object(object) => object,
        // `true` accepts anything, `false` nothing; spell them as objects.
        Value::Bool(true) => JsonObject::new(),
        _ => {
            let mut never = JsonObject::new();
            never.insert("not".into(), Value::Object(JsonObject::new()));
            never
        }
    }
}

/// The root `title` is the name of a generated struct and `$schema` is the
/// default dialect anyway; neither helps a client.
fn strip_root_noise(object: &mut JsonObject) {
    object.shift_remove("$schema");
    object.shift_remove("title");
}

/// `Option<T>` parameters are optional, not nullable: publish `T`'s schema.
fn drop_null_type(property: &mut Value) {
    let Value::Object(property) = property else {
        return;
    };
    if let Some(Value::Array(types)) = property.get_mut("type") {
        types.retain(|t| t != "null");
        if types.len() == 1 {
            let only = types.remove(0);
            property.insert("type".into(), only);
        }
        if let Some(Value::Array(values)) = property.get_mut("enum") {
            values.retain(|v| !v.is_null());
        }
        return;
    }
    for key in ["anyOf", "oneOf"] {
        let Some(Value::Array(branches)) = property.get_mut(key) else {
            continue;
        };
        branches.retain(|b| b.get("type").and_then(Value::as_str) != Some("null"));
        if branches.len() == 1 {
            let Some(Value::Object(only)) = branches.pop() else {
                return;
            };
            property.shift_remove(key);
            for (k, v) in only {
                property.entry(k).or_insert(v);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[derive(schemars::JsonSchema, serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Empty {}

    #[derive(schemars::JsonSchema, serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    #[expect(dead_code, reason = "test types: only their derived impls are used")]
    struct Args {
        /// The text.
        text: String,
        /// How many times.
        times: Option<u8>,
        kind: Option<Kind>,
    }

    #[derive(schemars::JsonSchema, serde::Deserialize)]
    enum Kind {
        A,
        B,
    }

    #[test]
    fn empty_arguments_have_properties_and_are_closed() {
        let schema = finish_input(input_schema::<Empty>()).unwrap();
        assert_eq!(
            Value::Object(schema),
            json!({"type": "object", "additionalProperties": false, "properties": {}})
        );
    }

    #[test]
    fn optional_parameters_are_not_nullable() {
        let schema = finish_input(input_schema::<Args>()).unwrap();
        assert_eq!(
            Value::Object(schema),
            json!({
                "type": "object",
                "properties": {
                    "text": {"description": "The text.", "type": "string"},
                    "times": {"description": "How many times.", "type": "integer", "format": "uint8", "minimum": 0, "maximum": 255},
                    "kind": {"type": "string", "enum": ["A", "B"]}
                },
                "additionalProperties": false,
                "required": ["text"]
            })
        );
    }

    fn headers(schema: Value) -> Result<Vec<HeaderParam>, SchemaError> {
        header_params(schema.as_object().unwrap())
    }

    #[test]
    fn header_parameters_are_found_and_checked() {
        let found = headers(json!({"type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "limits": {"type": "object", "properties": {"max": {"type": "integer", "x-mcp-header": "Max"}}},
            "dry": {"type": "boolean", "x-mcp-header": "Dry-Run"}
        }}))
        .unwrap();
        assert_eq!(
            found,
            [
                HeaderParam {
                    name: "Region".into(),
                    path: vec!["region".into()],
                    kind: HeaderKind::String
                },
                HeaderParam {
                    name: "Max".into(),
                    path: vec!["limits".into(), "max".into()],
                    kind: HeaderKind::Integer
                },
                HeaderParam {
                    name: "Dry-Run".into(),
                    path: vec!["dry".into()],
                    kind: HeaderKind::Boolean
                },
            ]
        );
        for bad in [
            json!({"type": "object", "properties": {"n": {"type": "number", "x-mcp-header": "N"}}}),
            json!({"type": "object", "properties": {"a": {"type": "string", "x-mcp-header": "X"}, "b": {"type": "string", "x-mcp-header": "x"}}}),
            json!({"type": "object", "properties": {"a": {"type": "string", "x-mcp-header": "Bad Name"}}}),
            json!({"type": "object", "properties": {"a": {"type": "array", "items": {"type": "string", "x-mcp-header": "Item"}}}}),
            json!({"type": "object", "anyOf": [{"properties": {"a": {"type": "string", "x-mcp-header": "A"}}}]}),
            json!({"type": "object", "x-mcp-header": "Root"}),
        ] {
            assert!(
                matches!(headers(bad.clone()), Err(SchemaError::InvalidHeader(_))),
                "{bad}"
            );
        }
    }

    #[test]
    fn non_object_roots_are_rejected() {
        let err = finish_input(input_schema::<String>()).unwrap_err();
        assert_eq!(err, SchemaError::RootNotObject("`\"string\"`".into()));
    }

    #[test]
    fn raw_input_schemas_need_an_object_root() {
        use serde_json::json;
        let kept = json!({"$schema": "x", "type": "object", "allOf": []});
        assert_eq!(check_raw_input(kept.clone()).map(Value::Object), Ok(kept));
        assert_eq!(
            check_raw_input(json!({"type": "string"}))
                .unwrap_err()
                .to_string(),
            "the input schema must have `\"type\": \"object\"` at its root, found `\"string\"`"
        );
        assert!(check_raw_input(json!(true)).is_err());
        assert!(check_raw_input(json!({"properties": {}})).is_err());
    }
}

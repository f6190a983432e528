//! Hand-written input schemas, enforced (feature `schema-validation`).
//!
//! A schema generated from the parameters cannot disagree with the
//! deserializer that runs: both come from one struct. A schema written by
//! hand can (a `minimum`, a `pattern`, an `if`/`then` the Rust types do not
//! express), so it is compiled once, when the tool is registered, and
//! every call's arguments are checked against it before the handler sees
//! them. A violation is the same tool error a typed argument gives
//! (`isError: true`, naming the field), so the model can fix its call.

use jsonschema::error::ValidationErrorKind;
use jsonschema::paths::{Location, LocationSegment};
use serde_json::Value;

use crate::protocol::json::ArgumentError;
use crate::schema::SchemaError;

/// A compiled hand-written input schema.
pub(crate) struct InputCheck {
    validator: jsonschema::Validator,
}

impl std::fmt::Debug for InputCheck {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("InputCheck")
    }
}

impl InputCheck {
    /// Compiles `schema` in the dialect its `$schema` names (2020-12, the
    /// spec's default, without one). External references are not fetched:
    /// a schema that needs one does not compile.
    pub(crate) fn compile(schema: &Value) -> Result<InputCheck, SchemaError> {
        jsonschema::validator_for(schema)
            .map(|validator| InputCheck { validator })
            .map_err(|error| SchemaError::Invalid(error.to_string()))
    }

    /// The first place `arguments` (a JSON object's text) breaks the
    /// schema, named as a typed argument's error names it
    /// (`` `items[1].name`: ... ``).
    pub(crate) fn check(&self, arguments: &str) -> Result<(), ArgumentError> {
        let value: Value = serde_json::from_str(arguments)
            .map_err(|error| ArgumentError::new("", error.to_string()))?;
        let Some(error) = self.validator.iter_errors(&value).next() else {
            return Ok(());
        };
        let mut path = dotted(error.instance_path());
        let message = match error.kind() {
            ValidationErrorKind::Required { property } => match property.as_str() {
                Some(name) => format!("missing field `{name}`"),
                None => error.to_string(),
            },
            ValidationErrorKind::AdditionalProperties { unexpected } => {
                let field = unexpected.first().map_or("", String::as_str);
                push_property(&mut path, field);
                format!("unknown field `{field}`: the schema allows no other fields")
            }
            _ => error.to_string(),
        };
        Err(ArgumentError::new(path, message))
    }
}

/// `/items/1/name` as serde names it: `items[1].name`.
fn dotted(location: &Location) -> String {
    let mut path = String::new();
    for segment in location {
        match segment {
            LocationSegment::Property(name) => push_property(&mut path, &name),
            LocationSegment::Index(index) => path.push_str(&format!("[{index}]")),
        }
    }
    path
}

fn push_property(path: &mut String, name: &str) {
    if !path.is_empty() {
        path.push('.');
    }
    path.push_str(name);
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn check(arguments: Value) -> Result<(), String> {
        let schema = json!({
            "type": "object",
            "properties": {
                "item": {"type": "string", "minLength": 1},
                "count": {"type": "integer", "minimum": 1},
                "lines": {"type": "array", "items": {
                    "type": "object",
                    "properties": {"sku": {"type": "string", "pattern": "^[A-Z]{3}$"}},
                    "required": ["sku"]
                }}
            },
            "required": ["item"],
            "additionalProperties": false
        });
        let check = InputCheck::compile(&schema).unwrap();
        check
            .check(&arguments.to_string())
            .map_err(|e| e.to_string())
    }

    #[test]
    fn violations_name_the_field_as_typed_arguments_do() {
        assert_eq!(check(json!({"item": "pen", "count": 2})), Ok(()));
        assert_eq!(check(json!({})).unwrap_err(), "missing field `item`");
        assert_eq!(
            check(json!({"name": "x"})).unwrap_err(),
            "`name`: unknown field `name`: the schema allows no other fields"
        );
        assert_eq!(
            check(json!({"item": "pen", "count": 0})).unwrap_err(),
            "`count`: 0 is less than the minimum of 1"
        );
        assert_eq!(
            check(json!({"item": "pen", "lines": [{"sku": "ABC"}, {"sku": "abc"}]})).unwrap_err(),
            r#"`lines[1].sku`: "abc" does not match "^[A-Z]{3}$""#
        );
        assert_eq!(
            check(json!({"item": "pen", "lines": [{}]})).unwrap_err(),
            "`lines[0]`: missing field `sku`"
        );
        assert_eq!(
            check(json!({"item": "pen", "colour": "red"})).unwrap_err(),
            "`colour`: unknown field `colour`: the schema allows no other fields"
        );
    }

    #[test]
    fn a_schema_that_does_not_compile_is_refused() {
        let error =
            InputCheck::compile(&json!({"type": "object", "minProperties": "two"})).unwrap_err();
        assert!(matches!(error, SchemaError::Invalid(_)), "{error:?}");
        // Nothing is fetched from the network or the disk.
        let remote =
            json!({"type": "object", "properties": {"a": {"$ref": "https://example.com/a.json"}}});
        assert!(InputCheck::compile(&remote).is_err());
    }
}

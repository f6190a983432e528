//! A tool's output schema, compared path by path from the side of a client
//! that reads `structuredContent`: what it reads must still be there, and
//! hold only values it knows. A field added, or made always present, or a
//! type that now holds fewer kinds of values, breaks no such client; a
//! field removed, made optional, retyped or widened can.
//!
//! Paths name fields the way a reader writes them: `daily[].high` is the
//! `high` field of each item of the `daily` array. `$ref`s are followed
//! within each schema (a change in a definition is reported where it is
//! used).

use serde_json::{Map, Value};

use super::change::{Changes, compact, strip_descriptive, widens};

/// Deeper than any schema a type generates; stops recursive `$ref`s.
const MAX_DEPTH: usize = 32;

/// Every difference between two output schemas of `item`.
pub(super) fn compare(changes: &mut Changes, item: &str, old: &Value, new: &Value) {
    let (old, new) = (inlined(old), inlined(new));
    Outputs { changes, item }.schema("", &old, &new, 0);
}

struct Outputs<'a> {
    changes: &'a mut Changes,
    item: &'a str,
}

impl Outputs<'_> {
    fn field(&self, path: &str) -> String {
        if path.is_empty() {
            format!("{}: the output", self.item)
        } else {
            format!("{}: output field `{path}`", self.item)
        }
    }

    fn schema(&mut self, path: &str, old: &Value, new: &Value, depth: usize) {
        if old == new || depth > MAX_DEPTH {
            return;
        }
        let (bare_old, bare_new) = (strip_descriptive(old), strip_descriptive(new));
        if bare_old == bare_new {
            let field = self.field(path);
            self.changes
                .additive(format!("{field}: description changed"));
            return;
        }
        if has(old, "properties") && has(new, "properties") {
            self.properties(path, old, new, depth);
            self.rest(path, old, new, &["properties", "required"]);
        } else if has(old, "items") && has(new, "items") {
            self.schema(
                &format!("{path}[]"),
                &old["items"],
                &new["items"],
                depth + 1,
            );
            self.rest(path, old, new, &["items"]);
        } else {
            self.value(path, &bare_old, &bare_new);
        }
    }

    fn properties(&mut self, path: &str, old: &Value, new: &Value, depth: usize) {
        let (old_fields, new_fields) = (fields(old), fields(new));
        let join = |name: &str| {
            if path.is_empty() {
                name.to_owned()
            } else {
                format!("{path}.{name}")
            }
        };
        for (name, before) in &old_fields {
            let field = self.field(&join(name));
            let Some(after) = new_fields.get(name) else {
                self.changes
                    .breaking(format!("{field} was removed (clients that read it break)"));
                continue;
            };
            match (required(old, name), required(new, name)) {
                (true, false) => self.changes.breaking(format!(
                    "{field} may now be absent (clients that expect it break)"
                )),
                (false, true) => self
                    .changes
                    .additive(format!("{field} is now always present")),
                _ => {}
            }
            self.schema(&join(name), before, after, depth + 1);
        }
        for name in new_fields.keys().filter(|n| !old_fields.contains_key(*n)) {
            let field = self.field(&join(name));
            self.changes.additive(format!("{field} was added"));
        }
    }

    /// The keywords of an object or array schema besides the ones compared
    /// field by field (`additionalProperties`, `minItems`, ...).
    fn rest(&mut self, path: &str, old: &Value, new: &Value, compared: &[&str]) {
        let without = |schema: &Value| {
            let mut schema = strip_descriptive(schema);
            if let Some(map) = schema.as_object_mut() {
                for key in compared {
                    map.remove(*key);
                }
            }
            schema
        };
        let (old, new) = (without(old), without(new));
        if old != new {
            self.value(path, &old, &new);
        }
    }

    /// A value's type changed: widened (clients may meet values they do
    /// not know), narrowed (they meet fewer), or changed.
    fn value(&mut self, path: &str, old: &Value, new: &Value) {
        let field = self.field(path);
        let (before, after) = (compact(old), compact(new));
        if widens(new, old) {
            self.changes.additive(format!(
                "{field} now holds fewer kinds of values: {before} -> {after}"
            ));
        } else if widens(old, new) {
            self.changes.breaking(format!(
                "{field} can hold values it could not before (clients may not handle them): {before} -> {after}"
            ));
        } else {
            self.changes.breaking(format!(
                "{field} changed type (clients that read it may break): {before} -> {after}"
            ));
        }
    }
}

/// `schema` with its local `$ref`s (`#/$defs/...`) replaced by what they
/// point to, and without `$defs`, so that a change inside a definition is
/// seen where the definition is used. A reference back into a definition
/// being inlined (a recursive type) stays a reference.
fn inlined(schema: &Value) -> Value {
    let mut open = Vec::new();
    let mut schema = inline(schema, schema, &mut open);
    if let Some(map) = schema.as_object_mut() {
        map.remove("$defs");
        map.remove("definitions");
    }
    schema
}

fn inline(schema: &Value, root: &Value, open: &mut Vec<String>) -> Value {
    match schema {
        Value::Object(map) => {
            let reference = map.get("$ref").and_then(Value::as_str);
            let target = reference
                .and_then(|r| r.strip_prefix('#'))
                .filter(|pointer| !open.iter().any(|o| o == pointer))
                .and_then(|pointer| root.pointer(pointer).map(|t| (pointer.to_owned(), t)));
            if let Some((pointer, target)) = target {
                open.push(pointer);
                let inlined = inline(target, root, open);
                open.pop();
                return inlined;
            }
            Value::Object(
                map.iter()
                    .map(|(key, value)| (key.clone(), inline(value, root, open)))
                    .collect(),
            )
        }
        Value::Array(items) => Value::Array(items.iter().map(|v| inline(v, root, open)).collect()),
        other => other.clone(),
    }
}

fn has(schema: &Value, key: &str) -> bool {
    schema.get(key).is_some()
}

fn fields(schema: &Value) -> Map<String, Value> {
    schema
        .get("properties")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default()
}

fn required(schema: &Value, name: &str) -> bool {
    schema
        .get("required")
        .and_then(Value::as_array)
        .is_some_and(|r| r.iter().any(|n| n == name))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::contract::{Difference, compare as compare_manifests};

    fn changes(old: serde_json::Value, new: serde_json::Value) -> Vec<String> {
        let tool =
            |output| json!({"tools": {"forecast": {"inputSchema": {}, "outputSchema": output}}});
        compare_manifests(&tool(old), &tool(new))
            .iter()
            .map(Difference::to_string)
            .collect()
    }

    #[test]
    fn every_changed_path_is_named_and_classified() {
        let old = json!({
            "type": "object",
            "properties": {
                "city": {"type": "string"},
                "daily": {"type": "array", "items": {"$ref": "#/$defs/Day"}},
                "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
                "source": {"type": "string"},
                "updated": {"type": "string"}
            },
            "required": ["city", "daily", "unit", "updated"],
            "$defs": {"Day": {
                "type": "object",
                "properties": {"high": {"type": "number"}, "low": {"type": "number"}},
                "required": ["high", "low"]
            }}
        });
        let new = json!({
            "type": "object",
            "properties": {
                "city": {"type": "string", "description": "The city."},
                "daily": {"type": "array", "items": {"$ref": "#/$defs/Day"}},
                "unit": {"type": "string", "enum": ["celsius", "fahrenheit", "kelvin"]},
                "source": {"type": "string"},
                "updated": {"type": "integer"},
                "alerts": {"type": "array", "items": {"type": "string"}}
            },
            "required": ["city", "daily", "unit", "updated", "source"],
            "$defs": {"Day": {
                "type": "object",
                "properties": {"high": {"type": "integer"}, "rain": {"type": "number"}},
                "required": ["high", "rain"]
            }}
        });
        assert_eq!(
            changes(old, new),
            [
                "BREAKING  tool `forecast`: output field `daily[].low` was removed (clients that read it break)",
                "BREAKING  tool `forecast`: output field `unit` can hold values it could not before (clients may not handle them): {\"type\":\"string\",\"enum\":[\"celsius\",\"fahrenheit\"]} -> {\"type\":\"string\",\"enum\":[\"celsius\",\"fahrenheit\",\"kelvin\"]}",
                "BREAKING  tool `forecast`: output field `updated` changed type (clients that read it may break): {\"type\":\"string\"} -> {\"type\":\"integer\"}",
                "additive  tool `forecast`: output field `city`: description changed",
                "additive  tool `forecast`: output field `daily[].high` now holds fewer kinds of values: {\"type\":\"number\"} -> {\"type\":\"integer\"}",
                "additive  tool `forecast`: output field `daily[].rain` was added",
                "additive  tool `forecast`: output field `source` is now always present",
                "additive  tool `forecast`: output field `alerts` was added",
            ]
        );
    }

    #[test]
    fn an_added_optional_field_is_additive_and_a_field_made_optional_breaks() {
        let old =
            json!({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]});
        let new = json!({"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "string"}}});
        assert_eq!(
            changes(old, new),
            [
                "BREAKING  tool `forecast`: output field `a` may now be absent (clients that expect it break)",
                "additive  tool `forecast`: output field `b` was added",
            ]
        );
    }

    #[test]
    fn recursive_types_are_compared_without_looping() {
        let tree = |leaf: &str| {
            json!({"$ref": "#/$defs/Tree", "$defs": {"Tree": {
                "type": "object",
                "properties": {
                    "left": {"$ref": "#/$defs/Tree"},
                    "right": {"$ref": "#/$defs/Tree"},
                    "value": {"type": leaf}
                }
            }}})
        };
        assert_eq!(
            changes(tree("integer"), tree("string")),
            [
                "BREAKING  tool `forecast`: output field `value` changed type (clients that read it may break): {\"type\":\"integer\"} -> {\"type\":\"string\"}"
            ]
        );
    }

    #[test]
    fn a_whole_output_retyped_is_named_too() {
        assert_eq!(
            changes(json!({"type": "object"}), json!({"type": "array"})),
            [
                "BREAKING  tool `forecast`: the output changed type (clients that read it may break): {\"type\":\"object\"} -> {\"type\":\"array\"}"
            ]
        );
    }
}

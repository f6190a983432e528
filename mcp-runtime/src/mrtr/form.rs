//! The restricted schema of form elicitation: a flat object whose
//! properties are strings (with `email`, `uri`, `date` or `date-time`
//! formats), numbers, integers, booleans, or single- and multi-select enums.

use std::any::TypeId;
use std::collections::HashMap;
use std::sync::{Arc, OnceLock, PoisonError, RwLock};

use schemars::JsonSchema;
use serde_json::{Map, Value};

use super::answer::AskKind;
use super::answer::fingerprint;
use crate::protocol::JsonObject;

/// A form elicitation, prepared once per type: its `requestedSchema` and
/// the fingerprint of that schema, which each question asked with it
/// digests with its message.
#[derive(Debug)]
pub struct Form {
    pub(crate) schema: Value,
    pub(crate) fingerprint: String,
}

/// The form for `T`, or why `T` cannot be a form.
pub(crate) fn form<T: JsonSchema + ?Sized + 'static>() -> Result<Arc<Form>, String> {
    // A form's schema never changes, and every round of a request would
    // otherwise generate it again and digest it for the fingerprint:
    // cached per type, for the process. That is safe to share between
    // servers because it is keyed by `TypeId`: what it holds is derived
    // from the type alone, and bounded by the form types linked in. Not by
    // type name, which two types can share (items of one name in two
    // blocks of a function, two versions of one crate).
    type Cache = RwLock<HashMap<TypeId, Result<Arc<Form>, String>>>;
    static CACHE: OnceLock<Cache> = OnceLock::new();
    let id = TypeId::of::<T>();
    let cache = CACHE.get_or_init(Cache::default);
    if let Some(known) = cache
        .read()
        .unwrap_or_else(PoisonError::into_inner)
        .get(&id)
    {
        return known.clone();
    }
    let computed = generate_form_schema::<T>().map(|schema| {
        let schema = Value::Object(schema);
        Arc::new(Form {
            fingerprint: fingerprint(AskKind::ElicitForm, Some(&schema)),
            schema,
        })
    });
    cache
        .write()
        .unwrap_or_else(PoisonError::into_inner)
        .insert(id, computed.clone());
    computed
}

/// The `requestedSchema` for `T`, or why `T` cannot be a form.
#[cfg(test)]
pub(crate) fn form_schema<T: JsonSchema + ?Sized + 'static>() -> Result<JsonObject, String> {
    form::<T>().map(|form| form.schema.as_object().cloned().unwrap_or_default())
}

fn generate_form_schema<T: JsonSchema + ?Sized>() -> Result<JsonObject, String> {
    let name = std::any::type_name::<T>();
    let schema = crate::schema::input_schema::<T>().to_value();
    restrict(&schema).map_err(|problem| {
        format!("`{name}` cannot be an elicitation form: {problem}; forms are flat objects of strings, numbers, integers, booleans and enums")
    })
}

fn restrict(schema: &Value) -> Result<JsonObject, String> {
    let object = schema.as_object().ok_or("its schema is not an object")?;
    if object.get("type").and_then(Value::as_str) != Some("object") {
        return Err("it is not a struct".into());
    }
    let required: Vec<String> = object
        .get("required")
        .and_then(Value::as_array)
        .map(|r| {
            r.iter()
                .filter_map(|n| n.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    let mut properties = Map::new();
    for (name, property) in object
        .get("properties")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        let optional = !required.contains(name);
        let field =
            field(property, optional).map_err(|problem| format!("field `{name}` {problem}"))?;
        properties.insert(name.clone(), Value::Object(field));
    }
    let mut form = Map::new();
    form.insert("type".into(), "object".into());
    form.insert("properties".into(), Value::Object(properties));
    if !required.is_empty() {
        form.insert("required".into(), required.into());
    }
    Ok(form)
}

/// Annotations every primitive schema may keep.
const COMMON: [&str; 3] = ["title", "description", "default"];

fn field(schema: &Value, optional: bool) -> Result<JsonObject, String> {
    let mut schema = schema.as_object().ok_or("has no schema")?.clone();
    if optional {
        drop_null(&mut schema);
    }
    if let Some(Value::Array(branches)) = schema.get("oneOf").cloned() {
        return titled_enum(&schema, &branches);
    }
    let kind = schema
        .get("type")
        .and_then(Value::as_str)
        .ok_or("is not a single primitive type")?
        .to_owned();
    let keep: &[&str] = match kind.as_str() {
        // `enumNames` titles the options the deprecated way (a legacy
        // titled enum); it is kept when a field's schema sets it.
        "string" if schema.contains_key("enum") => &["enum", "enumNames"],
        "string" => &["minLength", "maxLength", "format"],
        "number" | "integer" => &["minimum", "maximum"],
        "boolean" => &[],
        "array" => return multi_select(&schema),
        other => return Err(format!("has type `{other}`")),
    };
    // Formats the spec does not list are dropped, not refused: they only
    // narrow what a client may show.
    if kind == "string"
        && schema
            .get("format")
            .and_then(Value::as_str)
            .is_some_and(|format| !matches!(format, "email" | "uri" | "date" | "date-time"))
    {
        schema.remove("format");
    }
    Ok(pick(&schema, &kind, keep))
}

fn pick(schema: &JsonObject, kind: &str, keep: &[&str]) -> JsonObject {
    let mut out = Map::new();
    out.insert("type".into(), kind.into());
    for key in COMMON.iter().chain(keep) {
        if let Some(value) = schema.get(*key) {
            out.insert((*key).to_owned(), value.clone());
        }
    }
    out
}

/// An enum whose variants carry doc comments: `oneOf` of `const`s, which
/// becomes the titled single-select form.
fn titled_enum(schema: &JsonObject, branches: &[Value]) -> Result<JsonObject, String> {
    let mut options = Vec::new();
    for branch in branches {
        let constant = branch
            .get("const")
            .or_else(|| branch.get("enum").and_then(|e| e.get(0)))
            .and_then(Value::as_str)
            .ok_or("is an enum with data-carrying variants")?;
        let title = branch
            .get("title")
            .or_else(|| branch.get("description"))
            .and_then(Value::as_str)
            .unwrap_or(constant);
        options.push(serde_json::json!({"const": constant, "title": title}));
    }
    let mut out = pick(schema, "string", &[]);
    out.insert("oneOf".into(), options.into());
    Ok(out)
}

/// A list of enum values: the multi-select form.
fn multi_select(schema: &JsonObject) -> Result<JsonObject, String> {
    let items = schema
        .get("items")
        .and_then(Value::as_object)
        .ok_or("is a list without item type")?;
    // Variants with doc comments: the titled multi-select form.
    if let Some(Value::Array(branches)) = items.get("oneOf") {
        let titled = titled_enum(items, branches)?;
        let mut out = pick(schema, "array", &["minItems", "maxItems"]);
        out.insert(
            "items".into(),
            serde_json::json!({"anyOf": titled["oneOf"].clone()}),
        );
        return Ok(out);
    }
    if items.get("type").and_then(Value::as_str) != Some("string") || !items.contains_key("enum") {
        return Err("is a list of something other than enum values".into());
    }
    let mut out = pick(schema, "array", &["minItems", "maxItems"]);
    out.insert(
        "items".into(),
        serde_json::json!({"type": "string", "enum": items["enum"].clone()}),
    );
    Ok(out)
}

fn drop_null(schema: &mut JsonObject) {
    if let Some(Value::Array(types)) = schema.get_mut("type") {
        types.retain(|t| t != "null");
        if types.len() == 1 {
            let only = types.remove(0);
            schema.insert("type".into(), only);
        }
    }
    if let Some(Value::Array(values)) = schema.get_mut("enum") {
        values.retain(|v| !v.is_null());
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(Value::Array(branches)) = schema.get_mut(key) {
            branches.retain(|b| {
                b.get("type").and_then(Value::as_str) != Some("null")
                    && b.get("const") != Some(&Value::Null)
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mrtr::content::check_content;
    use serde::Deserialize;
    use serde_json::json;

    /// The properties of the form for `T`.
    fn properties<T: JsonSchema + 'static>() -> Vec<String> {
        let schema = form_schema::<T>().unwrap();
        schema["properties"]
            .as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect()
    }

    #[test]
    fn types_of_one_name_have_forms_of_their_own() {
        // Two types whose `type_name` is the same (the same path: blocks
        // of one function; two versions of one crate do the same): each
        // has its own form.
        let first = {
            #[derive(schemars::JsonSchema)]
            #[expect(dead_code, reason = "only the derived schema is read")]
            struct Answer {
                city: String,
            }
            (std::any::type_name::<Answer>(), properties::<Answer>())
        };
        let second = {
            #[derive(schemars::JsonSchema)]
            #[expect(dead_code, reason = "only the derived schema is read")]
            struct Answer {
                age: u32,
            }
            (std::any::type_name::<Answer>(), properties::<Answer>())
        };
        assert_eq!(first.0, second.0);
        assert_eq!(first.1, ["city"]);
        assert_eq!(second.1, ["age"]);
    }

    #[derive(schemars::JsonSchema, serde::Deserialize)]
    #[expect(dead_code, reason = "test types: only their derived schemas are read")]
    struct Person {
        /// Your name.
        name: String,
        #[schemars(email)]
        email: Option<String>,
        age: u8,
        subscribe: bool,
        color: Color,
        sizes: Vec<Size>,
        colors: Vec<Color>,
        #[schemars(extend("enumNames" = ["Small", "Medium"]))]
        legacy: Size,
    }

    #[derive(schemars::JsonSchema, serde::Deserialize)]
    enum Color {
        /// Bright red
        Red,
        /// Deep blue
        Blue,
    }

    #[derive(schemars::JsonSchema, serde::Deserialize)]
    enum Size {
        S,
        M,
    }

    #[derive(schemars::JsonSchema, serde::Deserialize)]
    #[expect(dead_code, reason = "test types: only their derived schemas are read")]
    struct Nested {
        person: Person,
    }

    #[test]
    fn flat_structs_become_forms() {
        let form = form_schema::<Person>().unwrap();
        assert_eq!(
            Value::Object(form),
            json!({
                "type": "object",
                "properties": {
                    "name": {"type": "string", "description": "Your name."},
                    "email": {"type": "string", "format": "email"},
                    "age": {"type": "integer", "minimum": 0, "maximum": 255},
                    "subscribe": {"type": "boolean"},
                    "color": {"type": "string", "oneOf": [{"const": "Red", "title": "Bright red"}, {"const": "Blue", "title": "Deep blue"}]},
                    "sizes": {"type": "array", "items": {"type": "string", "enum": ["S", "M"]}},
                    "colors": {"type": "array", "items": {"anyOf": [{"const": "Red", "title": "Bright red"}, {"const": "Blue", "title": "Deep blue"}]}},
                    "legacy": {"type": "string", "enum": ["S", "M"], "enumNames": ["Small", "Medium"]}
                },
                "required": ["name", "age", "subscribe", "color", "sizes", "colors", "legacy"]
            })
        );
    }

    #[test]
    fn nested_types_are_refused_with_their_name() {
        let error = form_schema::<Nested>().unwrap_err();
        assert!(error.contains("Nested"), "{error}");
        assert!(error.contains("field `person`"), "{error}");
        assert!(form_schema::<String>().is_err());
    }

    /// Submitted content checked against the form's schema is refused
    /// whenever the form's type refuses it.
    #[test]
    fn content_checked_against_the_schema_agrees_with_the_type() {
        let schema = Value::Object(form_schema::<Person>().unwrap());
        let fitting = json!({
            "name": "Ada", "email": "ada@example.com", "age": 36, "subscribe": true,
            "color": "Red", "sizes": ["S", "M"], "colors": [], "legacy": "M",
        });
        let with = |field: &str, value: Value| {
            let mut content = fitting.clone();
            content[field] = value;
            content
        };
        let without = |field: &str| {
            let mut content = fitting.clone();
            content.as_object_mut().unwrap().remove(field);
            content
        };
        let cases = [
            (fitting.clone(), None),
            (with("email", Value::Null), None),
            (without("email"), None),
            (with("extra", json!(1)), None),
            (
                with("age", json!("36")),
                Some("`age`: invalid type: string \"36\", expected i64"),
            ),
            (
                with("age", json!(1.5)),
                Some("`age`: invalid type: floating point `1.5`, expected i64"),
            ),
            (
                with("age", json!(300)),
                Some("`age`: invalid value: 300, expected at most 255"),
            ),
            (
                with("age", json!(-1)),
                Some("`age`: invalid value: -1, expected at least 0"),
            ),
            (
                with("name", json!(5)),
                Some("`name`: invalid type: integer `5`, expected a string"),
            ),
            (
                with("color", json!("Green")),
                Some("`color`: unknown variant `Green`, expected one of `Red`, `Blue`"),
            ),
            (
                with("legacy", json!("L")),
                Some("`legacy`: unknown variant `L`, expected one of `S`, `M`"),
            ),
            (
                with("sizes", json!("S")),
                Some("`sizes`: invalid type: string \"S\", expected a sequence"),
            ),
            (
                with("sizes", json!(["S", "X"])),
                Some("`sizes[1]`: unknown variant `X`, expected one of `S`, `M`"),
            ),
            (
                with("colors", json!(["Red", 1])),
                Some("`colors[1]`: invalid type: integer `1`, expected a string"),
            ),
            (
                with("subscribe", Value::Null),
                Some("`subscribe`: invalid type: null, expected a boolean"),
            ),
            (without("name"), Some("missing field `name`")),
            (json!(["Ada"]), Some("expected an object")),
        ];
        for (content, problem) in cases {
            let typed = Person::deserialize(&content);
            let checked = check_content(&schema, &content);
            assert_eq!(checked.is_ok(), typed.is_ok(), "{content}: {checked:?}");
            assert_eq!(checked.err().as_deref(), problem, "{content}");
        }
    }
}

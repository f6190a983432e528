//! A form's submitted content checked against the form's schema alone
//! (the restricted schema [`form`](super::form) generates), for an answer
//! that arrives without the handler's answer type: a task's `tasks/update`.

use serde_json::Value;

use crate::protocol::json::ArgumentError;

/// Checks the content a client submitted for a form against the form's
/// `requestedSchema` (one this module wrote): each property of the type its
/// schema gives, a choice among its options, a number within its bounds,
/// and every required property present and not `null`. It stands in for
/// the form's Rust type where only the request is at hand (a task's
/// `tasks/update`), so it refuses what that type would refuse, naming the
/// field as the type's error would; string formats and lengths, which the
/// type does not check either, are left to the handler.
pub(crate) fn check_content(schema: &Value, content: &Value) -> Result<(), String> {
    let Some(content) = content.as_object() else {
        return Err("expected an object".into());
    };
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|names| names.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut missing = None;
    for (name, property) in schema
        .get("properties")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        let optional = !required.contains(&name.as_str());
        match content.get(name) {
            None | Some(Value::Null) if optional => {}
            None => {
                missing.get_or_insert(name);
            }
            Some(value) => check_field(name, property, value).map_err(|e| e.to_string())?,
        }
    }
    // As serde reports them: a field of the wrong type first, then the
    // first field missing.
    missing.map_or(Ok(()), |name| Err(format!("missing field `{name}`")))
}

/// Checks one submitted field against its schema.
fn check_field(name: &str, schema: &Value, value: &Value) -> Result<(), ArgumentError> {
    let at = |problem: String| ArgumentError::new(name, problem);
    match schema.get("type").and_then(Value::as_str) {
        Some("boolean") => typed::<bool>(value).map(drop).map_err(at),
        Some("string") => typed::<String>(value)
            .and_then(|chosen| check_choice(options(schema).as_deref(), &chosen))
            .map_err(at),
        Some("integer") => check_integer(value)
            .and_then(|()| check_bounds(schema, value))
            .map_err(at),
        Some("number") => typed::<f64>(value)
            .and_then(|_| check_bounds(schema, value))
            .map_err(at),
        Some("array") => check_choices(name, schema, value),
        // Not a kind of field this module writes: nothing to hold it to.
        _ => Ok(()),
    }
}

/// `value` read as `T`, or serde's words for why not (`invalid type:
/// string "yes", expected a boolean`), as the form's type would say.
fn typed<T: serde::de::DeserializeOwned>(value: &Value) -> Result<T, String> {
    T::deserialize(value).map_err(|error| error.to_string())
}

/// An integer (of any size: the bounds say which).
fn check_integer(value: &Value) -> Result<(), String> {
    if value.is_u64() {
        return Ok(());
    }
    typed::<i64>(value).map(drop)
}

/// A number within the schema's `minimum` and `maximum`.
fn check_bounds(schema: &Value, value: &Value) -> Result<(), String> {
    let number = value.as_f64().unwrap_or_default();
    let crossed = |key: &str, past: fn(f64, f64) -> bool| {
        let bound = schema.get(key)?;
        bound
            .as_f64()
            .is_some_and(|b| past(number, b))
            .then_some(bound)
    };
    if let Some(minimum) = crossed("minimum", |n, b| n < b) {
        return Err(format!(
            "invalid value: {value}, expected at least {minimum}"
        ));
    }
    if let Some(maximum) = crossed("maximum", |n, b| n > b) {
        return Err(format!(
            "invalid value: {value}, expected at most {maximum}"
        ));
    }
    Ok(())
}

/// The options of a single-select field (`enum`, or the `const`s of a
/// titled one's `oneOf`, or of a titled multi-select's items' `anyOf`);
/// `None` for a free string.
fn options(schema: &Value) -> Option<Vec<&str>> {
    if let Some(values) = schema.get("enum").and_then(Value::as_array) {
        return Some(values.iter().filter_map(Value::as_str).collect());
    }
    let branches = schema
        .get("oneOf")
        .or_else(|| schema.get("anyOf"))?
        .as_array()?;
    let constants = branches
        .iter()
        .filter_map(|branch| branch.get("const").and_then(Value::as_str));
    Some(constants.collect())
}

/// `chosen` is one of the `options`, when there are some; in serde's words
/// for an unknown enum variant otherwise.
fn check_choice(options: Option<&[&str]>, chosen: &str) -> Result<(), String> {
    match options {
        Some(options) if !options.contains(&chosen) => {
            let expected: Vec<String> = options.iter().map(|o| format!("`{o}`")).collect();
            Err(format!(
                "unknown variant `{chosen}`, expected one of {}",
                expected.join(", ")
            ))
        }
        _ => Ok(()),
    }
}

/// A multi-select field: a list of its items' options.
fn check_choices(name: &str, schema: &Value, value: &Value) -> Result<(), ArgumentError> {
    let items = typed::<Vec<Value>>(value).map_err(|problem| ArgumentError::new(name, problem))?;
    let allowed = schema.get("items").and_then(options);
    for (index, item) in items.iter().enumerate() {
        typed::<String>(item)
            .and_then(|chosen| check_choice(allowed.as_deref(), &chosen))
            .map_err(|problem| ArgumentError::new(format!("{name}[{index}]"), problem))?;
    }
    Ok(())
}

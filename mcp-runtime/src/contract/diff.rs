//! Comparing two manifests: every difference, classified as breaking (a
//! client written against the old contract can fail) or additive (it keeps
//! working).

use serde_json::{Map, Value};

use super::change::{Changes, DESCRIPTIVE, Difference, compact, strip_descriptive, widens};

/// Every change from `old` to `new`, breaking ones first.
pub fn compare(old: &Value, new: &Value) -> Vec<Difference> {
    let mut changes = Changes::default();
    let empty = Map::new();
    let section = |manifest: &Value, key: &str| {
        manifest
            .get(key)
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default()
    };
    compare_capabilities(
        &mut changes,
        old.get("capabilities")
            .and_then(Value::as_object)
            .unwrap_or(&empty),
        new.get("capabilities")
            .and_then(Value::as_object)
            .unwrap_or(&empty),
    );
    for (key, kind) in [
        ("tools", Kind::Tool),
        ("resources", Kind::Resource),
        ("resourceTemplates", Kind::Template),
        ("prompts", Kind::Prompt),
        ("extensionMethods", Kind::ExtensionMethod),
        ("skills", Kind::Skill),
    ] {
        compare_items(&mut changes, kind, &section(old, key), &section(new, key));
    }
    changes.sorted()
}

#[derive(Clone, Copy)]
enum Kind {
    Tool,
    Resource,
    Template,
    Prompt,
    ExtensionMethod,
    Skill,
}

impl Kind {
    fn noun(self) -> &'static str {
        match self {
            Kind::Tool => "tool",
            Kind::Resource => "resource",
            Kind::Template => "resource template",
            Kind::Prompt => "prompt",
            Kind::ExtensionMethod => "extension method",
            Kind::Skill => "skill",
        }
    }
}

fn compare_capabilities(changes: &mut Changes, old: &Map<String, Value>, new: &Map<String, Value>) {
    for (name, value) in old {
        match new.get(name) {
            None => changes.breaking(format!("capability `{name}` was removed")),
            Some(now) if now != value => {
                changes.additive(format!("capability `{name}` changed: {value} -> {now}"))
            }
            Some(_) => {}
        }
    }
    for name in new.keys().filter(|name| !old.contains_key(*name)) {
        changes.additive(format!("capability `{name}` was added"));
    }
}

fn compare_items(
    changes: &mut Changes,
    kind: Kind,
    old: &Map<String, Value>,
    new: &Map<String, Value>,
) {
    let noun = kind.noun();
    for (name, before) in old {
        let Some(after) = new.get(name) else {
            changes.breaking(format!("{noun} `{name}` was removed (or renamed)"));
            continue;
        };
        let item = format!("{noun} `{name}`");
        compare_required(changes, &item, before, after, SCOPES);
        compare_required(changes, &item, before, after, EXTENSIONS);
        compare_task(changes, &item, before, after);
        match kind {
            Kind::Tool => compare_tool(changes, &item, before, after),
            Kind::Prompt => compare_prompt(changes, &item, before, after),
            Kind::Resource | Kind::Template => compare_resource(changes, &item, before, after),
            Kind::ExtensionMethod => compare_extension_method(changes, &item, before, after),
            Kind::Skill => compare_skill(changes, &item, before, after),
        }
    }
    for name in new.keys().filter(|name| !old.contains_key(*name)) {
        changes.additive(format!("{noun} `{name}` was added"));
    }
}

/// Something an item requires of its callers, listed under `field` (absent
/// when none): a new requirement breaks callers that lack it; a dropped one
/// never does.
struct Required {
    field: &'static str,
    what: &'static str,
    refusal: &'static str,
}

/// OAuth scopes (`scopes = [...]`).
const SCOPES: Required = Required {
    field: "scopes",
    what: "scope",
    refusal: "tokens without it get 403",
};

/// Extensions the client must have negotiated (`requires_extension`).
const EXTENSIONS: Required = Required {
    field: "requiresExtensions",
    what: "extension",
    refusal: "clients without it get -32021",
};

fn compare_required(
    changes: &mut Changes,
    item: &str,
    before: &Value,
    after: &Value,
    required: Required,
) {
    let listed = |value: &Value| -> Vec<String> {
        value
            .get(required.field)
            .and_then(Value::as_array)
            .map(|list| {
                list.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default()
    };
    let (old, new) = (listed(before), listed(after));
    let Required { what, refusal, .. } = required;
    for name in new.iter().filter(|s| !old.contains(s)) {
        changes.breaking(format!("{item}: now needs {what} `{name}` ({refusal})"));
    }
    for name in old.iter().filter(|s| !new.contains(s)) {
        changes.additive(format!("{item}: no longer needs {what} `{name}`"));
    }
}

/// Whether a tool runs as a task (`"task"`: absent, `"optional"` or
/// `"required"`). Any change is breaking: clients with the Tasks extension
/// get a task handle where they got a result (or the reverse), and a tool
/// that now requires it refuses clients without the extension.
fn compare_task(changes: &mut Changes, item: &str, before: &Value, after: &Value) {
    fn mode(value: &Value) -> &str {
        value.get("task").and_then(Value::as_str).unwrap_or("never")
    }
    let (old, new) = (mode(before), mode(after));
    if old != new {
        changes.breaking(format!(
            "{item}: runs as a task `{new}` (was `{old}`): clients with the Tasks extension get a different kind of answer"
        ));
    }
}

/// An extension method's extension, and whether clients must negotiate it.
fn compare_extension_method(changes: &mut Changes, item: &str, before: &Value, after: &Value) {
    let (old, new) = (&before["extension"], &after["extension"]);
    if old != new {
        changes.breaking(format!("{item}: now belongs to {new}, not {old}"));
    }
    let negotiated = |value: &Value| value["requiresNegotiation"].as_bool().unwrap_or(false);
    match (negotiated(before), negotiated(after)) {
        (false, true) => changes.breaking(format!(
            "{item}: now needs its extension negotiated (clients without it get -32021)"
        )),
        (true, false) => changes.additive(format!("{item}: open to every client now")),
        _ => {}
    }
}

/// A skill's frontmatter, field by field, and its files' digests. Neither
/// breaks a client, but a changed file is a new skill to a host: hosts
/// bind a user's approval to the digests, and ask again.
fn compare_skill(changes: &mut Changes, item: &str, before: &Value, after: &Value) {
    let files = |skill: &Value| -> Map<String, Value> {
        let listed = skill["resources"].as_array().map(Vec::as_slice);
        let uri = |file: &Value| file["uri"].as_str().unwrap_or_default().to_owned();
        let digests = listed.unwrap_or_default().iter();
        digests
            .map(|file| (uri(file), file["digest"].clone()))
            .collect()
    };
    let frontmatter = |skill: &Value| {
        skill["frontmatter"]
            .as_object()
            .cloned()
            .unwrap_or_default()
    };
    for (what, old, new) in [
        ("frontmatter", frontmatter(before), frontmatter(after)),
        ("file", files(before), files(after)),
    ] {
        let keys: std::collections::BTreeSet<&String> = old.keys().chain(new.keys()).collect();
        for key in keys {
            let shown = |value: Option<&Value>| value.map_or_else(|| "absent".into(), compact);
            if old.get(key) != new.get(key) {
                changes.additive(format!(
                    "{item}: {what} `{key}`: {} -> {}",
                    shown(old.get(key)),
                    shown(new.get(key))
                ));
            }
        }
    }
}

fn compare_descriptive(changes: &mut Changes, item: &str, before: &Value, after: &Value) {
    // The group only decides which of the application's servers serve the
    // item: a server that no longer serves it shows it as removed.
    for field in DESCRIPTIVE.iter().chain(&["group"]) {
        if before.get(field) != after.get(field) {
            changes.additive(format!("{item}: {field} changed"));
        }
    }
}

fn compare_tool(changes: &mut Changes, item: &str, before: &Value, after: &Value) {
    compare_descriptive(changes, item, before, after);
    compare_arguments(changes, item, &before["inputSchema"], &after["inputSchema"]);
    match (before.get("outputSchema"), after.get("outputSchema")) {
        (None, Some(_)) => changes.additive(format!("{item}: now declares an output schema")),
        (Some(_), None) => changes.breaking(format!("{item}: no longer declares an output schema")),
        (Some(old), Some(new)) => super::output::compare(changes, item, old, new),
        (None, None) => {}
    }
}

/// Arguments of a tool: properties of its input schema.
fn compare_arguments(changes: &mut Changes, item: &str, before: &Value, after: &Value) {
    let properties = |schema: &Value| {
        schema
            .get("properties")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default()
    };
    let required = |schema: &Value, name: &str| {
        schema
            .get("required")
            .and_then(Value::as_array)
            .is_some_and(|r| r.iter().any(|n| n == name))
    };
    let (old, new) = (properties(before), properties(after));
    for (name, old_schema) in &old {
        let Some(new_schema) = new.get(name) else {
            changes.breaking(format!(
                "{item}: argument `{name}` was removed (calls that pass it are now rejected)"
            ));
            continue;
        };
        match (required(before, name), required(after, name)) {
            (false, true) => changes.breaking(format!("{item}: argument `{name}` is now required")),
            (true, false) => changes.additive(format!("{item}: argument `{name}` is now optional")),
            _ => {}
        }
        compare_value_schema(
            changes,
            &format!("{item}: argument `{name}`"),
            old_schema,
            new_schema,
        );
    }
    for name in new.keys().filter(|name| !old.contains_key(*name)) {
        if required(after, name) {
            changes.breaking(format!("{item}: argument `{name}` is new and required"));
        } else {
            changes.additive(format!("{item}: argument `{name}` is new and optional"));
        }
    }
    let rest = |schema: &Value| {
        let mut schema = strip_descriptive(schema);
        if let Some(map) = schema.as_object_mut() {
            map.remove("properties");
            map.remove("required");
        }
        schema
    };
    if rest(before) != rest(after) {
        changes.breaking(format!(
            "{item}: input schema changed outside its properties"
        ));
    }
}

/// One value's schema: the same, only redescribed, widened (accepts more),
/// or changed in a way that can reject what it accepted.
fn compare_value_schema(changes: &mut Changes, what: &str, before: &Value, after: &Value) {
    if before == after {
        return;
    }
    let (old, new) = (strip_descriptive(before), strip_descriptive(after));
    if old == new {
        changes.additive(format!("{what}: description changed"));
    } else if widens(&old, &new) {
        changes.additive(format!("{what}: accepts more values than before"));
    } else {
        changes.breaking(format!(
            "{what}: type narrowed or changed: {} -> {}",
            compact(&old),
            compact(&new)
        ));
    }
}

fn compare_prompt(changes: &mut Changes, item: &str, before: &Value, after: &Value) {
    compare_descriptive(changes, item, before, after);
    let arguments = |prompt: &Value| -> Vec<(String, bool, Value)> {
        prompt
            .get("arguments")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .map(|arg| {
                        let name = arg["name"].as_str().unwrap_or_default().to_owned();
                        (name, arg["required"] == true, arg.clone())
                    })
                    .collect()
            })
            .unwrap_or_default()
    };
    let (old, new) = (arguments(before), arguments(after));
    for (name, was_required, old_arg) in &old {
        let Some((_, is_required, new_arg)) = new.iter().find(|(n, ..)| n == name) else {
            changes.breaking(format!("{item}: argument `{name}` was removed"));
            continue;
        };
        match (was_required, is_required) {
            (false, true) => changes.breaking(format!("{item}: argument `{name}` is now required")),
            (true, false) => changes.additive(format!("{item}: argument `{name}` is now optional")),
            _ if old_arg != new_arg => {
                changes.additive(format!("{item}: argument `{name}` description changed"))
            }
            _ => {}
        }
    }
    for (name, required, _) in new
        .iter()
        .filter(|(n, ..)| !old.iter().any(|(o, ..)| o == n))
    {
        if *required {
            changes.breaking(format!("{item}: argument `{name}` is new and required"));
        } else {
            changes.additive(format!("{item}: argument `{name}` is new and optional"));
        }
    }
}

fn compare_resource(changes: &mut Changes, item: &str, before: &Value, after: &Value) {
    compare_descriptive(changes, item, before, after);
    for field in ["name", "mimeType"] {
        if before.get(field) != after.get(field) {
            changes.breaking(format!(
                "{item}: {field} changed: {} -> {}",
                compact(before.get(field).unwrap_or(&Value::Null)),
                compact(after.get(field).unwrap_or(&Value::Null))
            ));
        }
    }
    let other = |value: &Value| {
        let mut value = strip_descriptive(value);
        if let Some(map) = value.as_object_mut() {
            map.remove("name");
            map.remove("mimeType");
        }
        value
    };
    if other(before) != other(after) {
        changes.additive(format!(
            "{item}: listing details changed (size, annotations)"
        ));
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::contract::Impact;

    fn tool(input: Value) -> Value {
        json!({"tools": {"t": {"description": "d", "inputSchema": input}}})
    }

    fn schema(properties: Value, required: &[&str]) -> Value {
        json!({"type": "object", "properties": properties, "required": required, "additionalProperties": false})
    }

    fn described(changes: &[Difference]) -> Vec<String> {
        changes.iter().map(ToString::to_string).collect()
    }

    #[test]
    fn extension_requirements_and_methods_are_part_of_the_contract() {
        let old = json!({
            "tools": {"t": {}},
            "extensionMethods": {
                "x/a": {"extension": "x/e", "requiresNegotiation": false},
                "x/b": {"extension": "x/e", "requiresNegotiation": true},
                "x/gone": {"extension": "x/e", "requiresNegotiation": true},
            }
        });
        let new = json!({
            "tools": {"t": {"requiresExtensions": ["x/e"]}},
            "extensionMethods": {
                "x/a": {"extension": "x/e", "requiresNegotiation": true, "scopes": ["s"]},
                "x/b": {"extension": "x/f", "requiresNegotiation": false},
                "x/new": {"extension": "x/e", "requiresNegotiation": true},
            }
        });
        assert_eq!(
            described(&compare(&old, &new)),
            [
                "BREAKING  tool `t`: now needs extension `x/e` (clients without it get -32021)",
                "BREAKING  extension method `x/a`: now needs scope `s` (tokens without it get 403)",
                "BREAKING  extension method `x/a`: now needs its extension negotiated (clients without it get -32021)",
                "BREAKING  extension method `x/b`: now belongs to \"x/f\", not \"x/e\"",
                "BREAKING  extension method `x/gone` was removed (or renamed)",
                "additive  extension method `x/b`: open to every client now",
                "additive  extension method `x/new` was added",
            ]
        );
    }

    #[test]
    fn scopes_added_break_and_scopes_removed_do_not() {
        let old = json!({"tools": {"t": {"scopes": ["a", "b"]}}});
        let new = json!({"tools": {"t": {"scopes": ["b", "c"]}}});
        assert_eq!(
            described(&compare(&old, &new)),
            [
                "BREAKING  tool `t`: now needs scope `c` (tokens without it get 403)",
                "additive  tool `t`: no longer needs scope `a`",
            ]
        );
        let unscoped = json!({"tools": {"t": {}}});
        assert_eq!(
            described(&compare(
                &unscoped,
                &json!({"tools": {"t": {"scopes": ["x"]}}})
            )),
            ["BREAKING  tool `t`: now needs scope `x` (tokens without it get 403)"]
        );
    }

    #[test]
    fn a_new_group_is_noted_but_breaks_nobody() {
        let old = json!({"tools": {"t": {}}, "prompts": {"p": {"group": "a"}}});
        let new = json!({"tools": {"t": {"group": "admin"}}, "prompts": {"p": {"group": "a"}}});
        assert_eq!(
            described(&compare(&old, &new)),
            ["additive  tool `t`: group changed"]
        );
    }

    #[test]
    fn any_change_to_task_support_breaks() {
        let never = json!({"tools": {"t": {}}});
        let optional = json!({"tools": {"t": {"task": "optional"}}});
        let required = json!({"tools": {"t": {"task": "required"}}});
        assert_eq!(
            described(&compare(&never, &optional)),
            [
                "BREAKING  tool `t`: runs as a task `optional` (was `never`): clients with the Tasks extension get a different kind of answer"
            ]
        );
        assert_eq!(
            described(&compare(&required, &optional)),
            [
                "BREAKING  tool `t`: runs as a task `optional` (was `required`): clients with the Tasks extension get a different kind of answer"
            ]
        );
        assert!(compare(&required, &required).is_empty());
    }

    #[test]
    fn identical_manifests_have_no_changes() {
        let manifest = tool(schema(json!({"a": {"type": "string"}}), &["a"]));
        assert!(compare(&manifest, &manifest).is_empty());
    }

    #[test]
    fn items_removed_and_added() {
        let old = json!({"tools": {"a": {}, "b": {}}, "prompts": {"p": {}}});
        let new = json!({"tools": {"b": {}, "c": {}}, "resources": {"r://x": {}}});
        assert_eq!(
            described(&compare(&old, &new)),
            [
                "BREAKING  tool `a` was removed (or renamed)",
                "BREAKING  prompt `p` was removed (or renamed)",
                "additive  tool `c` was added",
                "additive  resource `r://x` was added",
            ]
        );
    }

    #[test]
    fn skills_changed_frontmatter_and_files() {
        let skill = |description: &str, files: Value| {
            json!({"skills": {"skill://a/SKILL.md": {
                "frontmatter": {"name": "a", "description": description},
                "resources": files,
            }}})
        };
        let old = skill(
            "Old.",
            json!([{"uri": "skill://a/SKILL.md", "digest": "sha256:1"}, {"uri": "skill://a/x.md", "digest": "sha256:2"}]),
        );
        let new = skill(
            "New.",
            json!([{"uri": "skill://a/SKILL.md", "digest": "sha256:3"}, {"uri": "skill://a/y.md", "digest": "sha256:4"}]),
        );
        assert_eq!(
            described(&compare(&old, &new)),
            [
                "additive  skill `skill://a/SKILL.md`: frontmatter `description`: \"Old.\" -> \"New.\"",
                "additive  skill `skill://a/SKILL.md`: file `skill://a/SKILL.md`: \"sha256:1\" -> \"sha256:3\"",
                "additive  skill `skill://a/SKILL.md`: file `skill://a/x.md`: \"sha256:2\" -> absent",
                "additive  skill `skill://a/SKILL.md`: file `skill://a/y.md`: absent -> \"sha256:4\"",
            ]
        );
        assert_eq!(
            described(&compare(&old, &json!({"skills": {}}))),
            ["BREAKING  skill `skill://a/SKILL.md` was removed (or renamed)"]
        );
    }

    #[test]
    fn arguments_added_removed_and_made_required() {
        let old = tool(schema(
            json!({"a": {"type": "string"}, "b": {"type": "string"}, "c": {"type": "string"}}),
            &["a"],
        ));
        let new = tool(schema(
            json!({"a": {"type": "string"}, "c": {"type": "string"}, "d": {"type": "string"}, "e": {"type": "integer"}}),
            &["c", "d"],
        ));
        assert_eq!(
            described(&compare(&old, &new)),
            [
                "BREAKING  tool `t`: argument `b` was removed (calls that pass it are now rejected)",
                "BREAKING  tool `t`: argument `c` is now required",
                "BREAKING  tool `t`: argument `d` is new and required",
                "additive  tool `t`: argument `a` is now optional",
                "additive  tool `t`: argument `e` is new and optional",
            ]
        );
    }

    #[test]
    fn narrowed_widened_and_redescribed_types() {
        let old = tool(schema(
            json!({
                "n": {"type": "integer", "minimum": 0},
                "s": {"type": "string", "enum": ["a", "b"]},
                "w": {"type": "string", "maxLength": 5},
                "d": {"type": "string", "description": "old"},
                "x": {"type": "string"}
            }),
            &[],
        ));
        let new = tool(schema(
            json!({
                "n": {"type": "integer", "minimum": 1},
                "s": {"type": "string", "enum": ["a", "b", "c"]},
                "w": {"type": "string"},
                "d": {"type": "string", "description": "new"},
                "x": {"type": "integer"}
            }),
            &[],
        ));
        assert_eq!(
            described(&compare(&old, &new)),
            [
                "BREAKING  tool `t`: argument `n`: type narrowed or changed: {\"type\":\"integer\",\"minimum\":0} -> {\"type\":\"integer\",\"minimum\":1}",
                "BREAKING  tool `t`: argument `x`: type narrowed or changed: {\"type\":\"string\"} -> {\"type\":\"integer\"}",
                "additive  tool `t`: argument `s`: accepts more values than before",
                "additive  tool `t`: argument `w`: accepts more values than before",
                "additive  tool `t`: argument `d`: description changed",
            ]
        );
    }

    #[test]
    fn output_schemas_and_descriptions() {
        let old = json!({"tools": {
            "a": {"description": "x", "inputSchema": {}, "outputSchema": {"type": "object", "properties": {"n": {"type": "integer"}}}},
            "b": {"description": "x", "inputSchema": {}},
            "c": {"description": "x", "inputSchema": {}, "outputSchema": {"type": "object"}}
        }});
        let new = json!({"tools": {
            "a": {"description": "y", "inputSchema": {}, "outputSchema": {"type": "object", "properties": {"n": {"type": "string"}}}},
            "b": {"description": "x", "inputSchema": {}, "outputSchema": {"type": "object"}},
            "c": {"description": "x", "inputSchema": {}}
        }});
        assert_eq!(
            described(&compare(&old, &new)),
            [
                "BREAKING  tool `a`: output field `n` changed type (clients that read it may break): {\"type\":\"integer\"} -> {\"type\":\"string\"}",
                "BREAKING  tool `c`: no longer declares an output schema",
                "additive  tool `a`: description changed",
                "additive  tool `b`: now declares an output schema",
            ]
        );
    }

    #[test]
    fn header_mirroring_is_part_of_the_type() {
        let old = tool(schema(json!({"r": {"type": "string"}}), &["r"]));
        let new = tool(schema(
            json!({"r": {"type": "string", "x-mcp-header": "Region"}}),
            &["r"],
        ));
        assert_eq!(compare(&old, &new)[0].impact, Impact::Breaking);
    }

    #[test]
    fn prompts_resources_and_capabilities() {
        let old = json!({
            "capabilities": {"tools": {}, "logging": {}},
            "prompts": {"p": {"arguments": [{"name": "a", "required": true}, {"name": "b"}]}},
            "resources": {"r://1": {"name": "one", "mimeType": "text/plain"}}
        });
        let new = json!({
            "capabilities": {"tools": {}, "prompts": {}},
            "prompts": {"p": {"arguments": [{"name": "a"}, {"name": "c", "required": true}]}},
            "resources": {"r://1": {"name": "one", "mimeType": "text/markdown", "description": "now documented"}}
        });
        assert_eq!(
            described(&compare(&old, &new)),
            [
                "BREAKING  capability `logging` was removed",
                "BREAKING  resource `r://1`: mimeType changed: \"text/plain\" -> \"text/markdown\"",
                "BREAKING  prompt `p`: argument `b` was removed",
                "BREAKING  prompt `p`: argument `c` is new and required",
                "additive  capability `prompts` was added",
                "additive  resource `r://1`: description changed",
                "additive  prompt `p`: argument `a` is now optional",
            ]
        );
    }
}

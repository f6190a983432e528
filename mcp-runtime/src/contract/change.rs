//! What one difference between two contracts is (breaking or additive),
//! and the reading of JSON Schemas that the comparisons of arguments
//! (`diff`) and of outputs (`output`) share.

use std::fmt;

use serde_json::Value;

/// How a change affects existing clients.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Impact {
    /// Existing clients can fail: something they use is gone or stricter.
    Breaking,
    /// Existing clients keep working.
    Additive,
}

/// One difference between the locked and the live contract.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Difference {
    /// Breaking or additive.
    pub impact: Impact,
    /// What changed, e.g. "tool `deploy`: argument `region` is new and required".
    pub description: String,
}

impl fmt::Display for Difference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let label = match self.impact {
            Impact::Breaking => "BREAKING",
            Impact::Additive => "additive",
        };
        write!(f, "{label:<8}  {}", self.description)
    }
}

#[derive(Default)]
pub(super) struct Changes(Vec<Difference>);

impl Changes {
    pub(super) fn breaking(&mut self, description: String) {
        self.0.push(Difference {
            impact: Impact::Breaking,
            description,
        });
    }

    /// Every change, breaking ones first.
    pub(super) fn sorted(self) -> Vec<Difference> {
        let mut changes = self.0;
        changes.sort_by_key(|change| change.impact);
        changes
    }

    pub(super) fn additive(&mut self, description: String) {
        self.0.push(Difference {
            impact: Impact::Additive,
            description,
        });
    }
}

/// Fields that only describe an item: changing them never breaks a client.
pub(super) const DESCRIPTIVE: [&str; 6] = [
    "title",
    "description",
    "annotations",
    "icons",
    "_meta",
    "examples",
];

/// Keywords whose removal only lets more values through.
const CONSTRAINTS: [&str; 10] = [
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "minLength",
    "maxLength",
    "pattern",
    "format",
    "minItems",
    "maxItems",
];

/// Whether `new` accepts everything `old` accepts, judged by the common
/// cases: constraints dropped, enum values added, types added or widened
/// (`integer` to `number`).
pub(super) fn widens(old: &Value, new: &Value) -> bool {
    let (Some(old), Some(new)) = (old.as_object(), new.as_object()) else {
        return false;
    };
    for (key, new_value) in new {
        let Some(old_value) = old.get(key) else {
            return false;
        };
        if old_value == new_value {
            continue;
        }
        let superset = match (old_value, new_value) {
            (Value::Array(o), Value::Array(n)) if key == "enum" || key == "type" => {
                o.iter().all(|v| n.contains(v))
            }
            (Value::String(o), Value::Array(n)) if key == "type" => n
                .iter()
                .any(|t| t == o || (o == "integer" && t == "number")),
            // Every integer is a number.
            (Value::String(o), Value::String(n)) if key == "type" => {
                o == "integer" && n == "number"
            }
            _ => false,
        };
        if !superset {
            return false;
        }
    }
    old.keys()
        .filter(|key| !new.contains_key(*key))
        .all(|key| CONSTRAINTS.contains(&key.as_str()))
}

/// `value` without descriptive keywords, at every level.
pub(super) fn strip_descriptive(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(k, _)| !DESCRIPTIVE.contains(&k.as_str()) && k.as_str() != "default")
                .map(|(k, v)| (k.clone(), strip_descriptive(v)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(strip_descriptive).collect()),
        other => other.clone(),
    }
}

pub(super) fn compact(value: &Value) -> String {
    let text = value.to_string();
    if text.len() > 80 {
        let cut = (0..=77)
            .rev()
            .find(|&i| text.is_char_boundary(i))
            .unwrap_or(0);
        format!("{}...", &text[..cut])
    } else {
        text
    }
}

//! Debug builds only (`debug_assertions` and the `debug-checks` feature):
//! a tool's `structuredContent` is checked against its `outputSchema`
//! before it is sent.
//!
//! The spec says a server MUST send structured results that conform to the
//! tool's output schema, and clients SHOULD validate them. Both come from
//! one Rust type, but from two derives that can disagree (a hand-written
//! `Serialize`, a serde attribute schemars does not read): the check
//! catches that while the server is being written, and costs release
//! builds nothing.

use std::sync::OnceLock;

use serde_json::Value;

/// One tool's output schema, compiled on first use.
#[derive(Debug, Default)]
pub(crate) struct OutputCheck {
    /// `None` when the tool has no output schema (or it does not compile).
    validator: OnceLock<Option<jsonschema::Validator>>,
}

/// Where structured content does not fit its schema: the first problem.
#[derive(Debug)]
pub(crate) struct Mismatch {
    /// JSON pointer into the structured content (`""` for its root).
    pub(crate) path: String,
    /// JSON pointer into the schema, at the keyword that failed.
    pub(crate) schema_path: String,
    /// What is wrong, as the validator says it.
    pub(crate) problem: String,
    /// How many other problems there are.
    pub(crate) more: usize,
}

impl OutputCheck {
    /// Where `value` does not fit the schema `schema` returns (called
    /// once), or `None` when it fits or there is no schema.
    pub(crate) fn mismatch(
        &self,
        schema: impl FnOnce() -> Option<Value>,
        value: &Value,
    ) -> Option<Mismatch> {
        let validator = self.validator.get_or_init(|| compile(schema()?));
        let mut errors = validator.as_ref()?.iter_errors(value);
        let first = errors.next()?;
        Some(Mismatch {
            path: first.instance_path().to_string(),
            schema_path: first.schema_path().to_string(),
            problem: first.to_string(),
            more: errors.count(),
        })
    }
}

/// The published schema, in the dialect the spec gives schemas without
/// `$schema` (2020-12).
fn compile(schema: Value) -> Option<jsonschema::Validator> {
    match jsonschema::draft202012::new(&schema) {
        Ok(validator) => Some(validator),
        Err(error) => {
            tracing::error!(%error, "an outputSchema does not compile; its structured content is not checked");
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_first_problem_is_named_by_its_path() {
        let check = OutputCheck::default();
        let schema = || {
            Some(json!({
                "type": "object",
                "properties": {"count": {"type": "integer"}, "items": {"type": "array", "items": {"type": "string"}}},
                "required": ["count"]
            }))
        };
        assert!(
            check
                .mismatch(schema, &json!({"count": 3, "items": ["a"]}))
                .is_none()
        );
        let mismatch = check
            .mismatch(schema, &json!({"count": "three", "items": ["a", 2]}))
            .unwrap();
        assert_eq!(mismatch.path, "/count");
        assert_eq!(mismatch.schema_path, "/properties/count/type");
        assert_eq!(mismatch.problem, r#""three" is not of type "integer""#);
        assert_eq!(mismatch.more, 1);
    }

    #[test]
    fn no_schema_checks_nothing() {
        let check = OutputCheck::default();
        assert!(check.mismatch(|| None, &json!("anything")).is_none());
        // The schema is asked for once.
        assert!(check.mismatch(|| unreachable!(), &json!(1)).is_none());
    }
}

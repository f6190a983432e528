//! What an extension method answers. Here, below the extension API, so
//! that middleware can name it without depending on extensions.

use serde_json::Value;

use super::JsonObject;

/// What an extension method answers: a `resultType` and the result's
/// members. The runtime adds `_meta` with the server's identity, as for
/// every result.
#[derive(Clone, Debug, PartialEq)]
pub struct MethodResult {
    pub(crate) result_type: String,
    pub(crate) members: Members,
}

/// A result's members: a JSON value, or (the runtime's own extensions)
/// text written beforehand, so that a large stored result is copied
/// rather than parsed and written again.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Members {
    Value(Value),
    /// A JSON object's text without `resultType` and `_meta`, and the
    /// entries of the result's `_meta`.
    Written {
        object: String,
        meta: Option<JsonObject>,
    },
}

impl MethodResult {
    /// A final result (`resultType: "complete"`) with `members`, which must
    /// serialize to a JSON object.
    pub fn complete(members: impl serde::Serialize) -> Self {
        MethodResult::of_type("complete", members)
    }

    /// A result whose `resultType` is the extension's own (such as
    /// `"task"`), with `members`, which must serialize to a JSON object.
    pub fn of_type(result_type: impl Into<String>, members: impl serde::Serialize) -> Self {
        MethodResult {
            result_type: result_type.into(),
            members: Members::Value(
                crate::protocol::finite::to_value(&members)
                    .unwrap_or_else(|error| Value::String(error.to_string())),
            ),
        }
    }

    /// A final result whose members are written already: `object` is a
    /// JSON object's text without `resultType` and `_meta` (checked only
    /// for its braces), `meta` the entries of its `_meta`.
    pub(crate) fn written(object: String, meta: Option<JsonObject>) -> Self {
        MethodResult {
            result_type: crate::protocol::result::COMPLETE.to_owned(),
            members: Members::Written { object, meta },
        }
    }

    /// The `resultType`.
    pub fn result_type(&self) -> &str {
        &self.result_type
    }

    /// The members, when they are an object (anything else is answered
    /// with an internal error).
    pub(crate) fn object(&self) -> Option<&JsonObject> {
        match &self.members {
            Members::Value(members) => members.as_object(),
            Members::Written { .. } => None,
        }
    }
}

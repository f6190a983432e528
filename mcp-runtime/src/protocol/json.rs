//! Reading JSON the client sent into typed values, with an error that
//! names the first value that does not fit (a model can fix its call from
//! `` `items[1]`: missing field `name` ``).

use std::fmt;

use serde::Deserialize;

/// Arguments that do not fit the tool's input schema. The dispatcher turns
/// this into a tool execution error (`isError: true`) so the model can fix
/// its call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArgumentError {
    path: String,
    message: String,
}

impl ArgumentError {
    /// An error at `path` (`""` for the arguments object itself).
    pub(crate) fn new(path: impl Into<String>, message: impl Into<String>) -> Self {
        ArgumentError {
            path: path.into(),
            message: message.into(),
        }
    }

    /// The location of the bad value (`.` for the arguments object itself).
    pub fn path(&self) -> &str {
        &self.path
    }
}

impl fmt::Display for ArgumentError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() || self.path == "." {
            f.write_str(&self.message)
        } else {
            write!(f, "`{}`: {}", self.path, self.message)
        }
    }
}

impl std::error::Error for ArgumentError {}

/// Deserializes JSON text (tool arguments, a method's params), reporting
/// the path of the first bad value.
pub fn parse_arguments<'de, T: Deserialize<'de>>(json: &'de str) -> Result<T, ArgumentError> {
    serde_json::from_str(json).or_else(|_| {
        // Only failed calls pay for path tracking.
        let deserializer = &mut serde_json::Deserializer::from_str(json);
        serde_path_to_error::deserialize(deserializer).map_err(|e| ArgumentError {
            path: e.path().to_string(),
            message: without_position(&e.inner().to_string()).to_owned(),
        })
    })
}

/// serde_json appends " at line L column C", which means nothing to a model
/// that sent a JSON object inside a larger request.
fn without_position(message: &str) -> &str {
    match message.rfind(" at line ") {
        Some(i) if message[i..].contains(" column ") => &message[..i],
        _ => message,
    }
}

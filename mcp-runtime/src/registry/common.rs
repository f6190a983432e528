//! Pieces shared by every kind of registered handler.

use std::fmt;

use crate::protocol::{Icon, IconTheme, JsonObject, Role};

/// Where a handler was defined, for startup diagnostics.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Location {
    /// Source file, as `file!()` reports it.
    pub file: &'static str,
    /// Line of the function's name.
    pub line: u32,
    /// The module it is defined in, as `module_path!()` reports it
    /// (servers select items by module: [`Items::module`](crate::Items::module)).
    pub module: &'static str,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.file, self.line)
    }
}

/// An icon written in an attribute; turned into [`Icon`] at startup.
#[derive(Debug)]
pub struct StaticIcon {
    /// `https:` or `data:` URI (checked at compile time).
    pub src: &'static str,
    /// MIME type override.
    pub mime_type: Option<&'static str>,
    /// Sizes such as `48x48`.
    pub sizes: &'static [&'static str],
    /// Intended background.
    pub theme: Option<IconTheme>,
}

impl StaticIcon {
    fn to_icon(&self) -> Icon {
        let mut icon = Icon::new(self.src);
        icon.mime_type = self.mime_type.map(str::to_owned);
        icon.sizes = self.sizes.iter().map(|s| (*s).to_owned()).collect();
        icon.theme = self.theme;
        icon
    }
}

/// Content annotations written in an attribute.
#[derive(Debug, Default)]
pub struct StaticAnnotations {
    /// `audience = ["user", "assistant"]`.
    pub audience: &'static [Role],
    /// `priority = 0.5`.
    pub priority: Option<f64>,
    /// `last_modified = "2025-01-12T15:00:58Z"`.
    pub last_modified: Option<&'static str>,
}

impl StaticAnnotations {
    pub(crate) fn to_annotations(&self) -> Option<crate::protocol::Annotations> {
        if self.audience.is_empty() && self.priority.is_none() && self.last_modified.is_none() {
            return None;
        }
        Some(crate::protocol::Annotations {
            audience: (!self.audience.is_empty()).then(|| self.audience.to_vec()),
            priority: self.priority,
            last_modified: self.last_modified.map(str::to_owned),
        })
    }
}

pub(crate) fn icons(icons: &[StaticIcon]) -> Vec<Icon> {
    icons.iter().map(StaticIcon::to_icon).collect()
}

/// Parses `_meta` JSON that the macro already validated at compile time.
pub(crate) fn parse_static_meta(json: &'static str) -> JsonObject {
    serde_json::from_str(json).unwrap_or_default()
}

/// Reports the first pair of neighbours (in key order) sharing a key.
pub(crate) fn check_unique<T>(
    kind: &'static str,
    sorted: &[T],
    key: impl Fn(&T) -> (&'static str, Location),
) -> Result<(), super::BuildError> {
    for pair in sorted.windows(2) {
        let (a, first) = key(&pair[0]);
        let (b, second) = key(&pair[1]);
        if a == b {
            return Err(super::BuildError::Duplicate {
                kind,
                name: a.to_owned(),
                first,
                second,
            });
        }
    }
    Ok(())
}

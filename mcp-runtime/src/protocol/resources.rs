//! `resources/list`, `resources/templates/list` and `resources/read` shapes.

use serde::{Deserialize, Serialize};

use super::JsonObject;
use super::content::{Annotations, ResourceContents};
use super::meta::Icon;

/// A resource template as listed by `resources/templates/list`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ResourceTemplate {
    /// An RFC 6570 URI template.
    pub uri_template: String,
    /// Programmatic name.
    pub name: String,
    /// Display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the resources are.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// MIME type of every matching resource, if they share one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Icons.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub icons: Vec<Icon>,
    /// Audience, priority and modification time hints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Template metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

/// The contents `resources/read` returns.
#[derive(Clone, Debug, PartialEq, Default, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ReadResourceResult {
    /// One or more contents (several when a read returns, say, a directory).
    pub contents: Vec<ResourceContents>,
}

impl ReadResourceResult {
    /// A result with the given contents.
    pub fn new(contents: impl IntoIterator<Item = ResourceContents>) -> Self {
        ReadResourceResult {
            contents: contents.into_iter().collect(),
        }
    }
}

//! Content blocks shared by tool results, prompts and resources.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use serde::{Deserialize, Serialize};

use super::JsonObject;
use super::meta::Icon;

/// Who a piece of content is meant for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The human user.
    User,
    /// The model.
    Assistant,
}

/// Hints about how content is meant to be used or displayed.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Annotations {
    /// Intended audience.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub audience: Option<Vec<Role>>,
    /// Importance from 0 (optional) to 1 (required).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority: Option<f64>,
    /// ISO 8601 time of the last modification.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_modified: Option<String>,
}

impl Annotations {
    /// No hints yet; add them with the methods below.
    pub fn new() -> Self {
        Annotations::default()
    }

    /// Who the content is for: `[Role::User]`, `[Role::Assistant]` or both.
    #[must_use]
    pub fn audience(mut self, audience: impl IntoIterator<Item = Role>) -> Self {
        self.audience = Some(audience.into_iter().collect());
        self
    }

    /// How important it is, from 0 (entirely optional) to 1 (effectively
    /// required). The schema allows nothing else: a value outside is
    /// clamped into the range, and NaN leaves the priority out.
    #[must_use]
    pub fn priority(mut self, priority: f64) -> Self {
        self.priority = (!priority.is_nan()).then(|| priority.clamp(0.0, 1.0));
        self
    }

    /// When it was last modified, as an ISO 8601 string
    /// (`"2025-01-12T15:00:58Z"`).
    #[must_use]
    pub fn last_modified(mut self, timestamp: impl Into<String>) -> Self {
        self.last_modified = Some(timestamp.into());
        self
    }

    /// When it was last modified (a file's `modified()` time, say),
    /// written as RFC 3339 in UTC, the ISO 8601 profile the spec's
    /// examples use.
    #[must_use]
    pub fn last_modified_at(self, time: std::time::SystemTime) -> Self {
        let time = time::OffsetDateTime::from(time);
        let text = time
            .format(&time::format_description::well_known::Rfc3339)
            .unwrap_or_default();
        self.last_modified(text)
    }
}

/// Text content.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct TextContent {
    /// The text.
    pub text: String,
    /// Optional annotations.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Optional metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

/// Image content, base64-encoded.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ImageContent {
    /// Base64 data.
    pub data: String,
    /// MIME type, e.g. `image/png`.
    pub mime_type: String,
    /// Optional annotations.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Optional metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

/// Audio content, base64-encoded.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct AudioContent {
    /// Base64 data.
    pub data: String,
    /// MIME type, e.g. `audio/wav`.
    pub mime_type: String,
    /// Optional annotations.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Optional metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

/// A resource: as listed by `resources/list`, and as a link in content
/// ([`Content::ResourceLink`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Resource {
    /// The resource URI.
    pub uri: String,
    /// Programmatic name.
    pub name: String,
    /// Display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the resource is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// MIME type, if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Size in bytes, if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    /// Icons.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub icons: Vec<Icon>,
    /// Audience, priority and modification time hints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Resource metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

impl Resource {
    /// The resource at `uri`, named `name`.
    pub fn new(uri: impl Into<String>, name: impl Into<String>) -> Self {
        Resource {
            uri: uri.into(),
            name: name.into(),
            title: None,
            description: None,
            mime_type: None,
            size: None,
            icons: Vec::new(),
            annotations: None,
            meta: None,
        }
    }

    /// A human-readable name for display.
    #[must_use]
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// What the resource is.
    #[must_use]
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// Its MIME type.
    #[must_use]
    pub fn mime_type(mut self, mime_type: impl Into<String>) -> Self {
        self.mime_type = Some(mime_type.into());
        self
    }

    /// Its size in bytes.
    #[must_use]
    pub fn size(mut self, bytes: u64) -> Self {
        self.size = Some(bytes);
        self
    }

    /// Adds an icon.
    #[must_use]
    pub fn icon(mut self, icon: Icon) -> Self {
        self.icons.push(icon);
        self
    }

    /// Audience, priority and modification time hints.
    #[must_use]
    pub fn annotations(mut self, annotations: Annotations) -> Self {
        self.annotations = Some(annotations);
        self
    }

    /// Its `_meta`.
    #[must_use]
    pub fn meta(mut self, meta: JsonObject) -> Self {
        self.meta = Some(meta);
        self
    }
}

/// Text contents of a resource.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct TextResourceContents {
    /// The resource URI.
    pub uri: String,
    /// MIME type, if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// The text.
    pub text: String,
    /// Optional metadata (for example provenance).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

/// Binary contents of a resource, base64-encoded.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct BlobResourceContents {
    /// The resource URI.
    pub uri: String,
    /// MIME type, if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Base64 data.
    pub blob: String,
    /// Optional metadata (for example provenance).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

/// The contents of a resource: text or binary.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
#[non_exhaustive]
pub enum ResourceContents {
    /// Text contents.
    Text(TextResourceContents),
    /// Binary contents.
    Blob(BlobResourceContents),
}

impl ResourceContents {
    /// Text contents of `uri`.
    pub fn text(uri: impl Into<String>, text: impl Into<String>) -> Self {
        ResourceContents::Text(TextResourceContents {
            uri: uri.into(),
            mime_type: None,
            text: text.into(),
            meta: None,
        })
    }

    /// Binary contents of `uri`; the bytes are base64-encoded here.
    pub fn blob(uri: impl Into<String>, bytes: impl AsRef<[u8]>) -> Self {
        ResourceContents::Blob(BlobResourceContents {
            uri: uri.into(),
            mime_type: None,
            blob: BASE64.encode(bytes),
            meta: None,
        })
    }

    /// Sets the MIME type.
    #[must_use]
    pub fn with_mime_type(mut self, mime_type: impl Into<String>) -> Self {
        let mime = Some(mime_type.into());
        match &mut self {
            ResourceContents::Text(t) => t.mime_type = mime,
            ResourceContents::Blob(b) => b.mime_type = mime,
        }
        self
    }

    /// Replaces the contents' `_meta`.
    #[must_use]
    pub fn with_meta(mut self, meta: JsonObject) -> Self {
        *self.meta_mut() = Some(meta);
        self
    }

    /// Records where the data came from, under [`PROVENANCE_META_KEY`] in
    /// `_meta`, so clients can tell fetched or user-supplied text from the
    /// server's own words. Resource text is data, never instructions.
    #[must_use]
    pub fn with_provenance(mut self, provenance: Provenance) -> Self {
        let value = serde_json::to_value(provenance).expect("provenance serializes");
        self.meta_mut()
            .get_or_insert_with(JsonObject::new)
            .insert(PROVENANCE_META_KEY.to_owned(), value);
        self
    }

    fn meta_mut(&mut self) -> &mut Option<JsonObject> {
        match self {
            ResourceContents::Text(t) => &mut t.meta,
            ResourceContents::Blob(b) => &mut b.meta,
        }
    }

    /// The resource URI.
    pub fn uri(&self) -> &str {
        match self {
            ResourceContents::Text(t) => &t.uri,
            ResourceContents::Blob(b) => &b.uri,
        }
    }
}

/// The `_meta` key under which [`ResourceContents::with_provenance`] records
/// where contents came from.
pub const PROVENANCE_META_KEY: &str = "rs.mcp-runtime/provenance";

/// Where resource contents came from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Provenance {
    /// The origin: a URL, a file path, "user upload", a database table.
    pub source: String,
    /// When the data was retrieved (ISO 8601), if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retrieved_at: Option<String>,
    /// Whether the data is authored by a party the server trusts; `false`
    /// marks third-party or user-supplied text.
    pub trusted: bool,
}

impl Provenance {
    /// Data from `source`, not vouched for by the server.
    pub fn untrusted(source: impl Into<String>) -> Self {
        Provenance {
            source: source.into(),
            retrieved_at: None,
            trusted: false,
        }
    }

    /// Data from `source` that the server vouches for.
    pub fn trusted(source: impl Into<String>) -> Self {
        Provenance {
            trusted: true,
            ..Provenance::untrusted(source)
        }
    }

    /// Sets when the data was retrieved.
    #[must_use]
    pub fn retrieved_at(mut self, time: impl Into<String>) -> Self {
        self.retrieved_at = Some(time.into());
        self
    }
}

/// An embedded resource.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct EmbeddedResource {
    /// The resource contents.
    pub resource: ResourceContents,
    /// Optional annotations.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Optional metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

/// One block of content in a tool result or prompt message.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Content {
    /// Text.
    Text(TextContent),
    /// An image.
    Image(ImageContent),
    /// Audio.
    Audio(AudioContent),
    /// A link to a resource.
    ResourceLink(Resource),
    /// An embedded resource.
    Resource(EmbeddedResource),
}

impl Content {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        Content::Text(TextContent {
            text: text.into(),
            annotations: None,
            meta: None,
        })
    }

    /// An image block from raw bytes (base64-encoded here).
    pub fn image(bytes: impl AsRef<[u8]>, mime_type: impl Into<String>) -> Self {
        Self::image_base64(BASE64.encode(bytes), mime_type)
    }

    /// An image block from data that is already base64-encoded.
    pub fn image_base64(data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        Content::Image(ImageContent {
            data: data.into(),
            mime_type: mime_type.into(),
            annotations: None,
            meta: None,
        })
    }

    /// An audio block from raw bytes (base64-encoded here).
    pub fn audio(bytes: impl AsRef<[u8]>, mime_type: impl Into<String>) -> Self {
        Self::audio_base64(BASE64.encode(bytes), mime_type)
    }

    /// An audio block from data that is already base64-encoded.
    pub fn audio_base64(data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        Content::Audio(AudioContent {
            data: data.into(),
            mime_type: mime_type.into(),
            annotations: None,
            meta: None,
        })
    }

    /// A link to the resource `uri` named `name`; [`Content::link`] takes
    /// a [`Resource`] with its title, description, MIME type and size.
    pub fn resource_link(uri: impl Into<String>, name: impl Into<String>) -> Self {
        Content::ResourceLink(Resource::new(uri, name))
    }

    /// A link to `resource`.
    pub fn link(resource: Resource) -> Self {
        Content::ResourceLink(resource)
    }

    /// An embedded resource.
    pub fn resource(contents: ResourceContents) -> Self {
        Content::Resource(EmbeddedResource {
            resource: contents,
            annotations: None,
            meta: None,
        })
    }

    /// Attaches annotations to this block.
    #[must_use]
    pub fn with_annotations(mut self, annotations: Annotations) -> Self {
        let slot = match &mut self {
            Content::Text(c) => &mut c.annotations,
            Content::Image(c) => &mut c.annotations,
            Content::Audio(c) => &mut c.annotations,
            Content::ResourceLink(c) => &mut c.annotations,
            Content::Resource(c) => &mut c.annotations,
        };
        *slot = Some(annotations);
        self
    }

    /// Sets this block's `_meta` (for a resource link, the resource's).
    #[must_use]
    pub fn with_meta(mut self, meta: JsonObject) -> Self {
        let slot = match &mut self {
            Content::Text(c) => &mut c.meta,
            Content::Image(c) => &mut c.meta,
            Content::Audio(c) => &mut c.meta,
            Content::ResourceLink(c) => &mut c.meta,
            Content::Resource(c) => &mut c.meta,
        };
        *slot = Some(meta);
        self
    }

    /// The text of a text block.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            Content::Text(t) => Some(&t.text),
            _ => None,
        }
    }
}

impl From<String> for Content {
    fn from(text: String) -> Self {
        Content::text(text)
    }
}

impl From<&str> for Content {
    fn from(text: &str) -> Self {
        Content::text(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn content_serializes_with_type_tags() {
        assert_eq!(
            serde_json::to_value(Content::text("hi")).unwrap(),
            json!({"type": "text", "text": "hi"})
        );
        assert_eq!(
            serde_json::to_value(Content::image([1u8, 2, 3], "image/png")).unwrap(),
            json!({"type": "image", "data": "AQID", "mimeType": "image/png"})
        );
        assert_eq!(
            serde_json::to_value(Content::resource(
                ResourceContents::text("test://x", "body").with_mime_type("text/plain")
            ))
            .unwrap(),
            json!({"type": "resource", "resource": {"uri": "test://x", "mimeType": "text/plain", "text": "body"}})
        );
        assert_eq!(
            serde_json::to_value(Content::resource_link("file:///a", "a")).unwrap(),
            json!({"type": "resource_link", "uri": "file:///a", "name": "a"})
        );
    }
}

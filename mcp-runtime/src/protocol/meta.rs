//! Per-request `_meta` fields and the small shared types they carry.

use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::JsonObject;
use super::jsonrpc::RequestId;

/// `_meta` key carrying the request's protocol version.
pub(crate) const PROTOCOL_VERSION_KEY: &str = "io.modelcontextprotocol/protocolVersion";
/// `_meta` key carrying the client's capabilities for this request.
pub(crate) const CLIENT_CAPABILITIES_KEY: &str = "io.modelcontextprotocol/clientCapabilities";
/// Result `_meta` key identifying the server.
pub(crate) const SERVER_INFO_KEY: &str = "io.modelcontextprotocol/serverInfo";

/// Name and version of an MCP implementation (client or server).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Implementation {
    /// Programmatic name.
    pub name: String,
    /// Version string.
    pub version: String,
    /// Human-readable name for display.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What this implementation does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Icons for display.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub icons: Vec<Icon>,
    /// Project website.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub website_url: Option<String>,
}

impl Implementation {
    /// An implementation with just a name and a version.
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        Implementation {
            name: name.into(),
            version: version.into(),
            title: None,
            description: None,
            icons: Vec::new(),
            website_url: None,
        }
    }
}

/// The background an icon is designed for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum IconTheme {
    /// Designed for a light background.
    Light,
    /// Designed for a dark background.
    Dark,
}

/// An icon for display in a user interface.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Icon {
    /// An `https:` or `data:` URI.
    pub src: String,
    /// MIME type override.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Sizes such as `48x48` or `any`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sizes: Vec<String>,
    /// Intended background.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub theme: Option<IconTheme>,
}

impl Icon {
    /// An icon with only a source URI.
    pub fn new(src: impl Into<String>) -> Self {
        Icon {
            src: src.into(),
            mime_type: None,
            sizes: Vec::new(),
            theme: None,
        }
    }

    /// Its MIME type, when the URI does not say.
    #[must_use]
    pub fn mime_type(mut self, mime_type: impl Into<String>) -> Self {
        self.mime_type = Some(mime_type.into());
        self
    }

    /// The sizes it fits, such as `48x48` or `any`.
    #[must_use]
    pub fn sizes<S: Into<String>>(mut self, sizes: impl IntoIterator<Item = S>) -> Self {
        self.sizes = sizes.into_iter().map(Into::into).collect();
        self
    }

    /// The background it is designed for.
    #[must_use]
    pub fn theme(mut self, theme: IconTheme) -> Self {
        self.theme = Some(theme);
        self
    }
}

/// Syslog severities used by `notifications/message`, least severe first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LogLevel {
    /// Detailed debugging information.
    Debug,
    /// General informational messages.
    Info,
    /// Normal but significant events.
    Notice,
    /// Warning conditions.
    Warning,
    /// Error conditions.
    Error,
    /// Critical conditions.
    Critical,
    /// Action must be taken immediately.
    Alert,
    /// The system is unusable.
    Emergency,
}

impl fmt::Display for LogLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = match self {
            LogLevel::Debug => "debug",
            LogLevel::Info => "info",
            LogLevel::Notice => "notice",
            LogLevel::Warning => "warning",
            LogLevel::Error => "error",
            LogLevel::Critical => "critical",
            LogLevel::Alert => "alert",
            LogLevel::Emergency => "emergency",
        };
        f.write_str(name)
    }
}

/// A progress token chosen by the client: a string or an integer.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ProgressToken(pub RequestId);

/// The client's elicitation support.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ElicitationCapability {
    /// Present when form-mode elicitation is supported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub form: Option<JsonObject>,
    /// Present when URL-mode elicitation is supported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<JsonObject>,
}

/// The client's sampling support.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SamplingCapability {
    /// Present when `includeContext` is supported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<JsonObject>,
    /// Present when tool use in sampling is supported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<JsonObject>,
}

/// What the client declared it supports, for this request only.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ClientCapabilities {
    /// Elicitation support.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elicitation: Option<ElicitationCapability>,
    /// Sampling support.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sampling: Option<SamplingCapability>,
    /// Roots support.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub roots: Option<JsonObject>,
    /// Extensions, keyed by extension identifier.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extensions: Option<JsonObject>,
    /// Experimental, non-standard capabilities.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub experimental: Option<JsonObject>,
}

impl ClientCapabilities {
    /// Whether form-mode elicitation is supported. An empty `elicitation: {}`
    /// means form mode, as the spec says.
    pub fn supports_elicitation_form(&self) -> bool {
        self.elicitation
            .as_ref()
            .is_some_and(|e| e.form.is_some() || e.url.is_none())
    }

    /// Whether URL-mode elicitation is supported.
    pub fn supports_elicitation_url(&self) -> bool {
        self.elicitation.as_ref().is_some_and(|e| e.url.is_some())
    }

    /// Whether sampling is supported.
    pub fn supports_sampling(&self) -> bool {
        self.sampling.is_some()
    }

    /// Whether roots are supported.
    pub fn supports_roots(&self) -> bool {
        self.roots.is_some()
    }

    /// Whether the named extension is declared (with its settings object,
    /// as the spec has it: `{}` when it has none).
    pub fn supports_extension(&self, id: &str) -> bool {
        self.extensions
            .as_ref()
            .and_then(|extensions| extensions.get(id))
            .is_some_and(serde_json::Value::is_object)
    }
}

/// The per-request metadata every modern request carries in `params._meta`.
///
/// The client's identity and capabilities sit behind pointers: this struct
/// moves with every request, and they are most of its size (the
/// capabilities are shared with the request's [`Input`](crate::Input)).
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct RequestMeta {
    /// `io.modelcontextprotocol/protocolVersion`.
    pub protocol_version: String,
    /// `io.modelcontextprotocol/clientInfo`, when sent.
    pub client_info: Option<Box<Implementation>>,
    /// `io.modelcontextprotocol/clientCapabilities`.
    pub client_capabilities: Arc<ClientCapabilities>,
    /// `io.modelcontextprotocol/logLevel`: log notifications are sent only
    /// when this is present, and only at or above it.
    pub log_level: Option<LogLevel>,
    /// `progressToken`: progress notifications are sent only when present.
    pub progress_token: Option<ProgressToken>,
    /// W3C `traceparent`, when present.
    pub traceparent: Option<String>,
    /// W3C `tracestate`, when present.
    pub tracestate: Option<String>,
    /// W3C `baggage`, when present.
    pub baggage: Option<String>,
}

impl RequestMeta {
    /// Metadata for the current protocol version with the given capabilities.
    pub fn new(client_capabilities: ClientCapabilities) -> Self {
        RequestMeta {
            protocol_version: super::PROTOCOL_VERSION.to_owned(),
            client_info: None,
            client_capabilities: Arc::new(client_capabilities),
            log_level: None,
            progress_token: None,
            traceparent: None,
            tracestate: None,
            baggage: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn caps(json: &str) -> ClientCapabilities {
        serde_json::from_str(json).unwrap()
    }

    #[test]
    fn empty_elicitation_means_form() {
        assert!(caps(r#"{"elicitation":{}}"#).supports_elicitation_form());
        assert!(!caps(r#"{"elicitation":{"url":{}}}"#).supports_elicitation_form());
        assert!(caps(r#"{"elicitation":{"url":{},"form":{}}}"#).supports_elicitation_form());
        assert!(caps(r#"{"elicitation":{"url":{}}}"#).supports_elicitation_url());
        assert!(!caps("{}").supports_elicitation_form());
    }

    #[test]
    fn log_levels_order_by_severity() {
        assert!(LogLevel::Debug < LogLevel::Info);
        assert!(LogLevel::Warning < LogLevel::Error);
        assert!(LogLevel::Alert < LogLevel::Emergency);
        assert_eq!(
            serde_json::from_str::<LogLevel>("\"notice\"").unwrap(),
            LogLevel::Notice
        );
    }
}

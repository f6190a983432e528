//! `tools/list` and `tools/call` shapes.

use serde::{Deserialize, Serialize, Serializer};
use serde_json::Value;
use serde_json::value::RawValue;

use super::JsonObject;
use super::content::Content;
use super::meta::{Icon, SERVER_INFO_KEY};
use super::result::{COMPLETE, ResultMeta};

/// Behaviour hints for a tool. All are hints, not guarantees.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ToolAnnotations {
    /// A human-readable title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The tool does not modify its environment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_only_hint: Option<bool>,
    /// The tool may perform destructive updates.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub destructive_hint: Option<bool>,
    /// Repeating a call with the same arguments has no further effect.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idempotent_hint: Option<bool>,
    /// The tool interacts with an open world of external entities.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_world_hint: Option<bool>,
}

impl ToolAnnotations {
    /// No hints yet (the spec's defaults apply); add them below.
    pub fn new() -> Self {
        ToolAnnotations::default()
    }

    /// A human-readable title.
    #[must_use]
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// Whether the tool does not modify its environment.
    #[must_use]
    pub fn read_only(mut self, read_only: bool) -> Self {
        self.read_only_hint = Some(read_only);
        self
    }

    /// Whether it may perform destructive updates.
    #[must_use]
    pub fn destructive(mut self, destructive: bool) -> Self {
        self.destructive_hint = Some(destructive);
        self
    }

    /// Whether repeating a call with the same arguments has no further
    /// effect.
    #[must_use]
    pub fn idempotent(mut self, idempotent: bool) -> Self {
        self.idempotent_hint = Some(idempotent);
        self
    }

    /// Whether it interacts with an open world of external entities.
    #[must_use]
    pub fn open_world(mut self, open_world: bool) -> Self {
        self.open_world_hint = Some(open_world);
        self
    }

    pub(crate) fn is_empty(&self) -> bool {
        *self == ToolAnnotations::default()
    }
}

/// A tool as listed by `tools/list`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Tool {
    /// Unique name.
    pub name: String,
    /// Display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the tool does, for the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// JSON Schema of the arguments object.
    pub input_schema: JsonObject,
    /// JSON Schema of `structuredContent`, when the tool returns some.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<JsonObject>,
    /// Behaviour hints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<ToolAnnotations>,
    /// Icons.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub icons: Vec<Icon>,
    /// Tool metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

/// The result of `tools/call`.
///
/// A tool that fails in a way the model can act on returns a result with
/// `is_error` set (see [`CallToolResult::error`]) rather than a JSON-RPC error.
#[derive(Clone, Debug, PartialEq, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct CallToolResult {
    /// Unstructured content blocks.
    pub content: Vec<Content>,
    /// Structured result, conforming to the tool's output schema.
    #[serde(default)]
    pub structured_content: Option<Value>,
    /// Whether the call ended in a tool execution error.
    #[serde(default)]
    pub is_error: bool,
    /// Result metadata.
    #[serde(rename = "_meta", default)]
    pub meta: Option<JsonObject>,
}

impl CallToolResult {
    /// A successful result with the given content.
    pub fn success(content: impl IntoIterator<Item = Content>) -> Self {
        CallToolResult {
            content: content.into_iter().collect(),
            ..CallToolResult::default()
        }
    }

    /// A tool execution error whose text the model can read and act on.
    pub fn error(message: impl Into<String>) -> Self {
        CallToolResult {
            content: vec![Content::text(message)],
            is_error: true,
            ..CallToolResult::default()
        }
    }

    /// Sets `structuredContent`.
    #[must_use]
    pub fn with_structured_content(mut self, value: Value) -> Self {
        self.structured_content = Some(value);
        self
    }

    /// Sets result `_meta`.
    #[must_use]
    pub fn with_meta(mut self, meta: JsonObject) -> Self {
        self.meta = Some(meta);
        self
    }

    /// The concatenated text of all text blocks.
    pub fn text(&self) -> String {
        self.content.iter().filter_map(Content::as_text).collect()
    }

    pub(crate) fn wire<'a>(&'a self, server_info: Option<&'a RawValue>) -> impl Serialize + 'a {
        #[derive(Serialize)]
        #[serde(rename_all = "camelCase")]
        struct Wire<'a> {
            result_type: &'static str,
            content: &'a [Content],
            #[serde(skip_serializing_if = "Option::is_none")]
            structured_content: Option<&'a Value>,
            #[serde(skip_serializing_if = "std::ops::Not::not")]
            is_error: bool,
            #[serde(rename = "_meta", skip_serializing_if = "ResultMeta::is_empty")]
            meta: ResultMeta<'a>,
        }
        Wire {
            result_type: COMPLETE,
            content: &self.content,
            structured_content: self.structured_content.as_ref(),
            is_error: self.is_error,
            meta: ResultMeta {
                server_info,
                extra: self.meta.as_ref(),
            },
        }
    }
}

impl CallToolResult {
    /// Writes [`wire`](Self::wire)'s JSON for the commonest result, text
    /// blocks only with no annotations, metadata or structured content, the
    /// same bytes the derived serialization writes; `false` (nothing
    /// written) for any other. The derived path (an internally tagged enum,
    /// through the float check) cost more than the rest of a small call.
    pub(crate) fn write_text_only(
        &self,
        out: &mut Vec<u8>,
        server_info: Option<&RawValue>,
    ) -> bool {
        fn plain(content: &Content) -> Option<&str> {
            match content {
                Content::Text(text) if text.annotations.is_none() && text.meta.is_none() => {
                    Some(&text.text)
                }
                _ => None,
            }
        }
        let extra_meta = self.meta.as_ref().is_some_and(|meta| !meta.is_empty());
        if self.structured_content.is_some()
            || extra_meta
            || !self.content.iter().all(|c| plain(c).is_some())
        {
            return false;
        }
        out.extend_from_slice(br#"{"resultType":""#);
        out.extend_from_slice(COMPLETE.as_bytes());
        out.extend_from_slice(br#"","content":["#);
        for (at, text) in self.content.iter().filter_map(plain).enumerate() {
            if at > 0 {
                out.push(b',');
            }
            out.extend_from_slice(br#"{"type":"text","text":"#);
            // A `str` always serializes (escaped as the derive escapes it).
            let _ = serde_json::to_writer(&mut *out, text);
            out.push(b'}');
        }
        out.push(b']');
        if self.is_error {
            out.extend_from_slice(br#","isError":true"#);
        }
        if let Some(info) = server_info {
            out.extend_from_slice(br#","_meta":{""#);
            out.extend_from_slice(SERVER_INFO_KEY.as_bytes());
            out.extend_from_slice(br#"":"#);
            out.extend_from_slice(info.get().as_bytes());
            out.push(b'}');
        }
        out.push(b'}');
        true
    }
}

impl Serialize for CallToolResult {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.wire(None).serialize(serializer)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn text_only_results_are_written_as_the_derive_writes_them() {
        let info = serde_json::value::to_raw_value(&json!({"name": "s", "version": "1"})).unwrap();
        let mut empty_meta = CallToolResult::success([Content::text("m")]);
        empty_meta.meta = Some(JsonObject::new());
        let results = [
            CallToolResult::success([Content::text("hello")]),
            CallToolResult::success([]),
            CallToolResult::success([Content::text("a\"b\\c\n\u{1}é"), Content::text("")]),
            CallToolResult::error("no such file"),
            empty_meta,
        ];
        for result in &results {
            for server_info in [None, Some(&*info)] {
                let mut fast = Vec::new();
                assert!(result.write_text_only(&mut fast, server_info));
                let derived =
                    serde_json::to_vec(&crate::protocol::finite::Finite(&result.wire(server_info)))
                        .unwrap();
                assert_eq!(
                    String::from_utf8(fast).unwrap(),
                    String::from_utf8(derived).unwrap()
                );
            }
        }
        let mut structured = CallToolResult::success([Content::text("3")]);
        structured.structured_content = Some(json!({"sum": 3}));
        let mut with_meta = CallToolResult::success([Content::text("x")]);
        with_meta.meta = Some(JsonObject::from_iter([("k".to_owned(), json!(1))]));
        let image = CallToolResult::success([Content::image("AAAA", "image/png")]);
        for result in [structured, with_meta, image] {
            let mut out = Vec::new();
            assert!(!result.write_text_only(&mut out, Some(&*info)));
            assert!(out.is_empty());
        }
    }

    #[test]
    fn call_tool_result_matches_spec_example() {
        let example: Value = serde_json::from_str(include_str!(
            "../../../spec/2026-07-28/examples/CallToolResult/invalid-tool-input-error.json"
        ))
        .unwrap();
        let ours = CallToolResult::error(
            "Invalid departure date: must be in the future. Current date is 08/08/2025.",
        );
        assert_eq!(serde_json::to_value(&ours).unwrap(), example);
        let back: CallToolResult = serde_json::from_value(example).unwrap();
        assert_eq!(back, ours);
    }

    #[test]
    fn structured_result_serializes_in_spec_shape() {
        let r = CallToolResult::success([Content::text("3")])
            .with_structured_content(json!({"sum": 3}));
        assert_eq!(
            serde_json::to_value(&r).unwrap(),
            json!({"resultType": "complete", "content": [{"type": "text", "text": "3"}], "structuredContent": {"sum": 3}})
        );
    }
}

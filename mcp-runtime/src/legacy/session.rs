//! What one legacy handshake negotiated, and what the client may change
//! afterwards (its log level and resource subscriptions).

use std::collections::HashSet;
use std::sync::Mutex;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use crate::protocol::LogLevel;
use crate::protocol::meta::{CLIENT_CAPABILITIES_KEY, PROTOCOL_VERSION_KEY};
use crate::protocol::{ErrorObject, PROTOCOL_VERSION};

/// `_meta` key of the client's identity in a modern request.
const CLIENT_INFO_KEY: &str = "io.modelcontextprotocol/clientInfo";
/// `_meta` key of the requested log level in a modern request.
const LOG_LEVEL_KEY: &str = "io.modelcontextprotocol/logLevel";

/// The fixed outcome of an `initialize`: it never changes for the life of
/// the connection (stdio) or session (HTTP), so on HTTP it can travel in
/// the sealed session id.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct Negotiated {
    /// The legacy protocol version agreed on.
    #[serde(rename = "v")]
    pub(crate) version: String,
    /// The client's capabilities, as it declared them.
    #[serde(rename = "c")]
    pub(crate) capabilities: Map<String, Value>,
    /// The client's `name` and `version`, when it sent them.
    #[serde(rename = "i", default, skip_serializing_if = "Option::is_none")]
    pub(crate) client_info: Option<ClientInfo>,
}

/// The part of the legacy `clientInfo` a modern request can carry.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct ClientInfo {
    pub(crate) name: String,
    pub(crate) version: String,
}

/// The `initialize` request's params.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct InitializeParams {
    protocol_version: String,
    #[serde(default)]
    capabilities: Option<Map<String, Value>>,
    #[serde(default)]
    client_info: Option<Value>,
}

impl Negotiated {
    /// Reads an `initialize` request's params and picks the version.
    pub(crate) fn from_initialize(params: Option<&Value>) -> Result<Negotiated, ErrorObject> {
        let params: InitializeParams = params
            .cloned()
            .ok_or("missing params")
            .and_then(|p| serde_json::from_value(p).map_err(|_| "bad params"))
            .map_err(|_| {
                ErrorObject::invalid_params(
                    "Invalid params: initialize needs `protocolVersion` (a string) and `capabilities` (an object)",
                )
            })?;
        let client_info = params
            .client_info
            .and_then(|info| serde_json::from_value::<ClientInfo>(info).ok());
        Ok(Negotiated {
            version: super::negotiate(&params.protocol_version).to_owned(),
            capabilities: params.capabilities.unwrap_or_default(),
            client_info,
        })
    }

    /// The client's capabilities in modern terms. The shapes are the same,
    /// except that an empty legacy `elicitation` object means form mode,
    /// and that the Tasks extension is left out: it is a 2026 wire
    /// (`tasks/get` polling, `resultType: "task"`), which clients of the
    /// initialize handshake do not speak, so task tools run synchronously
    /// for them.
    fn modern_capabilities(&self) -> Value {
        let mut capabilities = self.capabilities.clone();
        if let Some(Value::Object(extensions)) = capabilities.get_mut("extensions") {
            extensions.remove(crate::tasks::EXTENSION_ID);
        }
        if let Some(Value::Object(elicitation)) = capabilities.get_mut("elicitation")
            && elicitation.is_empty()
        {
            elicitation.insert("form".into(), json!({}));
        }
        Value::Object(capabilities)
    }

    /// Writes the modern `_meta` this session implies into `params`,
    /// keeping what the client put there (such as `progressToken`).
    pub(crate) fn fill_meta(&self, params: &mut Map<String, Value>, log_level: Option<LogLevel>) {
        let meta = params
            .entry("_meta")
            .and_modify(|meta| {
                if !meta.is_object() {
                    *meta = json!({});
                }
            })
            .or_insert_with(|| json!({}));
        let Value::Object(meta) = meta else {
            return;
        };
        meta.insert(PROTOCOL_VERSION_KEY.into(), PROTOCOL_VERSION.into());
        meta.insert(CLIENT_CAPABILITIES_KEY.into(), self.modern_capabilities());
        match &self.client_info {
            Some(info) => meta.insert(CLIENT_INFO_KEY.into(), json!(info)),
            None => meta.remove(CLIENT_INFO_KEY),
        };
        match log_level {
            Some(level) => meta.insert(LOG_LEVEL_KEY.into(), json!(level)),
            None => meta.remove(LOG_LEVEL_KEY),
        };
    }
}

/// What a legacy client may change during its session.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Live {
    /// Set by `logging/setLevel`; until then handlers' log messages are not
    /// sent.
    pub log_level: Option<LogLevel>,
    /// URIs from `resources/subscribe`.
    pub subscriptions: HashSet<String>,
}

/// A session's live part, shared by its requests and its notification
/// stream.
pub(crate) type SharedLive = std::sync::Arc<Mutex<Live>>;

/// Locks a session's live part; a panic elsewhere cannot poison it for good.
pub(crate) fn lock(live: &Mutex<Live>) -> std::sync::MutexGuard<'_, Live> {
    live.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handshake_params_are_read_and_meta_is_synthesized() {
        let negotiated = Negotiated::from_initialize(Some(&json!({
            "protocolVersion": "2025-06-18",
            "capabilities": {"elicitation": {}, "sampling": {}},
            "clientInfo": {"name": "c", "version": "1"}
        })))
        .unwrap();
        assert_eq!(negotiated.version, "2025-06-18");
        let mut params = Map::new();
        params.insert("_meta".into(), json!({"progressToken": 7}));
        negotiated.fill_meta(&mut params, Some(LogLevel::Debug));
        assert_eq!(
            params["_meta"],
            json!({
                "progressToken": 7,
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}, "sampling": {}},
                "io.modelcontextprotocol/clientInfo": {"name": "c", "version": "1"},
                "io.modelcontextprotocol/logLevel": "debug"
            })
        );
        assert_eq!(
            Negotiated::from_initialize(Some(&json!({"capabilities": {}})))
                .unwrap_err()
                .code,
            -32602
        );
    }
}

//! `server/discover`: a static answer, serialized once.

use bytes::Bytes;
use serde::Serialize;
use serde_json::value::RawValue;

use super::extensions::Extensions;
use super::subscriptions::Offered;
use super::{SUPPORTED_VERSIONS, Settings};
use crate::protocol::result::{COMPLETE, ResultMeta};
use crate::protocol::{CacheScope, JsonObject, ListChangedCapability, ServerCapabilities};
use crate::registry::Registry;

/// `(has, offered, can_log)`: the kinds the server serves (static or
/// runtime), the notifications it offers, whether handlers can log.
pub(crate) type Offers = (Offered, Offered, bool);

/// The capabilities this server actually backs.
pub(crate) fn capabilities(
    registry: &Registry,
    extensions: &Extensions,
    (has, offered, can_log): Offers,
) -> ServerCapabilities {
    let list_changed = |on: bool| ListChangedCapability {
        list_changed: on.then_some(true),
    };
    let mut capabilities = ServerCapabilities::default();
    if has.tools {
        capabilities.tools = Some(list_changed(offered.tools));
    }
    if has.resources {
        let mut resources = JsonObject::new();
        if offered.resources {
            resources.insert("listChanged".into(), true.into());
        }
        if offered.resource_updates {
            resources.insert("subscribe".into(), true.into());
        }
        capabilities.resources = Some(resources);
    }
    if has.prompts {
        capabilities.prompts = Some(list_changed(offered.prompts));
    }
    if registry.has_completers() {
        capabilities.completions = Some(JsonObject::new());
    }
    if can_log {
        capabilities.logging = Some(JsonObject::new());
    }
    capabilities.extensions = extensions.advertised().cloned();
    capabilities
}

pub(super) fn build(
    registry: &Registry,
    extensions: &Extensions,
    settings: &Settings,
    offers: Offers,
    server_info: Option<&RawValue>,
) -> Bytes {
    #[derive(Serialize)]
    #[serde(rename_all = "camelCase")]
    struct Discover<'a> {
        result_type: &'static str,
        supported_versions: &'static [&'static str],
        capabilities: ServerCapabilities,
        #[serde(skip_serializing_if = "Option::is_none")]
        instructions: Option<&'a str>,
        ttl_ms: u64,
        cache_scope: CacheScope,
        #[serde(rename = "_meta", skip_serializing_if = "ResultMeta::is_empty")]
        meta: ResultMeta<'a>,
    }
    let discover = Discover {
        result_type: COMPLETE,
        supported_versions: SUPPORTED_VERSIONS,
        capabilities: capabilities(registry, extensions, offers),
        instructions: settings.instructions.as_deref(),
        ttl_ms: settings.discover_cache.ttl_ms,
        cache_scope: settings.discover_cache.scope,
        meta: ResultMeta {
            server_info,
            extra: None,
        },
    };
    Bytes::from(serde_json::to_vec(&discover).expect("discover serializes"))
}

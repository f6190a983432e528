//! `resources/list`, `resources/templates/list` and `resources/read`.

use std::sync::Arc;

use bytes::Bytes;
use serde::ser::{SerializeMap, Serializer};
use serde::{Deserialize, Serialize};

use super::Dispatcher;
use super::guard::Handler;
use super::mrtr::{self, Rounds, Target};
use super::page::Listing;
use crate::context::{Context, Scope};
use crate::mrtr::state::StatePolicy;
use crate::mrtr::{Input, run_round};
use crate::protocol::CacheHint;
use crate::protocol::finite::Finite;
use crate::protocol::result::{COMPLETE, ResultMeta};
use crate::protocol::{ErrorObject, ReadResourceResult, ResourceContents};
use crate::registry::{ResourceEntry, ResourceRef};
use crate::resource::{ReadError, ResourceFuture, ResourceInvocation};
use crate::uri_template;

/// `resources/list`: the static resources.
pub(super) struct Resources;

impl Listing for Resources {
    const KIND: &'static str = "resources";
    const KEY: &'static str = "resources";
    type Item = ResourceEntry;
    fn name(resource: &ResourceEntry) -> &str {
        resource.uri
    }
    fn show(resource: &ResourceEntry) -> impl Serialize + '_ {
        resource.to_resource()
    }
}

/// `resources/templates/list`.
pub(super) struct Templates;

impl Listing for Templates {
    const KIND: &'static str = "templates";
    const KEY: &'static str = "resourceTemplates";
    type Item = ResourceEntry;
    fn name(template: &ResourceEntry) -> &str {
        template.uri
    }
    fn show(template: &ResourceEntry) -> impl Serialize + '_ {
        template.to_template()
    }
}

#[derive(Deserialize)]
struct ReadParams {
    uri: String,
}

/// `-32602` with `data.uri`: the spec's "resource not found" (not `-32002`).
pub(crate) fn not_found(uri: &str) -> ErrorObject {
    ErrorObject::invalid_params(format!("Resource not found: {uri}"))
        .with_data(serde_json::json!({ "uri": uri }))
}

pub(super) async fn read(
    dispatcher: &Arc<Dispatcher>,
    params: &str,
    scope: Scope,
) -> Result<Bytes, ErrorObject> {
    let ReadParams { uri } = super::params(params)?;
    let retry = mrtr::read_retry(params)?;
    let target = Target {
        method: "resources/read",
        name: &uri,
        arguments: "{}",
    };
    let (rounds, input) = match Rounds::start(
        &dispatcher.sealer,
        target,
        retry,
        &scope,
        StatePolicy::LENIENT,
    )?
    .ready()
    {
        Ok(ready) => ready,
        Err(claiming) => claiming.await?,
    };
    let context = Context::new(scope, input.clone());
    if let Some(layered) = dispatcher.layered_resource(&uri) {
        // Boxed, tail and all: this future's state stays as it is without
        // layers (it is boxed for every read).
        let read = layered.resource(dispatcher, &uri, context);
        let uri = &uri;
        return Box::pin(async move { answer(dispatcher, uri, rounds, &input, read.await?) }).await;
    }
    let Some((served, read)) = read_contents(dispatcher, &uri, context, &input).await? else {
        return rounds.stopped(&input, dispatcher.server_info.as_deref());
    };
    let read = resolved(dispatcher, &uri, &served, read)?;
    answer(dispatcher, &uri, rounds, &input, Some(read))
}

/// The read's answer: `read`, or the next round's questions when the
/// handler suspended (`None`).
fn answer(
    dispatcher: &Dispatcher,
    uri: &str,
    rounds: Rounds<'_>,
    input: &Input,
    read: Option<ReadResourceResult>,
) -> Result<Bytes, ErrorObject> {
    let server_info = dispatcher.server_info.as_deref();
    let Some(read) = read else {
        return rounds.stopped(input, server_info);
    };
    let settings = &dispatcher.settings;
    let result = ReadResult {
        contents: &read.contents,
        cache: read.cache_or(settings.read_cache),
        meta: ResultMeta {
            server_info,
            extra: read.meta.as_ref(),
        },
    };
    Ok(Bytes::from(serde_json::to_vec(&Finite(&result)).map_err(
        |error| {
            tracing::error!(%error, uri, "resource contents failed to serialize");
            ErrorObject::internal_error()
        },
    )?))
}

/// What a read produced: what served it and the result, or `None` when
/// the handler suspended on an unanswered ask.
type Read = Option<(ResourceRef, ReadResourceResult)>;

/// Reads `uri` and completes the result with what serves it: the declared
/// MIME type and caching hints; `None` when the handler suspended.
pub(super) async fn read_resolved(
    dispatcher: &Dispatcher,
    uri: &str,
    context: Context,
    input: &Input,
) -> Result<Option<ReadResourceResult>, ErrorObject> {
    match read_contents(dispatcher, uri, context, input).await? {
        None => Ok(None),
        Some((served, read)) => resolved(dispatcher, uri, &served, read).map(Some),
    }
}

/// `read` completed with what serves it: the declared MIME type and
/// caching hints, checked for size.
fn resolved(
    dispatcher: &Dispatcher,
    uri: &str,
    served: &ResourceRef,
    mut read: ReadResourceResult,
) -> Result<ReadResourceResult, ErrorObject> {
    if read.contents.is_empty() {
        return Err(not_found(uri));
    }
    for item in &mut read.contents {
        fill_mime_type(item, uri, served.mime_type());
    }
    let settings = &dispatcher.settings;
    check_contents(served.name(), &read.contents, settings.max_resource_bytes)?;
    // This read's own hints win over the resource's declared ones.
    if let Some(declared) = served.cache() {
        read.ttl_ms.get_or_insert(declared.ttl_ms);
        read.cache_scope.get_or_insert(declared.scope);
    }
    Ok(read)
}

/// The URI or template of what serves `uri` first (what its layers are
/// found by), if anything static does.
pub(super) fn serving<'a>(dispatcher: &'a Dispatcher, uri: &'a str) -> Option<&'a str> {
    let registry = &dispatcher.registry;
    if let Some(entry) = registry.resource(uri) {
        return Some(entry.uri);
    }
    if let Some(runtime) = dispatcher.runtime.items.as_ref()
        && runtime.resource(uri).is_some()
    {
        return Some(uri);
    }
    let mut templates = registry.templates().iter();
    templates
        .find(|(_, parts)| uri_template::match_uri(parts, uri).is_some())
        .map(|(entry, _)| entry.uri)
}

/// Finds what serves `uri` (static resources first, then runtime ones, then
/// templates from the most specific) and reads it.
async fn read_contents(
    dispatcher: &Dispatcher,
    uri: &str,
    context: Context,
    input: &Input,
) -> Result<Read, ErrorObject> {
    let registry = &dispatcher.registry;
    let statics = registry
        .resource(uri)
        .map(|e| ResourceRef::Static(e, Vec::new()));
    let runtime = dispatcher
        .runtime
        .items
        .as_ref()
        .and_then(|r| r.resource(uri));
    let templates = registry.templates().iter().filter_map(|(entry, parts)| {
        uri_template::match_uri(parts, uri).map(|variables| ResourceRef::Static(entry, variables))
    });
    let candidates = statics
        .into_iter()
        .chain(runtime.map(ResourceRef::Runtime))
        .chain(templates);
    for served in candidates {
        let handler = Handler {
            kind: "resource",
            name: served.name(),
        };
        handler.needs(served.requires(), &context)?;
        let Some(future) = handler.start(|| start(&served, uri, context.clone()))? else {
            // A variable did not parse into its parameter type.
            continue;
        };
        let Some(read) = run_round(input, handler.finish(future)).await else {
            return Ok(None);
        };
        return match read? {
            Ok(contents) => Ok(Some((served, contents))),
            Err(ReadError::NotFound) => Err(not_found(uri)),
            Err(ReadError::Invalid(message)) => Err(ErrorObject::invalid_params(format!(
                "Invalid resource URI {uri}: {message}"
            ))
            .with_data(serde_json::json!({ "uri": uri }))),
            Err(ReadError::Failed(message)) => Err(ErrorObject::new(
                crate::protocol::error_code::INTERNAL_ERROR,
                format!("Failed to read resource {uri}: {message}"),
            )),
        };
    }
    Err(unknown_query_keys(dispatcher, uri).unwrap_or_else(|| not_found(uri)))
}

/// `-32602` naming the query keys that kept `uri` from the most specific
/// template it would otherwise match (see `uri_template::match_uri` for
/// why such a key is not ignored).
fn unknown_query_keys(dispatcher: &Dispatcher, uri: &str) -> Option<ErrorObject> {
    let mut templates = dispatcher.registry.templates().iter();
    let (entry, unknown, parts) = templates.find_map(|(entry, parts)| {
        uri_template::unknown_query_keys(parts, uri).map(|unknown| (entry, unknown, parts))
    })?;
    let quoted = |names: Vec<&str>| {
        let quoted: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
        quoted.join(", ")
    };
    let plural = if unknown.len() == 1 { "" } else { "s" };
    let message = format!(
        "Invalid resource URI {uri}: unknown query parameter{plural} {}; the template {} takes {}",
        quoted(unknown.iter().map(String::as_str).collect()),
        entry.uri,
        quoted(uri_template::query_names(parts).collect()),
    );
    Some(ErrorObject::invalid_params(message).with_data(serde_json::json!({ "uri": uri })))
}

/// Starts the read; `None` when a template variable does not parse into its
/// parameter type (the URI does not match after all).
fn start(served: &ResourceRef, uri: &str, context: Context) -> Option<ResourceFuture> {
    match served {
        ResourceRef::Static(entry, variables) => (entry.read)(ResourceInvocation {
            uri,
            variables,
            context,
        }),
        ResourceRef::Runtime(entry) => Some((entry.read)(uri, context)),
    }
}

/// Contents of the URI that was read inherit the resource's declared type.
fn fill_mime_type(item: &mut ResourceContents, uri: &str, declared: Option<&str>) {
    let (item_uri, mime) = match item {
        ResourceContents::Text(t) => (&t.uri, &mut t.mime_type),
        ResourceContents::Blob(b) => (&b.uri, &mut b.mime_type),
    };
    if mime.is_none() && item_uri == uri {
        *mime = declared.map(str::to_owned);
    }
}

/// Contents must say what they are truthfully and fit the size limit; a
/// handler that breaks this gets an error rather than sending it on.
fn check_contents(
    name: &str,
    contents: &[ResourceContents],
    limit: usize,
) -> Result<(), ErrorObject> {
    let failed = |message: String| {
        tracing::error!(resource = name, %message, "refusing to send resource contents");
        Err(ErrorObject::new(
            crate::protocol::error_code::INTERNAL_ERROR,
            message,
        ))
    };
    let mut total = 0usize;
    for item in contents {
        let (mime, size) = match item {
            ResourceContents::Text(t) => (&t.mime_type, t.text.len()),
            ResourceContents::Blob(b) => (&b.mime_type, b.blob.len()),
        };
        if let Some(mime) = mime.as_deref().filter(|m| m.parse::<mime::Mime>().is_err()) {
            return failed(format!(
                "resource {} declares an invalid MIME type `{mime}`",
                item.uri()
            ));
        }
        total = total.saturating_add(size);
    }
    if total > limit {
        return failed(format!(
            "the contents of {} are {total} bytes, over this server's {limit}-byte limit for resources/read",
            contents[0].uri()
        ));
    }
    Ok(())
}

struct ReadResult<'a> {
    contents: &'a [ResourceContents],
    cache: CacheHint,
    meta: ResultMeta<'a>,
}

impl Serialize for ReadResult<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("resultType", COMPLETE)?;
        map.serialize_entry("contents", self.contents)?;
        map.serialize_entry("ttlMs", &self.cache.ttl_ms)?;
        map.serialize_entry("cacheScope", &self.cache.scope)?;
        if !self.meta.is_empty() {
            map.serialize_entry("_meta", &self.meta)?;
        }
        map.end()
    }
}

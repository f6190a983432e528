//! The dispatcher's side of extensions: their entries in `server/discover`,
//! their methods by name, the negotiation they require, and calling them.

use std::collections::HashMap;
use std::sync::Arc;

use bytes::Bytes;
use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::Dispatcher;
use super::envelope::Request;
use super::guard::Handler;
use crate::context::{Context, Scope};
use crate::extension::{
    self, Catalog, Extension, ExtensionMethod, LINKED_EXTENSIONS, MethodResult,
};
use crate::middleware::{Item, ItemKind};
use crate::mrtr::Input;
use crate::protocol::finite::Finite;
use crate::protocol::method::{CLIENT_METHODS, Method, REMOVED};
use crate::protocol::result::ResultMeta;
use crate::protocol::{ClientCapabilities, ErrorObject, JsonObject};
use crate::registry::{BuildError, Registry};

/// One method an extension serves, with the extension it belongs to.
#[derive(Debug)]
pub(crate) struct Served {
    /// The extension's identifier.
    pub(crate) extension: Arc<str>,
    /// The method's name, shared with the contexts of its calls.
    pub(crate) name: Arc<String>,
    pub(crate) method: ExtensionMethod,
}

impl Served {
    /// `-32021` when the method needs the extension and the client did not
    /// negotiate it on this request.
    pub(crate) fn check_negotiated(&self, client: &ClientCapabilities) -> Result<(), ErrorObject> {
        if self.method.needs_negotiation {
            return require_extension(&self.extension, client);
        }
        Ok(())
    }
}

/// `-32021` naming `id` unless the client declared that extension.
pub(crate) fn require_extension(id: &str, client: &ClientCapabilities) -> Result<(), ErrorObject> {
    if client.supports_extension(id) {
        return Ok(());
    }
    let mut extensions = Map::new();
    extensions.insert(id.to_owned(), Value::Object(Map::new()));
    let mut required = Map::new();
    required.insert("extensions".to_owned(), Value::Object(extensions));
    Err(ErrorObject::missing_capability(Value::Object(required)))
}

/// The server's extensions, checked when it is built.
#[derive(Debug, Default)]
pub(crate) struct Extensions {
    /// `capabilities.extensions` as `server/discover` advertises it.
    advertised: JsonObject,
    methods: HashMap<Box<str>, Arc<Served>>,
}

impl Extensions {
    /// Checks the extensions (identifiers, settings, method names, what
    /// tools require, each extension's own checks over the catalog) and
    /// indexes their methods. The linked extensions follow the builder's,
    /// each unless the builder has one with its identifier.
    pub(crate) fn build(list: Vec<Extension>, registry: &Registry) -> Result<Self, BuildError> {
        let mut extensions = Extensions::default();
        let mut checks = Vec::new();
        let list = with_linked(list);
        for extension in list {
            let id = &extension.id;
            checks.extend(
                extension
                    .checks
                    .iter()
                    .map(|check| (id.clone(), check.clone())),
            );
            extensions.add(extension)?;
        }
        let catalog = Catalog::new(registry);
        for (id, check) in checks {
            check(&catalog)
                .map_err(|problem| BuildError::Extension(format!("`{id}`: {problem}")))?;
        }
        for tool in registry.tools().iter().filter_map(|tool| tool.entry()) {
            for id in tool.extensions {
                if !extensions.advertised.contains_key(*id) {
                    return Err(BuildError::Extension(format!(
                        "tool `{}` (at {}) requires extension `{id}`, which this server does not offer; \
                         add it with `ServerBuilder::with(extension)`",
                        tool.name, tool.location
                    )));
                }
            }
        }
        Ok(extensions)
    }

    fn add(&mut self, extension: Extension) -> Result<(), BuildError> {
        let Extension {
            id,
            settings,
            methods,
            checks: _,
        } = extension;
        check_id(&id).map_err(|problem| {
            BuildError::Extension(format!("`{id}` is not an extension identifier: {problem}"))
        })?;
        let Value::Object(settings) = settings else {
            return Err(BuildError::Extension(format!(
                "the settings of `{id}` must be a JSON object"
            )));
        };
        if self
            .advertised
            .insert(id.clone(), Value::Object(settings))
            .is_some()
        {
            return Err(BuildError::Extension(format!("`{id}` is added twice")));
        }
        let extension: Arc<str> = id.into();
        for method in methods {
            self.add_method(&extension, method)?;
        }
        Ok(())
    }

    fn add_method(
        &mut self,
        extension: &Arc<str>,
        method: ExtensionMethod,
    ) -> Result<(), BuildError> {
        let name = method.name.as_str();
        check_method_name(name).map_err(|problem| {
            BuildError::Extension(format!("method `{name}` of `{extension}`: {problem}"))
        })?;
        if let Some(other) = self.methods.get(name) {
            return Err(BuildError::Extension(format!(
                "method `{name}` is served by both `{}` and `{extension}`",
                other.extension
            )));
        }
        let served = Served {
            extension: extension.clone(),
            name: Arc::new(method.name.clone()),
            method,
        };
        self.methods
            .insert(served.method.name.as_str().into(), Arc::new(served));
        Ok(())
    }

    /// The method called `name`, if an extension serves it.
    pub(crate) fn method(&self, name: &str) -> Option<&Arc<Served>> {
        self.methods.get(name)
    }

    /// `capabilities.extensions`, when there are any.
    pub(crate) fn advertised(&self) -> Option<&JsonObject> {
        Some(&self.advertised).filter(|advertised| !advertised.is_empty())
    }

    /// Every method, in no particular order.
    pub(crate) fn methods(&self) -> Vec<&Served> {
        self.methods.values().map(|served| &**served).collect()
    }

    /// Every scope the extensions' methods declare.
    pub(crate) fn scopes(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.methods
            .values()
            .flat_map(|served| served.method.scopes.iter().copied())
    }
}

/// The builder's extensions, then each linked one (once) whose identifier
/// the builder's do not have.
fn with_linked(mut list: Vec<Extension>) -> Vec<Extension> {
    for make in LINKED_EXTENSIONS {
        let linked = make();
        if !list.iter().any(|extension| extension.id == linked.id) {
            list.push(linked);
        }
    }
    list
}

/// `{vendor-prefix}/{name}`: dot-separated labels that start with a letter
/// and end with a letter or digit (letters, digits and hyphens between),
/// then a name that begins and ends with a letter or digit (letters,
/// digits, `-`, `_` and `.` between), as the spec's `_meta` key rules say.
pub(crate) fn check_id(id: &str) -> Result<(), String> {
    let Some((prefix, name)) = id.split_once('/') else {
        return Err("it needs a vendor prefix: `com.example/name`".into());
    };
    for label in prefix.split('.') {
        let bytes = label.as_bytes();
        let starts = bytes.first().is_some_and(u8::is_ascii_alphabetic);
        let ends = bytes.last().is_some_and(u8::is_ascii_alphanumeric);
        let inside = bytes
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || *b == b'-');
        if !(starts && ends && inside) {
            return Err(format!(
                "the prefix label `{label}` must start with a letter, end with a letter or digit and hold only letters, digits and `-`"
            ));
        }
    }
    let bytes = name.as_bytes();
    let ends = bytes.first().zip(bytes.last());
    let inside = bytes
        .iter()
        .all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(b));
    if !ends.is_some_and(|(a, z)| a.is_ascii_alphanumeric() && z.is_ascii_alphanumeric()) || !inside
    {
        return Err(format!(
            "the name `{name}` must begin and end with a letter or digit and hold only letters, digits, `-`, `_` and `.`"
        ));
    }
    Ok(())
}

/// A method name an extension may serve: visible, not a notification, and
/// not a method of the core protocol.
fn check_method_name(name: &str) -> Result<(), String> {
    if name.is_empty() || !name.bytes().all(|b| b.is_ascii_graphic()) {
        return Err("a method name is visible ASCII without spaces".into());
    }
    if name.starts_with("notifications/") {
        return Err("`notifications/` names are notifications, not methods".into());
    }
    if Method::ALL.iter().any(|core| core.name() == name) {
        return Err("the core protocol defines this method".into());
    }
    if REMOVED.contains(&name) {
        return Err(
            "earlier revisions define this method (the legacy adapter serves it to their clients)"
                .into(),
        );
    }
    if CLIENT_METHODS.contains(&name) {
        return Err("clients serve this method, not servers".into());
    }
    Ok(())
}

/// Calls an extension method: its params (without `_meta`) and a context
/// like a tool's; its result with `resultType` and the server's identity.
pub(super) async fn call(
    dispatcher: &Arc<Dispatcher>,
    served: &Arc<Served>,
    request: &Request,
    scope: Scope,
) -> Result<Bytes, ErrorObject> {
    let mut params = match request.params().map(serde_json::from_str::<Value>) {
        None | Some(Ok(Value::Null)) => Map::new(),
        Some(Ok(Value::Object(params))) => params,
        Some(_) => {
            return Err(ErrorObject::invalid_params(
                "Invalid params: `params` must be a JSON object",
            ));
        }
    };
    params.remove("_meta");
    let name = served.method.name.as_str();
    let context = Context::new(scope, Input::default());
    let layered = dispatcher.layered(ItemKind::Method, name, || Item::new(ItemKind::Method, name));
    let result = match layered {
        None => run_method(served, params, context).await?,
        Some(layered) => Box::pin(layered.method(served, &params, context)).await?,
    };
    write_result(&result, dispatcher.server_info.as_deref()).ok_or_else(|| {
        tracing::error!(
            method = name,
            "an extension method's result members are not a JSON object"
        );
        ErrorObject::internal_error()
    })
}

/// Runs the method's handler with `params`.
pub(super) async fn run_method(
    served: &Served,
    params: Map<String, Value>,
    context: Context,
) -> Result<MethodResult, ErrorObject> {
    let handler = Handler {
        kind: "extension method",
        name: served.method.name.as_str(),
    };
    let future = handler.start(|| (served.method.handler)(params, context))?;
    handler.finish(future).await?
}

/// `{"resultType": ..., members..., "_meta": {serverInfo, members' _meta}}`.
fn write_result(result: &MethodResult, server_info: Option<&RawValue>) -> Option<Bytes> {
    if let extension::Members::Written { object, meta } = &result.members {
        return splice(&result.result_type, object, meta.as_ref(), server_info);
    }
    #[derive(Serialize)]
    struct Written<'a> {
        #[serde(rename = "resultType")]
        result_type: &'a str,
        #[serde(flatten)]
        members: Members<'a>,
        #[serde(rename = "_meta", skip_serializing_if = "ResultMeta::is_empty")]
        meta: ResultMeta<'a>,
    }
    /// The members but `resultType` and `_meta`, which the runtime writes.
    struct Members<'a>(&'a JsonObject);
    impl Serialize for Members<'_> {
        fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
            serializer.collect_map(
                self.0
                    .iter()
                    .filter(|(key, _)| !matches!(key.as_str(), "resultType" | "_meta")),
            )
        }
    }
    let members = result.object()?;
    let extra = match members.get("_meta") {
        Some(Value::Object(meta)) => Some(meta),
        _ => None,
    };
    let written = Written {
        result_type: &result.result_type,
        members: Members(members),
        meta: ResultMeta { server_info, extra },
    };
    serde_json::to_vec(&Finite(&written)).ok().map(Bytes::from)
}

/// `{"resultType": ..., <object's members>, "_meta": {...}}` from members
/// written beforehand (an object's text without those two keys).
fn splice(
    result_type: &str,
    object: &str,
    meta: Option<&JsonObject>,
    server_info: Option<&RawValue>,
) -> Option<Bytes> {
    let inner = object.strip_prefix('{')?.strip_suffix('}')?.trim();
    let meta = ResultMeta {
        server_info,
        extra: meta,
    };
    let mut out = Vec::with_capacity(object.len() + 128);
    out.extend_from_slice(b"{\"resultType\":");
    serde_json::to_writer(&mut out, result_type).ok()?;
    if !inner.is_empty() {
        out.push(b',');
        out.extend_from_slice(inner.as_bytes());
    }
    if !meta.is_empty() {
        out.extend_from_slice(b",\"_meta\":");
        serde_json::to_writer(&mut out, &Finite(&meta)).ok()?;
    }
    out.push(b'}');
    Some(Bytes::from(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn written_members_are_spliced_with_the_type_and_meta() {
        let info = serde_json::value::to_raw_value(&serde_json::json!({"name": "s"})).unwrap();
        let mut meta = JsonObject::new();
        meta.insert("k".into(), 1.into());
        let result = MethodResult::written(r#"{"a":1,"b":[2]}"#.into(), Some(meta));
        let written = write_result(&result, Some(&info)).unwrap();
        assert_eq!(
            std::str::from_utf8(&written).unwrap(),
            r#"{"resultType":"complete","a":1,"b":[2],"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"s"},"k":1}}"#
        );
        let empty = write_result(&MethodResult::written("{}".into(), None), None).unwrap();
        assert_eq!(
            std::str::from_utf8(&empty).unwrap(),
            r#"{"resultType":"complete"}"#
        );
        assert!(write_result(&MethodResult::written("[]".into(), None), None).is_none());
    }

    #[test]
    fn identifiers_follow_the_meta_key_rules() {
        for good in [
            "com.example/ping",
            "io.modelcontextprotocol/tasks",
            "a/b",
            "x-1.y2/name_v2.beta-3",
        ] {
            assert_eq!(check_id(good), Ok(()), "{good}");
        }
        for bad in [
            "ping",
            "/ping",
            "com./ping",
            "1com/ping",
            "com-/ping",
            "com.example/",
            "com.example/-ping",
            "com.example/ping.",
            "com.example/pi ng",
            "com.ex ample/ping",
        ] {
            assert!(check_id(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn method_names_leave_the_core_and_notifications_alone() {
        assert!(check_method_name("com.example/ping").is_ok());
        assert!(check_method_name("tasks/get").is_ok());
        assert!(check_method_name("tools/call").is_err());
        assert!(check_method_name("ping").is_err());
        assert!(check_method_name("resources/subscribe").is_err());
        assert!(check_method_name("sampling/createMessage").is_err());
        assert!(check_method_name("notifications/tasks").is_err());
        assert!(check_method_name("").is_err());
        assert!(check_method_name("a b").is_err());
    }

    #[test]
    fn results_carry_their_type_and_the_server_identity() {
        let info = serde_json::value::to_raw_value(&serde_json::json!({"name": "s"})).unwrap();
        let result = MethodResult::of_type(
            "pong",
            serde_json::json!({"echo": "hi", "resultType": "spoofed", "_meta": {"k": 1}}),
        );
        let written = write_result(&result, Some(&info)).unwrap();
        assert_eq!(
            std::str::from_utf8(&written).unwrap(),
            r#"{"resultType":"pong","echo":"hi","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"s"},"k":1}}"#
        );
        assert!(write_result(&MethodResult::complete(5), None).is_none());
    }
}

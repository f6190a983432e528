//! The server's public contract as a lock file: every tool, resource,
//! template and prompt with its schemas, and the capabilities, in a
//! deterministic, human-readable JSON manifest kept in the repository.
//! A test compares the live contract with it and reports every change as
//! breaking or additive:
//!
//! ```no_run
//! #[test]
//! fn contract_is_unchanged() {
//!     mcp_runtime::assert_contract!("mcp-contract.json");
//! }
//! ```
//!
//! When the change is intended, `MCP_CONTRACT_UPDATE=1 cargo test`
//! rewrites the file; review it like code.

mod change;
mod diff;
mod output;

use std::path::Path;

use serde_json::{Map, Value, json};

pub use self::change::{Difference, Impact};
pub use self::diff::compare;
use crate::client::{Client, ClientError, InProcess, ListKind, Transport};
use crate::server::{Server, ServerBuilder};

/// The environment variable that makes [`assert_contract!`](crate::assert_contract) rewrite the
/// lock file instead of failing.
pub const UPDATE_ENV: &str = "MCP_CONTRACT_UPDATE";

/// The manifest of `server`, as its clients see it through the dispatcher.
///
/// Beyond what the wire shows, what turns callers away is part of the
/// contract too: items declared with `scopes = [...]` carry them as
/// `"scopes"`, items declared with `group = "..."` (which servers select
/// items by) carry `"group"`, tools declared with `requires_extension` carry
/// `"requiresExtensions"`, tools that run as tasks carry `"task"`
/// (`"optional"`, or `"required"` for `task(required)`), and the methods
/// extensions serve are listed under `"extensionMethods"`. The skills a
/// server ships (the Skills extension) are listed under `"skills"`, each
/// with its frontmatter and every file's digest and size. Each appears only
/// where there is something to say, so lock files written before it
/// existed stay valid.
///
/// It covers the static items only (`#[tool]`, `#[resource]`,
/// `#[prompt]`): items of a runtime [`Catalog`](crate::catalog::Catalog)
/// come and go while the server runs, so a server with one gets a
/// `"runtimeItems"` note saying they are left out.
pub async fn manifest(server: &Server) -> Result<Value, ClientError> {
    let mut manifest = manifest_of(&mut Client::new(InProcess::new(server.clone()))).await?;
    let dispatcher = &server.dispatcher;
    for section in ["tools", "resources", "prompts"] {
        if let Some(items) = manifest.get_mut(section).and_then(Value::as_object_mut) {
            items.retain(|key, _| dispatcher.is_static(section, key));
        }
    }
    if let (true, Some(object)) = (dispatcher.has_catalog(), manifest.as_object_mut()) {
        object.insert(
            "runtimeItems".into(),
            json!("not covered: this lock records the static items only; tools, prompts and resources of the runtime catalog are left out"),
        );
    }
    for (section, key, scopes, group) in dispatcher.static_items() {
        if !scopes.is_empty() {
            annotate(&mut manifest, section, key, "scopes", json!(scopes));
        }
        if let Some(group) = group {
            annotate(&mut manifest, section, key, "group", json!(group));
        }
    }
    for (tool, extensions) in dispatcher.tool_extensions() {
        annotate(
            &mut manifest,
            "tools",
            tool,
            "requiresExtensions",
            json!(extensions),
        );
    }
    for (tool, required) in dispatcher.task_tools() {
        let task = if required { "required" } else { "optional" };
        annotate(&mut manifest, "tools", tool, "task", json!(task));
    }
    let methods: Map<String, Value> = dispatcher
        .extension_methods()
        .into_iter()
        .map(|served| {
            let method = &served.method;
            let mut entry = json!({
                "extension": &*served.extension,
                "requiresNegotiation": method.needs_negotiation,
            });
            if !method.scopes.is_empty() {
                entry["scopes"] = json!(method.scopes);
            }
            (method.name.clone(), entry)
        })
        .collect();
    if let (false, Some(manifest)) = (methods.is_empty(), manifest.as_object_mut()) {
        manifest.insert("extensionMethods".into(), Value::Object(methods));
    }
    Ok(manifest)
}

/// Adds `field` to the item `key` of `section`.
fn annotate(manifest: &mut Value, section: &str, key: &str, field: &str, value: Value) {
    if let Some(item) = manifest
        .get_mut(section)
        .and_then(|items| items.get_mut(key))
        .and_then(Value::as_object_mut)
    {
        item.insert(field.into(), value);
    }
}

/// The manifest of the server behind `client`, whatever the transport.
pub async fn manifest_of<T: Transport>(client: &mut Client<T>) -> Result<Value, ClientError> {
    let discovery = client.discover().await?;
    let capabilities = serde_json::to_value(&discovery.capabilities).unwrap_or_default();
    let keyed = |items: Vec<Value>, key: &str| -> Value {
        let mut items: Vec<(String, Value)> = items
            .into_iter()
            .map(|mut item| {
                let id = item
                    .get(key)
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned();
                if let Some(map) = item.as_object_mut() {
                    map.remove(key);
                }
                (id, item)
            })
            .collect();
        items.sort_by(|a, b| a.0.cmp(&b.0));
        Value::Object(items.into_iter().collect::<Map<_, _>>())
    };
    // Only what the server advertises can be listed.
    let offers = &discovery.capabilities;
    // The skills a server ships (the Skills extension): each one's
    // frontmatter and every file's digest, so that a changed skill shows
    // in the diff even where its listing does not.
    let skills_declared = offers
        .extensions
        .as_ref()
        .is_some_and(|extensions| extensions.contains_key(SKILLS_EXTENSION));
    let kinds = [
        (ListKind::Tools, offers.tools.is_some()),
        (ListKind::Resources, offers.resources.is_some()),
        (ListKind::Templates, offers.resources.is_some()),
        (ListKind::Prompts, offers.prompts.is_some()),
        (ListKind::Skills, skills_declared),
    ];
    // One loop over the kinds: one copy of the paging, not five.
    let mut lists: [Vec<Value>; 5] = Default::default();
    for ((kind, offered), list) in kinds.into_iter().zip(&mut lists) {
        if offered {
            // As the server wrote them: the lock records what it
            // publishes, not what this client's types read of it.
            *list = client.list_json(kind).await?;
        }
    }
    let [tools, resources, templates, prompts, skills] = lists;
    let mut manifest = json!({
        "protocolVersions": discovery.supported_versions,
        "capabilities": capabilities,
        "tools": keyed(tools, "name"),
        "resources": keyed(resources, "uri"),
        "resourceTemplates": keyed(templates, "uriTemplate"),
        "prompts": keyed(prompts, "name"),
    });
    if skills_declared {
        manifest["skills"] = keyed(skills, "uri");
    }
    Ok(manifest)
}

/// The Skills extension's identifier (SEP-2640), spelled out here so that
/// the lock records skills whether or not this build serves them.
const SKILLS_EXTENSION: &str = "io.modelcontextprotocol/skills";

/// The manifest as the lock file spells it.
pub fn render(manifest: &Value) -> String {
    let mut text = serde_json::to_string_pretty(manifest).unwrap_or_default();
    text.push('\n');
    text
}

/// What [`check`] found.
#[derive(Debug)]
pub enum Verdict {
    /// The lock file matches the live contract.
    Unchanged,
    /// The lock file was written (missing, or updates were requested).
    Written {
        /// The changes it records, empty for a new file.
        changes: Vec<Difference>,
    },
    /// The live contract differs from the lock file.
    Changed {
        /// Every change, breaking first.
        changes: Vec<Difference>,
        /// Whether the file itself differs beyond classified changes (for
        /// example reordered or reformatted).
        reformatted: bool,
    },
    /// There is no lock file and updates were not requested.
    Missing,
}

/// Compares `server`'s contract with the lock file at `path`; with
/// `update`, writes the live contract there instead of reporting changes.
pub fn check(server: &Server, path: &Path, update: bool) -> std::io::Result<Verdict> {
    let server = server.clone();
    let live =
        block_on(move || async move { manifest(&server).await }).map_err(std::io::Error::other)?;
    let rendered = render(&live);
    let locked = match std::fs::read_to_string(path) {
        Ok(text) => Some(text),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => None,
        Err(error) => return Err(error),
    };
    let Some(locked) = locked else {
        if update {
            std::fs::write(path, &rendered)?;
            return Ok(Verdict::Written {
                changes: Vec::new(),
            });
        }
        return Ok(Verdict::Missing);
    };
    if locked == rendered {
        return Ok(Verdict::Unchanged);
    }
    let old: Value = serde_json::from_str(&locked).unwrap_or(Value::Null);
    let changes = compare(&old, &live);
    if update {
        std::fs::write(path, &rendered)?;
        return Ok(Verdict::Written { changes });
    }
    Ok(Verdict::Changed {
        reformatted: changes.is_empty(),
        changes,
    })
}

/// Runs the future `make` returns on a private runtime in its own thread,
/// so that the check works from plain `#[test]`s and async tests alike.
fn block_on<M, F>(make: M) -> F::Output
where
    M: FnOnce() -> F + Send + 'static,
    F: std::future::Future,
    F::Output: Send + 'static,
{
    std::thread::spawn(move || {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime for the contract check")
            .block_on(make())
    })
    .join()
    .expect("the contract check does not panic")
}

/// Fails the test when the server's contract differs from the lock file
/// at `path`, listing each change as breaking or additive; with
/// `MCP_CONTRACT_UPDATE=1`, rewrites the file and passes. Prefer the
/// [`assert_contract!`](crate::assert_contract) macro, which builds the
/// server and resolves the path from the crate's directory.
///
/// # Panics
///
/// When the contract changed, the lock file is missing, or it cannot be
/// read or written.
#[track_caller]
pub fn verify(builder: ServerBuilder, path: impl AsRef<Path>) {
    let path = path.as_ref();
    let server = builder
        .build()
        .unwrap_or_else(|error| panic!("the server does not build: {error}"));
    let update = std::env::var_os(UPDATE_ENV).is_some_and(|v| v != "0" && !v.is_empty());
    let shown = path.display();
    match check(&server, path, update) {
        Ok(Verdict::Unchanged) => {}
        Ok(Verdict::Written { changes }) => {
            eprintln!("wrote the MCP contract to {shown}");
            for change in changes {
                eprintln!("  {change}");
            }
        }
        Ok(Verdict::Missing) => panic!(
            "there is no MCP contract lock file at {shown}; create it with `{UPDATE_ENV}=1 cargo test` and commit it"
        ),
        Ok(Verdict::Changed {
            changes,
            reformatted,
        }) => {
            let mut report = format!("the MCP contract differs from {shown}:\n");
            if reformatted {
                report.push_str(
                    "  (no change to the contract itself; the file is formatted differently)\n",
                );
            }
            for change in &changes {
                report.push_str(&format!("  {change}\n"));
            }
            let breaking = changes
                .iter()
                .filter(|c| c.impact == Impact::Breaking)
                .count();
            if breaking > 0 {
                report.push_str(&format!(
                    "{breaking} breaking change(s): existing clients may fail. "
                ));
            }
            report.push_str(&format!("If this is intended, accept it with `{UPDATE_ENV}=1 cargo test` and commit the file."));
            panic!("{report}");
        }
        Err(error) => panic!("cannot check the MCP contract at {shown}: {error}"),
    }
}

/// Asserts that the contract of every handler linked into this test matches
/// the lock file at `path` (relative to the crate's `Cargo.toml`). See
/// [`contract`](crate::contract).
#[cfg_attr(docsrs, doc(cfg(feature = "client")))]
#[macro_export]
macro_rules! assert_contract {
    ($path:expr) => {
        $crate::assert_contract!($crate::server!(), $path)
    };
    ($builder:expr, $path:expr) => {
        $crate::contract::verify(
            $builder,
            ::std::path::Path::new(::core::env!("CARGO_MANIFEST_DIR")).join($path),
        )
    };
}

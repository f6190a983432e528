//! Hooks for the criterion micro-benchmarks (`benches/`): the internal
//! steps of a request, exposed one at a time so each can be timed alone.
//! Compiled only with the `bench-internals` feature, reached only as
//! `__private::bench`; not an API.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value};

use crate::dispatch::Prepared;
use crate::dispatch::envelope::{self, Incoming};
use crate::mrtr::state::{Binding, StateSealer};
use crate::security::KeyRing;
use crate::source::RequestSource;
use crate::transport::http::headers;
use crate::{Server, ServerBuilder};

/// Parses one message and reads its `_meta`, as every transport does
/// first. `true` when it is a well-formed request.
pub fn parse_request(server: &Server, message: &str) -> bool {
    match envelope::parse(message.to_owned()) {
        Ok(Incoming::Request(request)) => server
            .dispatcher
            .prepare(request, RequestSource::default())
            .is_ok(),
        _ => false,
    }
}

/// Sealing and opening `requestState` for one `tools/call`.
#[derive(Debug)]
pub struct StateBench {
    sealer: StateSealer,
    tool: String,
    arguments: String,
    steps: Map<String, Value>,
}

impl StateBench {
    /// A sealer with a fixed key, bound to `tool` called with `arguments`
    /// (JSON text), carrying `steps` (answers from earlier rounds).
    pub fn new(tool: &str, arguments: &str, steps: Map<String, Value>) -> StateBench {
        StateBench {
            sealer: StateSealer {
                keys: KeyRing::new([7; 32]),
                ttl: Duration::from_secs(600),
                max_rounds: 8,
                replay: Arc::new(crate::mrtr::InMemoryReplayGuard::default()),
                single_use_everywhere: false,
                clock: Arc::new(std::time::SystemTime::now),
            },
            tool: tool.to_owned(),
            arguments: arguments.to_owned(),
            steps,
        }
    }

    /// Seals the state for round 1.
    pub fn seal(&self) -> String {
        self.sealer
            .seal(
                Binding::new("tools/call", &self.tool, &self.arguments, None),
                0,
                self.steps.clone(),
                &[],
            )
            .expect("seals")
    }

    /// Opens a sealed state and checks its binding; `true` when it is valid.
    /// Includes hashing the arguments, as a retry does.
    pub fn open(&self, state: &str, arguments: &str) -> bool {
        let expected = Binding::new("tools/call", &self.tool, arguments, None);
        let policy = crate::mrtr::state::StatePolicy::LENIENT;
        self.sealer.open(state, &expected, policy).is_ok()
    }
}

/// Header validation of one prepared HTTP request.
#[derive(Debug)]
pub struct HeaderBench {
    server: Server,
    prepared: Prepared,
}

impl HeaderBench {
    /// Prepares `message` once; [`HeaderBench::check`] then validates
    /// headers against it.
    pub fn new(server: &Server, message: &str) -> HeaderBench {
        let Ok(Incoming::Request(request)) = envelope::parse(message.to_owned()) else {
            panic!("not a request: {message}");
        };
        let prepared = server
            .dispatcher
            .prepare(request, RequestSource::default())
            .unwrap_or_else(|_| panic!("bad _meta: {message}"));
        HeaderBench {
            server: server.clone(),
            prepared,
        }
    }

    /// Checks the standard and mirrored headers; `true` when they match.
    pub fn check(&self, headers: &http::HeaderMap) -> bool {
        let dispatcher = &self.server.dispatcher;
        headers::check(&self.prepared, headers, dispatcher).is_ok()
    }
}

/// Builds the registry and the precomputed answers (schemas, list pages,
/// `server/discover`) of `count` tools: copies of the linked-in tools under
/// distinct names, so that a registry of any size can be timed without
/// compiling that many tools. Dropping the result is not part of startup:
/// time it apart (criterion's `iter_with_large_drop`).
pub fn build_registry_of(count: usize, settings_from: &ServerBuilder) -> BuiltRegistry {
    use crate::registry::{Registry, StaticToolAnnotations, TOOLS, ToolEntry};
    let linked: Vec<&'static ToolEntry> = TOOLS.iter().collect();
    assert!(!linked.is_empty(), "link at least one #[tool]");
    let copies = (0..count).map(|i| {
        let entry = linked[i % linked.len()];
        let copy = ToolEntry {
            name: Box::leak(format!("{}_{i}", entry.name).into_boxed_str()),
            annotations: StaticToolAnnotations {
                title: entry.annotations.title,
                read_only: entry.annotations.read_only,
                destructive: entry.annotations.destructive,
                idempotent: entry.annotations.idempotent,
                open_world: entry.annotations.open_world,
            },
            ..*entry
        };
        &*Box::leak(Box::new(copy))
    });
    let registry = Registry::from_entries(copies.collect(), Vec::new(), Vec::new())
        .expect("the copies register");
    BuiltRegistry(
        settings_from
            .dispatcher(registry)
            .expect("the settings build"),
    )
}

/// What [`build_registry_of`] built.
#[derive(Debug)]
pub struct BuiltRegistry(crate::dispatch::Dispatcher);

impl BuiltRegistry {
    /// How many tools it serves.
    pub fn tools(&self) -> usize {
        self.0.tool_count()
    }
}

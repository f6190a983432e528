//! Hooks for the criterion micro-benchmarks (`mcp-runtime/benches/`): the
//! internal steps of a request, exposed one at a time so each can be timed
//! alone. Compiled only with the `bench-internals` feature; not an API.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value};

use crate::Server;
use crate::dispatch::Prepared;
use crate::dispatch::envelope::{self, Incoming};
use crate::mrtr::KeyRing;
use crate::mrtr::state::{Binding, StateSealer};
use crate::transport::http::headers;

/// Parses one message and reads its `_meta`, as every transport does
/// first. `true` when it is a well-formed request.
pub fn parse_request(server: &Server, message: &str) -> bool {
    match envelope::parse(message.to_owned()) {
        Ok(Incoming::Request(request)) => server.dispatcher.prepare(request).is_ok(),
        _ => false,
    }
}

/// Sealing and opening `requestState` for one `tools/call`.
#[derive(Debug)]
pub struct StateBench {
    sealer: StateSealer,
    binding: Binding,
    steps: Map<String, Value>,
}

impl StateBench {
    /// A sealer with a fixed key, bound to `tool` called with `arguments`,
    /// carrying `steps` (answers from earlier rounds).
    pub fn new(tool: &str, arguments: &Value, steps: Map<String, Value>) -> StateBench {
        StateBench {
            sealer: StateSealer {
                keys: KeyRing::new([7; 32]),
                ttl: Duration::from_secs(600),
                max_rounds: 8,
                replay: None,
                clock: Arc::new(std::time::SystemTime::now),
            },
            binding: Binding::new("tools/call", tool, arguments, None),
            steps,
        }
    }

    /// Seals the state for round 1.
    pub fn seal(&self) -> String {
        self.sealer
            .seal(self.binding.clone(), 0, self.steps.clone())
            .expect("seals")
    }

    /// Opens a sealed state and checks its binding; `true` when it is valid.
    /// Includes hashing the arguments, as a retry does.
    pub fn open(&self, state: &str, arguments: &Value) -> bool {
        let expected = Binding::new("tools/call", &self.binding.name, arguments, None);
        self.sealer.open(state, &expected).is_ok()
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
            .prepare(request)
            .unwrap_or_else(|_| panic!("bad _meta: {message}"));
        HeaderBench {
            server: server.clone(),
            prepared,
        }
    }

    /// Checks the standard and mirrored headers; `true` when they match.
    pub fn check(&self, headers: &http::HeaderMap) -> bool {
        let dispatcher = &self.server.dispatcher;
        headers::check(&self.prepared, headers, |name| {
            dispatcher.tool_header_params(name)
        })
        .is_ok()
    }
}

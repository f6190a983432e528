//! The MCP conformance suite's "everything" fixture, written with nothing
//! but the public `mcp-runtime` API: every tool, resource and prompt the
//! suite looks up by name. `tests/conformance/run.sh` runs the suite
//! against it.
//!
//! The handlers are in this library so tests link them; the binary serves
//! them. `conformance-server --http 127.0.0.1:3000` serves Streamable HTTP
//! at `/mcp`; without flags (or with `--stdio`) it speaks stdio.

mod assets;
mod content;
mod diagnostics;
mod input_required;
mod legacy;
mod prompts;
mod resources;
mod schema_2020_12;
mod tasks;

use mcp_runtime::{CacheHint, CacheScope, ServerBuilder};

/// How long clients may cache lists: the fixture's set never changes
/// while the process runs (the trigger tools only announce changes).
const LIST_TTL_MS: u64 = 300_000;

/// The fixture server, configured as the suite expects.
pub fn builder() -> ServerBuilder {
    mcp_runtime::server!()
        .title("MCP conformance fixture")
        .instructions(
            "Test fixture for the MCP conformance suite: tools returning each content type, \
             resources, prompts, and multi round-trip requests.",
        )
        .cache_hints(
            mcp_runtime::CacheHints::new().lists(CacheHint::new(LIST_TTL_MS, CacheScope::Public)),
        )
        // Advertise listChanged so `subscriptions/listen` and the
        // `test_trigger_*` tools are exercised too.
        .list_changed()
        // Advertise `resources.subscribe` (resources-subscribe scenarios).
        .resource_subscriptions()
        // The Skills extension (the suite's `sep-2640-*` scenarios): two
        // skills embedded from `skills/`, checked when this crate compiles.
        .with(&mcp_runtime::skills!("skills"))
        // Shared state in Redis when MCP_REDIS_URL names one (three of it
        // behind nginx: tests/cluster/run.sh).
        .with(mcp_runtime_redis::RedisConfig::from_env())
}

//! Cross-crate tests for mcp-runtime live in `tests/`; this library only
//! links the crates under test, and compiles the Rust snippets of the
//! repository README and of the guide (`docs/src/`) as doctests, so that
//! they cannot go stale (`tests/docs/check.py` fails when a chapter is not
//! included here).
#![doc = include_str!("../../README.md")]

/// A tool of this package's library: `server!()` in this package's tests
/// serves it without the tests naming the library (`tests/server_macro.rs`).
#[mcp_runtime::tool(name = "package.linked", annotations(read_only))]
pub fn package_linked() -> &'static str {
    "linked by server!()"
}

/// The guide's chapters, one module each, so that their Rust snippets are
/// doctests.
pub mod book {
    #[doc = include_str!("../../docs/src/introduction.md")]
    pub mod introduction {}
    #[doc = include_str!("../../docs/src/getting-started.md")]
    pub mod getting_started {}
    #[doc = include_str!("../../docs/src/tools-resources-prompts.md")]
    pub mod tools_resources_prompts {}
    #[doc = include_str!("../../docs/src/catalogs.md")]
    pub mod catalogs {}
    #[doc = include_str!("../../docs/src/asking-the-user.md")]
    pub mod asking_the_user {}
    #[doc = include_str!("../../docs/src/application-state.md")]
    pub mod application_state {}
    #[doc = include_str!("../../docs/src/middleware.md")]
    pub mod middleware {}
    #[doc = include_str!("../../docs/src/transports.md")]
    pub mod transports {}
    #[doc = include_str!("../../docs/src/environment.md")]
    pub mod environment {}
    #[doc = include_str!("../../docs/src/security.md")]
    pub mod security {}
    #[doc = include_str!("../../docs/src/authorization.md")]
    pub mod authorization {}
    #[doc = include_str!("../../docs/src/browser-clients.md")]
    pub mod browser_clients {}
    #[doc = include_str!("../../docs/src/local-files.md")]
    pub mod local_files {}
    #[doc = include_str!("../../docs/src/audit.md")]
    pub mod audit {}
    #[doc = include_str!("../../docs/src/several-instances.md")]
    pub mod several_instances {}
    #[doc = include_str!("../../docs/src/deployment.md")]
    pub mod deployment {}
    #[doc = include_str!("../../docs/src/tasks.md")]
    pub mod tasks {}
    #[doc = include_str!("../../docs/src/apps.md")]
    pub mod apps {}
    #[doc = include_str!("../../docs/src/skills.md")]
    pub mod skills {}
    #[doc = include_str!("../../docs/src/observability.md")]
    pub mod observability {}
    #[doc = include_str!("../../docs/src/extensions.md")]
    pub mod extensions {}
    #[doc = include_str!("../../docs/src/writing-a-plugin.md")]
    pub mod writing_a_plugin {}
    #[doc = include_str!("../../docs/src/testing.md")]
    pub mod testing {}
    #[doc = include_str!("../../docs/src/conformance.md")]
    pub mod conformance {}
    #[doc = include_str!("../../docs/src/older-clients.md")]
    pub mod older_clients {}
    #[doc = include_str!("../../docs/src/performance.md")]
    pub mod performance {}
    #[doc = include_str!("../../docs/src/architecture.md")]
    pub mod architecture {}
    #[doc = include_str!("../../docs/src/spec-notes.md")]
    pub mod spec_notes {}
}

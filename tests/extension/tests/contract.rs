//! The contract lock file (`mcp_runtime::contract`) of a server offering
//! the extension: what would turn clients away if it changed must be in
//! it, as the scopes of tools are.

use mcp_runtime::contract::manifest;
use serde_json::{Value, json};

async fn example_manifest() -> Value {
    let server = mcp_extension_example::server().build().unwrap();
    manifest(&server).await.expect("the manifest is read")
}

/// The extension and its settings are part of the advertised
/// capabilities, and so of the contract.
#[tokio::test]
async fn the_manifest_records_the_extension_and_its_settings() {
    let manifest = example_manifest().await;
    assert_eq!(
        manifest["capabilities"]["extensions"],
        json!({"com.example/ping": {"maxLength": 64}})
    );
}

/// A tool that starts requiring an extension turns away every client
/// without it (`-32021`), like a new scope does: the tool's entry must say
/// so, whatever the format.
///
/// Fails with the runtime as it is: the entry of `pong` does not mention
/// the extension (see the report).
#[tokio::test]
async fn the_manifest_records_the_extension_a_tool_requires() {
    let manifest = example_manifest().await;
    let mut pong = manifest["tools"]["pong"].clone();
    assert!(pong.is_object(), "{manifest:#}");
    // The prose names the extension; the contract must, besides.
    pong.as_object_mut().unwrap().remove("description");
    assert!(
        pong.to_string().contains("com.example/ping"),
        "the tool's entry does not record `requires_extension`: {pong:#}"
    );
}

/// An extension's methods are served beside the tools, and a scope on
/// one turns callers away as a scope on a tool does: the manifest must
/// record each method and `pings/reset`'s scope, whatever the format.
///
/// Fails with the runtime as it is: no method, and no `ping:admin`, is in
/// the manifest (see the report).
#[tokio::test]
async fn the_manifest_records_the_extension_methods_and_their_scopes() {
    let manifest = example_manifest().await.to_string();
    for needle in [
        "com.example/wait",
        "pings/stats",
        "pings/reset",
        "ping:admin",
    ] {
        assert!(
            manifest.contains(needle),
            "`{needle}` is not in the manifest: {manifest}"
        );
    }
}

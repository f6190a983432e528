//! The contract lock file: what it records, each verdict of the check, and
//! the update variable (driven in a child process, since the environment
//! is process-wide).
#![cfg(feature = "client")]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

use mcp_runtime::contract::{self, Impact, UPDATE_ENV, Verdict};
use mcp_runtime::{Server, ServerBuilder, prompt, resource, tool};
use serde_json::json;

/// Ships a parcel.
#[tool(group = "shipping", annotations(destructive))]
fn ship(
    /// Where to.
    address: String,
    express: Option<bool>,
) -> String {
    format!("{address} {express:?}")
}

/// A parcel's label.
#[resource("parcels://{id}/label", mime_type = "text/plain")]
fn label(id: u32) -> String {
    id.to_string()
}

/// Writes a cover letter.
#[prompt]
fn cover(recipient: String) -> String {
    recipient
}

fn server() -> Server {
    ServerBuilder::new("contract-test", "1.0.0")
        .build()
        .unwrap()
}

/// A fresh path in a fresh directory under the system's temp dir.
fn temp_lock() -> PathBuf {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let dir = std::env::temp_dir().join(format!(
        "mcp-contract-test-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::SeqCst)
    ));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join("mcp-contract.json")
}

#[tokio::test]
async fn the_manifest_records_what_clients_see() {
    let manifest = contract::manifest(&server()).await.unwrap();
    assert_eq!(
        manifest,
        json!({
            "protocolVersions": ["2026-07-28"],
            "capabilities": {"tools": {}, "resources": {}, "prompts": {}},
            "tools": {"ship": {
                "annotations": {"destructiveHint": true},
                "description": "Ships a parcel.",
                "group": "shipping",
                "inputSchema": {
                    "type": "object",
                    "additionalProperties": false,
                    "properties": {
                        "address": {"type": "string", "description": "Where to."},
                        "express": {"type": "boolean"}
                    },
                    "required": ["address"]
                }
            }},
            "resources": {},
            "resourceTemplates": {"parcels://{id}/label": {
                "name": "label",
                "description": "A parcel's label.",
                "mimeType": "text/plain"
            }},
            "prompts": {"cover": {
                "description": "Writes a cover letter.",
                "arguments": [{"name": "recipient", "required": true}]
            }}
        })
    );
    // Rendering is deterministic.
    let again = contract::manifest(&server()).await.unwrap();
    assert_eq!(contract::render(&manifest), contract::render(&again));
}

#[test]
fn verdicts_missing_written_unchanged_changed() {
    let path = temp_lock();
    assert!(matches!(
        contract::check(&server(), &path, false).unwrap(),
        Verdict::Missing
    ));
    assert!(matches!(
        contract::check(&server(), &path, true).unwrap(),
        Verdict::Written { changes } if changes.is_empty()
    ));
    assert!(matches!(
        contract::check(&server(), &path, false).unwrap(),
        Verdict::Unchanged
    ));

    // An older contract: a tool that is gone, and `express` was required.
    let mut old: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    old["tools"]["ship"]["inputSchema"]["required"] = json!(["address", "express"]);
    old["tools"]["track"] = json!({"description": "Tracks.", "inputSchema": {"type": "object"}});
    old["prompts"]["cover"]["description"] = json!("Old words.");
    std::fs::write(&path, contract::render(&old)).unwrap();
    let Verdict::Changed {
        changes,
        reformatted,
    } = contract::check(&server(), &path, false).unwrap()
    else {
        panic!("the contract changed");
    };
    assert!(!reformatted);
    let shown: Vec<String> = changes.iter().map(ToString::to_string).collect();
    assert_eq!(
        shown,
        [
            "BREAKING  tool `track` was removed (or renamed)",
            "additive  tool `ship`: argument `express` is now optional",
            "additive  prompt `cover`: description changed",
        ]
    );
    assert_eq!(changes[0].impact, Impact::Breaking);

    // Same contract, other formatting: reported as such.
    contract::check(&server(), &path, true).unwrap();
    let live: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    std::fs::write(&path, serde_json::to_string(&live).unwrap()).unwrap();
    assert!(matches!(
        contract::check(&server(), &path, false).unwrap(),
        Verdict::Changed {
            reformatted: true,
            ..
        }
    ));
}

/// Run by the tests below in a child process with `LOCK` (and maybe the
/// update variable) set; on its own it checks a lock it writes itself.
#[test]
fn child_asserts_the_contract() {
    let path = match std::env::var_os("LOCK") {
        Some(path) => PathBuf::from(path),
        None => {
            let path = temp_lock();
            contract::check(&server(), &path, true).unwrap();
            path
        }
    };
    contract::verify(ServerBuilder::new("contract-test", "1.0.0"), &path);
}

fn run_child(lock: &Path, update: bool) -> std::process::Output {
    let mut command = Command::new(std::env::current_exe().unwrap());
    command
        .args([
            "--exact",
            "child_asserts_the_contract",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("LOCK", lock)
        .env_remove(UPDATE_ENV);
    if update {
        command.env(UPDATE_ENV, "1");
    }
    command.output().unwrap()
}

#[test]
fn the_update_variable_rewrites_the_lock_file() {
    let path = temp_lock();
    // No lock file: the test fails and says how to create one.
    let output = run_child(&path, false);
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("there is no MCP contract lock file at"),
        "{stderr}"
    );
    assert!(
        stderr.contains("MCP_CONTRACT_UPDATE=1 cargo test"),
        "{stderr}"
    );

    // A stale lock file: the test fails with the classified changes.
    std::fs::write(&path, contract::render(&json!({"tools": {"gone": {}}}))).unwrap();
    let output = run_child(&path, false);
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("BREAKING  tool `gone` was removed (or renamed)"),
        "{stderr}"
    );
    assert!(
        stderr.contains("additive  tool `ship` was added"),
        "{stderr}"
    );
    assert!(
        stderr.contains("1 breaking change(s): existing clients may fail."),
        "{stderr}"
    );

    // With the variable, the file is rewritten and the test passes.
    let output = run_child(&path, true);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(String::from_utf8_lossy(&output.stderr).contains("wrote the MCP contract to"));
    let output = run_child(&path, false);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

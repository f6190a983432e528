//! The server's public contract, scopes included, is locked in
//! `mcp-contract.json`. Accept an intended change with
//! `MCP_CONTRACT_UPDATE=1 cargo test` and commit the file.

// Names the library, so that its handlers are linked into this test.
use secure_notes as _;

#[test]
fn contract_is_unchanged() {
    mcp_runtime::assert_contract!("mcp-contract.json");
}

//! The server's public contract is locked in `mcp-contract.json`: this
//! test fails, listing breaking and additive changes, when a tool,
//! resource, template or prompt changes shape. Accept an intended change
//! with `MCP_CONTRACT_UPDATE=1 cargo test` and commit the file.

#[test]
fn contract_is_unchanged() {
    mcp_runtime::assert_contract!(release_assistant::builder(), "mcp-contract.json");
}

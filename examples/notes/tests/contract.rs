//! The server's public contract is locked in `mcp-contract.json`: this
//! test fails, listing breaking and additive changes, when a tool,
//! resource, template or prompt changes shape. Accept an intended change
//! with `MCP_CONTRACT_UPDATE=1 cargo test` and commit the file.

#[test]
fn contract_is_unchanged() {
    // The handlers take the notebook, so the server needs one to build.
    mcp_runtime::assert_contract!(
        mcp_runtime::server!().state(notes::Store::seeded()),
        "mcp-contract.json"
    );
}

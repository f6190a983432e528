//! The server's public contract, scopes included, is locked in
//! `mcp-contract.json`. Accept an intended change with
//! `MCP_CONTRACT_UPDATE=1 cargo test` and commit the file.

#[test]
fn contract_is_unchanged() {
    // The handlers take the notes, so the server needs them to build.
    mcp_runtime::assert_contract!(
        mcp_runtime::server!().state(secure_notes::Notes::default()),
        "mcp-contract.json"
    );
}

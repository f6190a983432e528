//! The server's static contract (its tools and the `file:///{+path}`
//! template) is locked in `mcp-contract.json`; the files themselves are
//! runtime items, which the lock does not cover. Accept an intended change
//! with `MCP_CONTRACT_UPDATE=1 cargo test` and commit the file.

#[test]
fn contract_is_unchanged() {
    // The handlers take the served directory, so the server needs one to
    // build; which one does not change the contract.
    let files = files::open(env!("CARGO_MANIFEST_DIR")).unwrap();
    mcp_runtime::assert_contract!(mcp_runtime::server!().state(files), "mcp-contract.json");
}

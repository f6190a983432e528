//! The fixture's contract is locked in `mcp-contract.json`; accept an
//! intended change with `MCP_CONTRACT_UPDATE=1 cargo test`.

#[test]
fn contract_is_unchanged() {
    mcp_runtime::assert_contract!(conformance_server::builder(), "mcp-contract.json");
}

//! The server's static contract (its tools and the `file:///{+path}`
//! template) is locked in `mcp-contract.json`; the files themselves are
//! runtime items, which the lock does not cover. Accept an intended change
//! with `MCP_CONTRACT_UPDATE=1 cargo test` and commit the file.

// Names the library, so that its handlers are linked into this test.
use files as _;

#[test]
fn contract_is_unchanged() {
    mcp_runtime::assert_contract!("mcp-contract.json");
}

fn main() {
    let _ = mcp_runtime::skills!(skills);
}

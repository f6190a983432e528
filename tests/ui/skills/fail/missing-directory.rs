fn main() {
    let _ = mcp_runtime::skills!("no-such-directory");
}

// `skills-ui-generated` holds skills over the SEP's limits, written into
// trybuild's project directory by tests/ui.rs (too big to commit).
fn main() {
    let _ = mcp_runtime::skills!("skills-ui-generated/too-many-files");
}

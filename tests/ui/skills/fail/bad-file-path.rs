// `skills-ui` is tests/ui/skills/fixtures, linked into trybuild's project
// directory (the package root `skills!` resolves against) by tests/ui.rs.
fn main() {
    let _ = mcp_runtime::skills!("skills-ui/bad-file-path");
}

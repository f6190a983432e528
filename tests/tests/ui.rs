//! The trybuild UI suite: what users see when they misuse the macros, and
//! proof that every documented option compiles.

use std::path::{Path, PathBuf};

#[test]
fn ui() {
    let project = trybuild_project();
    link_skill_fixtures(&project);
    write_oversized_skills(&project.join("skills-ui-generated"));
    let t = trybuild::TestCases::new();
    t.compile_fail("ui/tool/fail/*.rs");
    t.pass("ui/tool/pass/*.rs");
    t.compile_fail("ui/resource/fail/*.rs");
    t.pass("ui/resource/pass/*.rs");
    t.compile_fail("ui/prompt/fail/*.rs");
    t.pass("ui/prompt/pass/*.rs");
    t.compile_fail("ui/ask/fail/*.rs");
    t.pass("ui/ask/pass/*.rs");
    t.compile_fail("ui/skills/fail/*.rs");
}

/// The package trybuild builds the cases in: `skills!` reads directories
/// relative to it, as it reads them relative to a user's Cargo.toml.
fn trybuild_project() -> PathBuf {
    let target = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .expect("CARGO_TARGET_TMPDIR is a directory of the target directory");
    let project = target.join("tests/trybuild").join(env!("CARGO_PKG_NAME"));
    std::fs::create_dir_all(&project).expect("trybuild's project directory can be made");
    project
}

/// `skills-ui` in the project: the committed fixtures, one directory of
/// skills per compile error.
fn link_skill_fixtures(project: &Path) {
    let link = project.join("skills-ui");
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("ui/skills/fixtures");
    if std::fs::read_link(&link).is_ok_and(|to| to == fixtures) {
        return;
    }
    let _ = std::fs::remove_file(&link);
    std::os::unix::fs::symlink(&fixtures, &link).expect("the fixtures can be linked");
}

/// Skills over the SEP's limits, too big to commit: one with 513 files,
/// one whose files hold one byte more than 16 MiB.
fn write_oversized_skills(root: &Path) {
    let skill = |case: &str, name: &str| {
        let dir = root.join(case).join(name);
        std::fs::create_dir_all(&dir).expect("the generated skill's directory can be made");
        let manifest = format!("---\nname: {name}\ndescription: Over a limit.\n---\n");
        std::fs::write(dir.join("SKILL.md"), &manifest).expect("SKILL.md can be written");
        (dir, manifest.len())
    };
    let (many, _) = skill("too-many-files", "many");
    for index in 1..=512 {
        std::fs::write(many.join(format!("note-{index:03}.md")), "A note.\n")
            .expect("a note can be written");
    }
    let (big, manifest) = skill("too-large", "big");
    let size = 16 * 1024 * 1024 + 1 - manifest;
    std::fs::write(big.join("data.bin"), vec![0_u8; size]).expect("the data can be written");
}

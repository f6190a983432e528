//! The path helper against hostile paths, on a real directory tree with
//! symbolic links that stay inside and links that lead out, and a property
//! test: no path it accepts resolves outside the root.
#![cfg(unix)]

use std::io::Read as _;
use std::os::unix::fs::{MetadataExt as _, PermissionsExt as _, symlink};
use std::path::{Path, PathBuf};

use mcp_runtime::files::{Directories, PathError, file_uri};
use proptest::prelude::*;

/// `root/` holds `docs/readme.md`, `docs/inner -> ../docs` (a link that
/// stays inside), `escape -> <outside>`, `docs/deep -> <outside>/secret`,
/// `dangling -> <outside>/missing`, `self -> .`; `<outside>/secret/key`
/// is what nobody may reach.
struct Tree {
    _temp: tempfile::TempDir,
    root: PathBuf,
    outside: PathBuf,
    dirs: Directories,
}

fn tree() -> Tree {
    let temp = tempfile::tempdir().unwrap();
    let base = temp.path().canonicalize().unwrap();
    let root = base.join("root");
    let outside = base.join("outside");
    std::fs::create_dir_all(root.join("docs")).unwrap();
    std::fs::create_dir_all(outside.join("secret")).unwrap();
    std::fs::write(root.join("docs/readme.md"), "hello").unwrap();
    std::fs::write(outside.join("secret/key"), "key").unwrap();
    symlink("../docs", root.join("docs/inner")).unwrap();
    symlink(&outside, root.join("escape")).unwrap();
    symlink(outside.join("secret"), root.join("docs/deep")).unwrap();
    symlink(outside.join("missing"), root.join("dangling")).unwrap();
    symlink(".", root.join("self")).unwrap();
    let dirs = Directories::new([&root]).unwrap();
    Tree {
        _temp: temp,
        root,
        outside,
        dirs,
    }
}

/// What the error says, for matching.
fn refusal(tree: &Tree, input: &str) -> String {
    match tree.dirs.resolve(input) {
        Ok(path) => panic!("{input:?} was accepted as {}", path.as_path().display()),
        Err(error) => {
            let kind = match &error {
                PathError::Empty => "empty",
                PathError::Nul => "nul",
                PathError::TooLong => "too long",
                PathError::ParentDirectory => "parent",
                PathError::Backslash => "backslash",
                PathError::WindowsDrive => "drive",
                PathError::Unc => "unc",
                PathError::InvalidUri(_) => "uri",
                PathError::Outside(_) => "outside",
                PathError::SymlinkEscape(_) => "symlink",
                PathError::NotFound(_) => "not found",
                other => panic!("{input:?}: unexpected {other:?}"),
            };
            assert!(!error.to_string().is_empty());
            kind.to_owned()
        }
    }
}

#[test]
fn hostile_paths_are_refused_each_with_its_reason() {
    let tree = tree();
    let outside = tree.outside.display().to_string();
    let root = tree.root.display().to_string();
    let long_name = format!("docs/{}", "n".repeat(256));
    let long_path = "d/".repeat(2100);
    let cases: Vec<(String, &str)> = vec![
        ("../outside/secret/key".into(), "parent"),
        ("docs/../../outside".into(), "parent"),
        ("docs/../docs/readme.md".into(), "parent"),
        ("..".into(), "parent"),
        (
            format!("file://{root}/docs/%2e%2e/%2E%2E/outside"),
            "parent",
        ),
        ("..\\..\\outside".into(), "backslash"),
        ("docs\\readme.md".into(), "backslash"),
        ("C:\\Windows\\win.ini".into(), "backslash"),
        ("C:/Windows/win.ini".into(), "drive"),
        ("c:".into(), "drive"),
        ("file:///C:/Windows".into(), "drive"),
        ("\\\\server\\share\\x".into(), "unc"),
        ("//server/share/x".into(), "unc"),
        ("file://server/share/x".into(), "unc"),
        ("docs/readme.md\0.png".into(), "nul"),
        ("file:///x%00y".into(), "nul"),
        ("".into(), "empty"),
        (long_name, "too long"),
        (long_path, "too long"),
        ("/etc/passwd".into(), "outside"),
        (format!("{outside}/secret/key"), "outside"),
        (format!("file://{outside}/secret/key"), "outside"),
        ("escape/secret/key".into(), "symlink"),
        ("escape".into(), "symlink"),
        ("docs/deep/key".into(), "symlink"),
        ("self/escape/secret/key".into(), "symlink"),
        (format!("{root}/escape/secret"), "symlink"),
        ("escape/new-file.txt".into(), "symlink"),
        ("dangling".into(), "symlink"),
        ("docs/readme.md/inside-a-file".into(), "not found"),
        ("https://example.com/x".into(), "uri"),
        ("file:relative/x".into(), "uri"),
        ("file:///x%FF".into(), "uri"),
    ];
    assert!(cases.len() >= 20);
    for (input, expected) in &cases {
        assert_eq!(refusal(&tree, input), *expected, "{input:?}");
    }
    // Opening refuses every one of them too, and so does a write.
    for (input, _) in &cases {
        assert!(tree.dirs.open(input).is_err(), "{input:?} opened");
        assert!(tree.dirs.write(input, b"x").is_err(), "{input:?} written");
    }
    // Nothing was created or touched outside.
    assert_eq!(
        std::fs::read_to_string(tree.outside.join("secret/key")).unwrap(),
        "key"
    );
}

#[test]
fn paths_inside_are_resolved_through_links_that_stay_inside() {
    let tree = tree();
    let readme = tree.root.join("docs/readme.md");
    for input in [
        "docs/readme.md",
        "./docs/./readme.md",
        "docs/inner/readme.md",
        "self/docs/inner/inner/readme.md",
    ] {
        let path = tree.dirs.resolve_existing(input).unwrap();
        assert_eq!(path.as_path(), readme, "{input}");
        assert_eq!(path.relative(&tree.dirs), Path::new("docs/readme.md"));
    }
    let absolute = readme.display().to_string();
    assert_eq!(tree.dirs.resolve(&absolute).unwrap().as_path(), readme);
    let uri = file_uri(&readme);
    assert_eq!(tree.dirs.resolve(&uri).unwrap().as_path(), readme);
    assert_eq!(tree.dirs.uri(&tree.dirs.resolve(&uri).unwrap()), uri);
    // A file that does not exist yet (about to be written) is placed
    // inside; an existing one is required by `resolve_existing`.
    let new = tree.dirs.resolve("docs/new/notes.md").unwrap();
    assert_eq!(new.as_path(), tree.root.join("docs/new/notes.md"));
    assert!(matches!(
        tree.dirs.resolve_existing("docs/new/notes.md"),
        Err(PathError::NotFound(_))
    ));
    // The root itself.
    assert_eq!(tree.dirs.resolve(".").unwrap().as_path(), tree.root);
}

/// Pieces hostile paths are made of.
fn segment() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("..".to_owned()),
        Just(".".to_owned()),
        Just("docs".to_owned()),
        Just("inner".to_owned()),
        Just("deep".to_owned()),
        Just("escape".to_owned()),
        Just("self".to_owned()),
        Just("dangling".to_owned()),
        Just("readme.md".to_owned()),
        Just("secret".to_owned()),
        Just("key".to_owned()),
        Just("outside".to_owned()),
        Just("new".to_owned()),
        Just("%2e%2e".to_owned()),
        Just("C:".to_owned()),
        Just("".to_owned()),
        "[a-z.%\\\\]{1,4}",
    ]
}

fn input() -> impl Strategy<Value = String> {
    let prefix = prop_oneof![
        Just(String::new()),
        Just("/".to_owned()),
        Just("file://".to_owned()),
        Just("ROOT/".to_owned()),
        Just("file://ROOT/".to_owned()),
        Just("OUTSIDE/".to_owned()),
    ];
    let separator = prop_oneof![Just("/"), Just("/"), Just("//"), Just("\\")];
    (
        prefix,
        proptest::collection::vec((segment(), separator), 0..8),
    )
        .prop_map(|(prefix, parts)| {
            let mut text = prefix;
            for (segment, separator) in parts {
                text.push_str(&segment);
                text.push_str(separator);
            }
            text
        })
}

/// The path `path` leads to on the file system: the real place of its
/// deepest existing ancestor, and the rest.
fn real_place(path: &Path) -> PathBuf {
    let mut existing = path.to_owned();
    let mut rest = Vec::new();
    while existing.canonicalize().is_err() {
        rest.push(existing.file_name().unwrap().to_owned());
        existing.pop();
    }
    let mut place = existing.canonicalize().unwrap();
    place.extend(rest.iter().rev());
    place
}

/// Runs 4,000 generated paths against one tree; checks that some are
/// accepted (the property is not vacuous) and that none accepted leads out.
#[test]
fn no_accepted_path_resolves_outside_the_root() {
    use proptest::test_runner::{Config, TestRunner};
    let tree = tree();
    let root = tree.root.display().to_string();
    let outside = tree.outside.display().to_string();
    let accepted = std::cell::Cell::new(0u32);
    let mut runner = TestRunner::new(Config {
        cases: 4_000,
        ..Config::default()
    });
    runner
        .run(&input(), |raw| {
            let input = raw
                .replace("ROOT", root.trim_start_matches('/'))
                .replace("OUTSIDE", outside.trim_start_matches('/'));
            if let Ok(path) = tree.dirs.resolve(&input) {
                accepted.set(accepted.get() + 1);
                let place = real_place(path.as_path());
                prop_assert!(
                    place.starts_with(&tree.root),
                    "{input:?} was accepted as {} and leads to {}",
                    path.as_path().display(),
                    place.display()
                );
                // And no link is left in it to follow later.
                prop_assert_eq!(&place, path.as_path());
            }
            Ok(())
        })
        .unwrap();
    assert!(accepted.get() > 200, "only {} accepted", accepted.get());
}

/// Paths through the tree's links, with no lexical fault for `resolve` to
/// catch: whether they lead out is the file system's to say.
fn linked_input() -> impl Strategy<Value = String> {
    let segment = prop_oneof![
        Just("docs"),
        Just("inner"),
        Just("deep"),
        Just("escape"),
        Just("self"),
        Just("dangling"),
        Just("secret"),
        Just("key"),
        Just("readme.md"),
        Just("."),
    ];
    let prefix = prop_oneof![Just(""), Just("ROOT/"), Just("file://ROOT/")];
    // Half of them end at a file.
    let last = prop_oneof![Just("readme.md"), Just("key"), Just("")];
    (prefix, proptest::collection::vec(segment, 1..6), last)
        .prop_map(|(prefix, parts, last)| format!("{prefix}{}/{last}", parts.join("/")))
}

/// Runs 4,000 paths through links against `open`: some open (the property
/// is not vacuous), and every one that opens is the readme, never the
/// key outside.
#[test]
fn no_opened_file_is_outside_the_root() {
    use proptest::test_runner::{Config, TestRunner};
    let tree = tree();
    std::fs::hard_link(tree.outside.join("secret/key"), tree.root.join("key")).unwrap();
    let root = tree.root.display().to_string();
    let opened = std::cell::Cell::new(0u32);
    let mut runner = TestRunner::new(Config {
        cases: 4_000,
        ..Config::default()
    });
    runner
        .run(&linked_input(), |raw| {
            let input = raw.replace("ROOT", &root);
            if let Ok(mut file) = tree.dirs.open(&input) {
                opened.set(opened.get() + 1);
                let mut text = String::new();
                file.read_to_string(&mut text).unwrap();
                prop_assert_eq!(
                    text,
                    "hello",
                    "{:?} opened {}",
                    input,
                    file.path().display()
                );
            }
            Ok(())
        })
        .unwrap();
    // About 50 of 4,000 name the readme through a link that stays inside.
    assert!(opened.get() > 20, "only {} opened", opened.get());
}

fn read(file: mcp_runtime::files::OpenedFile) -> String {
    let mut text = String::new();
    let mut file = file;
    file.read_to_string(&mut text).unwrap();
    text
}

fn mkfifo(path: &Path) {
    let status = std::process::Command::new("mkfifo").arg(path).status();
    assert!(status.unwrap().success(), "mkfifo {}", path.display());
}

#[test]
fn files_open_beneath_the_root_as_regular_files_with_one_link() {
    let tree = tree();
    assert_eq!(
        read(tree.dirs.open("docs/inner/readme.md").unwrap()),
        "hello"
    );
    let opened = tree.dirs.open(&file_uri(&tree.root.join("docs/readme.md")));
    assert_eq!(opened.unwrap().path(), tree.root.join("docs/readme.md"));
    std::fs::hard_link(tree.outside.join("secret/key"), tree.root.join("hard")).unwrap();
    mkfifo(&tree.root.join("pipe"));
    let refused = |input: &str| tree.dirs.open(input).unwrap_err();
    assert!(matches!(refused("hard"), PathError::HardLinked(_, 2)));
    assert_eq!(
        refused("hard").to_string(),
        format!(
            "{} has 2 hard links: it may be a file from outside the served directories",
            tree.root.join("hard").display()
        )
    );
    assert!(
        matches!(refused("pipe"), PathError::NotRegular(_)),
        "no wait"
    );
    assert!(matches!(refused("docs"), PathError::NotRegular(_)));
    assert!(matches!(refused("."), PathError::NotRegular(_)));
    assert!(matches!(refused("missing"), PathError::NotFound(_)));
    assert!(matches!(
        refused("docs/deep/key"),
        PathError::SymlinkEscape(_)
    ));
    assert!(matches!(refused("dangling"), PathError::SymlinkEscape(_)));
    // Allowed, a hard link opens.
    let trusting = tree.dirs.clone().allow_hard_links(true);
    assert_eq!(read(trusting.open("hard").unwrap()), "key");
}

#[test]
fn writes_replace_the_file_and_never_go_through_a_link() {
    let tree = tree();
    let secret = tree.outside.join("secret/key");
    std::fs::hard_link(&secret, tree.root.join("hard")).unwrap();
    mkfifo(&tree.root.join("pipe"));
    let refused = |input: &str| tree.dirs.write(input, b"new").unwrap_err();
    assert!(matches!(refused("hard"), PathError::HardLinked(_, 2)));
    assert!(matches!(refused("pipe"), PathError::NotRegular(_)));
    assert!(matches!(refused("docs"), PathError::NotRegular(_)));
    assert!(matches!(refused("."), PathError::NotRegular(_)));
    let escape = refused("escape/new.txt");
    assert!(matches!(escape, PathError::SymlinkEscape(_)), "{escape:?}");
    assert!(matches!(
        refused("docs/deep/new/x"),
        PathError::SymlinkEscape(_)
    ));
    assert!(!tree.outside.join("new.txt").exists());
    assert!(!tree.outside.join("secret/new").exists());

    // Allowed, a hard link is replaced, not written through.
    let trusting = tree.dirs.clone().allow_hard_links(true);
    let written = trusting.write("hard", b"new").unwrap();
    assert!(!written.created);
    assert_eq!(
        std::fs::read_to_string(tree.root.join("hard")).unwrap(),
        "new"
    );
    assert_eq!(std::fs::read_to_string(&secret).unwrap(), "key");
    assert_eq!(std::fs::metadata(&secret).unwrap().nlink(), 1);

    // Created with its directories (through a link that stays inside),
    // then replaced keeping its permissions.
    let written = tree.dirs.write("docs/inner/new/a.txt", b"a").unwrap();
    assert_eq!(written.path, tree.root.join("docs/inner/new/a.txt"));
    assert!(written.created);
    let real = tree.root.join("docs/new/a.txt");
    assert_eq!(std::fs::read_to_string(&real).unwrap(), "a");
    std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o600)).unwrap();
    let before = std::fs::metadata(&real).unwrap().ino();
    assert!(!tree.dirs.write("docs/new/a.txt", b"b").unwrap().created);
    let after = std::fs::metadata(&real).unwrap();
    assert_eq!(std::fs::read_to_string(&real).unwrap(), "b");
    assert_eq!(after.permissions().mode() & 0o777, 0o600);
    assert_ne!(after.ino(), before, "a new file, renamed over the old one");
    // No temporary file is left behind.
    let names: Vec<_> = std::fs::read_dir(tree.root.join("docs/new"))
        .unwrap()
        .collect();
    assert_eq!(names.len(), 1);
}

#[test]
fn walks_list_links_without_following_them() {
    let tree = tree();
    let walked: Vec<(String, usize, &str)> = tree
        .dirs
        .walk(".", 8)
        .unwrap()
        .map(|entry| {
            let entry = entry.unwrap();
            let kind = match () {
                () if entry.is_symlink() => "link",
                () if entry.is_dir() => "dir",
                () => "file",
            };
            let relative = entry.relative().display().to_string();
            assert_eq!(entry.path(), tree.root.join(&relative));
            (relative, entry.depth(), kind)
        })
        .collect();
    let expected = [
        ("dangling", 1, "link"),
        ("docs", 1, "dir"),
        ("docs/deep", 2, "link"),
        ("docs/inner", 2, "link"),
        ("docs/readme.md", 2, "file"),
        ("escape", 1, "link"),
        ("self", 1, "link"),
    ];
    let expected: Vec<_> = expected
        .iter()
        .map(|(path, depth, kind)| ((*path).to_owned(), *depth, *kind))
        .collect();
    assert_eq!(walked, expected);

    let docs: Vec<_> = tree
        .dirs
        .walk("docs", 1)
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let names: Vec<_> = docs
        .iter()
        .map(|entry| entry.relative().to_owned())
        .collect();
    assert_eq!(
        names,
        [
            Path::new("deep"),
            Path::new("inner"),
            Path::new("readme.md")
        ]
    );
    assert_eq!(read(docs[2].open().unwrap()), "hello");
    assert!(matches!(docs[0].open(), Err(PathError::SymlinkEscape(_))));
    let not_a_dir = tree.dirs.walk("docs/readme.md", 1).unwrap_err();
    assert!(
        matches!(not_a_dir, PathError::NotADirectory(_)),
        "{not_a_dir}"
    );
    assert!(matches!(
        tree.dirs.walk("escape", 1),
        Err(PathError::SymlinkEscape(_))
    ));
}

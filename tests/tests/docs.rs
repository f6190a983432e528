//! The crate README (what docs.rs shows) against `mcp-runtime/Cargo.toml`:
//! its feature table has one row per feature, and says which are default,
//! so that it cannot drift from the manifest again.

use std::collections::BTreeMap;

/// Features that are not an API: the README names them as such, outside
/// the table.
const INTERNAL: &[&str] = &["bench-internals"];

fn runtime_file(name: &str) -> String {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../mcp-runtime/");
    std::fs::read_to_string(format!("{path}{name}")).unwrap()
}

/// The manifest's features, each with whether it is a default one.
fn manifest_features() -> BTreeMap<String, bool> {
    let manifest: toml::Table = runtime_file("Cargo.toml").parse().unwrap();
    let features = manifest["features"].as_table().unwrap();
    let defaults: Vec<&str> = features["default"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f.as_str().unwrap())
        .collect();
    features
        .keys()
        .filter(|name| *name != "default" && !INTERNAL.contains(&name.as_str()))
        .map(|name| (name.clone(), defaults.contains(&name.as_str())))
        .collect()
}

/// The README's table rows: `| `name` | yes/no | what it adds |`.
fn readme_features(readme: &str) -> BTreeMap<String, bool> {
    let mut rows = BTreeMap::new();
    for line in readme.lines().filter(|line| line.starts_with("| `")) {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        let name = cells[1].trim_matches('`').to_owned();
        let default = match cells[2] {
            "yes" => true,
            "no" => false,
            other => panic!("the README's row for `{name}` says default {other:?}, not yes or no"),
        };
        assert!(
            rows.insert(name.clone(), default).is_none(),
            "`{name}` has two rows"
        );
    }
    rows
}

#[test]
fn the_crate_readme_lists_every_feature_and_the_defaults() {
    let readme = runtime_file("README.md");
    assert_eq!(
        readme_features(&readme),
        manifest_features(),
        "mcp-runtime/README.md's feature table (left) differs from mcp-runtime/Cargo.toml (right)"
    );
    for internal in INTERNAL {
        assert!(
            readme.contains(&format!("`{internal}`")),
            "the README does not name `{internal}`"
        );
    }
}

#[test]
fn the_table_parser_reads_defaults() {
    let rows = readme_features("| `http` | yes | HTTP |\n| `otel` | no | traces |\nprose\n");
    assert_eq!(
        rows,
        BTreeMap::from([("http".to_owned(), true), ("otel".to_owned(), false)])
    );
}

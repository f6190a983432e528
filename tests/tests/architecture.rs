//! # Architecture checker for `mcp-runtime/src`
//!
//! Parses every `.rs` file of the runtime with `syn` and enforces the
//! layering the crate is meant to have, so a refactor cannot quietly
//! undo it. Test code (`#[cfg(test)]` items and modules, including
//! `#[cfg(test)] mod tests;` files, and `#[test]`/`#[tokio::test]`
//! functions) is exempt from every rule.
//!
//! 1. **No legacy cfg in the core**: no `cfg`/`cfg_attr` attribute (nor
//!    `cfg!`) mentioning `feature = "legacy"`, at any depth of
//!    `all`/`any`/`not`, in `transport/`, `dispatch/`, `mrtr/`,
//!    `registry/`. The old-revision adapter lives in `legacy/`; the core
//!    must read the same with or without it.
//! 2. **Layers point one way**: nothing in a core module (every top-level
//!    module but the upper layers, the composition roots and the
//!    integrations still in the crate: `rules::LOWER_LAYERS` lists them)
//!    names `crate::transport`, `crate::legacy`, `crate::inspect`,
//!    `crate::client` or `crate::server` (macro names such as `crate::server!` are not module
//!    references; root re-exports such as `crate::Server` are not
//!    followed).
//! 3. **No two modules import each other** (the root `lib.rs` and
//!    parent/child pairs excepted): (a) between any two modules, (b)
//!    between top-level modules once the graph is aggregated to them, and
//!    (c) no cycle of three or more top-level modules.
//! 4. **Short functions**: no function (free, method, or trait default)
//!    longer than 80 lines, from its visibility or `fn` to its closing
//!    brace; in the macros (`mcp-macros/src`) and the plugin crates
//!    (`mcp-runtime-redis/src`, `mcp-runtime-otel/src`) too.
//!
//! A module depends on another when any path in it — `use` trees, types,
//! expressions, patterns, bounds, impl headers, and `a::b` paths inside
//! macro invocations — resolves (through `crate::`, `self::`, `super::`,
//! `use`d names, child modules and glob-imported modules) to that module
//! or an item in it; the deepest known module is taken. Intra-doc links
//! are not read.
//!
//! Run it with `cargo test -p mcp-tests --test architecture`. Each
//! violated rule fails its own test and lists every violation as
//! `file:line` (relative to `mcp-runtime/src`). The `checker_*` tests run
//! the same analysis on small synthetic crates, to show it can fail.
//!
//! The helpers live in `tests/architecture/`: `scan` (the `syn` pass),
//! `tokens` (attributes and macro tokens), `resolve` (paths to modules),
//! `graph` (mutual pairs, components, cycles) and `rules`.

#[path = "architecture/graph.rs"]
mod graph;
#[path = "architecture/model.rs"]
mod model;
#[path = "architecture/resolve.rs"]
mod resolve;
#[path = "architecture/rules.rs"]
mod rules;
#[path = "architecture/scan.rs"]
mod scan;
#[path = "architecture/tokens.rs"]
mod tokens;

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use model::ModPath;
use rules::Analysis;

/// The longest a function may be, in lines.
const MAX_FUNCTION_LINES: usize = 80;

/// The runtime's source directory.
fn runtime_src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../mcp-runtime/src")
}

/// Every `.rs` file under `dir`, as (path relative to `dir` with `/`
/// separators, text), sorted by path.
fn read_sources(dir: &Path) -> Vec<(String, String)> {
    let mut files = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(current) = pending.pop() {
        let entries = std::fs::read_dir(&current)
            .unwrap_or_else(|error| panic!("cannot list {}: {error}", current.display()));
        for entry in entries {
            let path = entry.expect("a directory entry").path();
            if path.is_dir() {
                pending.push(path);
            } else if path.extension().is_some_and(|ext| ext == "rs") {
                let text = std::fs::read_to_string(&path)
                    .unwrap_or_else(|error| panic!("cannot read {}: {error}", path.display()));
                let relative = path.strip_prefix(dir).expect("found under dir");
                let relative: Vec<_> = relative.iter().map(|part| part.to_string_lossy()).collect();
                files.push((relative.join("/"), text));
            }
        }
    }
    files.sort();
    files
}

/// The runtime, analysed once for all the rule tests.
fn runtime() -> &'static Analysis {
    static ANALYSIS: OnceLock<Analysis> = OnceLock::new();
    ANALYSIS.get_or_init(|| Analysis::of(&read_sources(&runtime_src())))
}

/// Fails with every violation listed, one per line.
fn assert_holds(rule: &str, violations: &[String]) {
    assert!(
        violations.is_empty(),
        "{rule}: {} violation(s) (paths relative to mcp-runtime/src):\n  {}\n",
        violations.len(),
        violations.join("\n  ")
    );
}

#[test]
fn the_runtime_source_is_found() {
    let modules = &runtime().facts.modules;
    assert!(
        modules.len() > 50,
        "only {} modules under {}",
        modules.len(),
        runtime_src().display()
    );
    for name in ["dispatch", "transport", "protocol"] {
        assert!(
            modules.contains_key(&ModPath::root().child(name)),
            "no crate::{name}"
        );
    }
}

#[test]
fn rule_1_no_legacy_cfg_in_the_core() {
    assert_holds(
        "rule 1: cfg(feature = \"legacy\") in transport/, dispatch/, mrtr/, registry/",
        &rules::legacy_cfgs(runtime()),
    );
}

#[test]
fn rule_2_layers_point_one_way() {
    assert_holds(
        "rule 2: a core module names transport/legacy/inspect/client/server",
        &rules::layer_violations(runtime()),
    );
}

#[test]
fn rule_3a_no_two_modules_import_each_other() {
    assert_holds(
        "rule 3a: modules that import each other",
        &rules::mutual_modules(runtime()),
    );
}

#[test]
fn rule_3b_no_two_top_level_modules_import_each_other() {
    assert_holds(
        "rule 3b: top-level modules that import each other",
        &rules::mutual_top_level(runtime()),
    );
}

#[test]
fn rule_3c_no_cycles_between_top_level_modules() {
    assert_holds(
        "rule 3c: cycles of three or more top-level modules",
        &rules::top_level_cycles(runtime()),
    );
}

#[test]
fn rule_4_functions_are_short() {
    assert_holds(
        &format!("rule 4: functions longer than {MAX_FUNCTION_LINES} lines"),
        &rules::long_functions(runtime(), MAX_FUNCTION_LINES),
    );
}

/// Rule 4 holds in the macros and the plugin crates too (the other rules
/// are about the runtime's modules).
#[test]
fn rule_4_functions_are_short_in_the_other_crates() {
    for krate in ["mcp-macros", "mcp-runtime-redis", "mcp-runtime-otel"] {
        let src = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("..")
            .join(krate)
            .join("src");
        let analysis = Analysis::of(&read_sources(&src));
        let violations = rules::long_functions(&analysis, MAX_FUNCTION_LINES);
        assert!(
            violations.is_empty(),
            "rule 4 in {krate}/src: functions longer than {MAX_FUNCTION_LINES} lines:\n  {}\n",
            violations.join("\n  ")
        );
    }
}

// The checker on synthetic crates.

fn analyze(files: &[(&str, &str)]) -> Analysis {
    let files: Vec<(String, String)> = files
        .iter()
        .map(|(path, text)| ((*path).to_owned(), (*text).to_owned()))
        .collect();
    Analysis::of(&files)
}

fn module(path: &str) -> ModPath {
    path.split("::")
        .skip(1)
        .fold(ModPath::root(), |parent, name| parent.child(name))
}

/// A function `header { .. }` spanning exactly `lines` lines.
fn function(header: &str, lines: usize) -> String {
    format!("{header} {{\n{}}}\n", "    let _ = 0;\n".repeat(lines - 2))
}

#[test]
fn checker_finds_a_mutual_import() {
    let analysis = analyze(&[
        ("lib.rs", "mod a;\nmod b;\nmod c;\nmod dispatch;\n"),
        (
            "a.rs",
            "use crate::{b, c::Other};\npub(crate) struct A;\nfn f() { b::g(); }\n",
        ),
        (
            "b.rs",
            "pub(crate) fn g() -> crate::a::A {\n    crate::a::A\n}\n",
        ),
        ("c.rs", "pub(crate) struct Other;\n"),
        ("dispatch/mod.rs", "mod envelope;\nmod tools;\n"),
        (
            "dispatch/envelope.rs",
            "use super::tools;\npub(crate) fn parse() {}\nfn check() { tools::call() }\n",
        ),
        (
            "dispatch/tools.rs",
            "use crate::dispatch::envelope;\npub(crate) fn call() {\n    envelope::parse();\n}\n",
        ),
    ]);
    assert_eq!(
        rules::mutual_modules(&analysis),
        [
            "crate::a <-> crate::b\n      crate::a -> crate::b: a.rs:1 `crate::b`\n      \
             crate::b -> crate::a: b.rs:1 `crate::a::A`",
            "crate::dispatch::envelope <-> crate::dispatch::tools\n      \
             crate::dispatch::envelope -> crate::dispatch::tools: dispatch/envelope.rs:1 `super::tools`\n      \
             crate::dispatch::tools -> crate::dispatch::envelope: dispatch/tools.rs:1 `crate::dispatch::envelope`",
        ]
    );
    assert_eq!(
        rules::mutual_top_level(&analysis),
        [
            "crate::a <-> crate::b\n      crate::a -> crate::b: a.rs:1 `crate::b`\n      \
          crate::b -> crate::a: b.rs:1 `crate::a::A`"
        ]
    );
    // A path through a `use`d module counts, not only the `use` itself.
    let from_tools: Vec<String> = analysis
        .dependencies
        .iter()
        .filter(|dependency| dependency.from == module("crate::dispatch::tools"))
        .map(|dependency| format!("{} -> {}", dependency.example(), dependency.to))
        .collect();
    assert_eq!(
        from_tools,
        [
            "dispatch/tools.rs:1 `crate::dispatch::envelope` -> crate::dispatch::envelope",
            "dispatch/tools.rs:3 `envelope::parse` -> crate::dispatch::envelope",
        ]
    );
}

#[test]
fn checker_ignores_parent_child() {
    let analysis = analyze(&[
        (
            "lib.rs",
            "mod dispatch;\nmod other;\nuse dispatch::Dispatcher;\npub(crate) fn hub() {}\n",
        ),
        (
            "dispatch/mod.rs",
            "mod tools;\npub(crate) struct Dispatcher;\nfn run() { tools::call(); crate::hub() }\n",
        ),
        (
            "dispatch/tools.rs",
            "use super::Dispatcher;\npub(crate) fn call() { crate::other::o(); }\n",
        ),
        ("other.rs", "pub(crate) fn o() { crate::hub(); }\n"),
    ]);
    let edges: Vec<String> = analysis
        .dependencies
        .iter()
        .map(|dependency| format!("{} -> {}", dependency.from, dependency.to))
        .collect();
    assert_eq!(
        edges,
        [
            "crate::dispatch -> crate",
            "crate::dispatch -> crate::dispatch::tools",
            "crate::dispatch::tools -> crate::dispatch",
            "crate::dispatch::tools -> crate::other",
            "crate -> crate::dispatch",
            "crate::other -> crate",
        ]
    );
    assert_eq!(rules::mutual_modules(&analysis), Vec::<String>::new());
    assert_eq!(rules::mutual_top_level(&analysis), Vec::<String>::new());
    assert_eq!(rules::top_level_cycles(&analysis), Vec::<String>::new());
}

#[test]
fn checker_finds_long_function() {
    let mut source = String::from("/// Doc.\n#[inline]\n");
    source += &function("pub fn free()", 81); // lines 3..=83
    source += &function("fn fits()", 80); // 84..=163
    source += "struct S;\nimpl S {\n    /// Doc.\n"; // 164..=166
    source += &function("    pub(crate) async fn method(&self)", 82); // 167..=248
    source += "}\ntrait T {\n"; // 249, 250
    source += &function("    fn provided(&self)", 81); // 251..=331
    source += "    fn required(&self);\n}\n#[test]\n"; // 332..=334
    source += &function("fn long_test()", 100);
    source += "#[cfg(test)]\nmod tests {\n";
    source += &function("    fn long_helper()", 100);
    source += "}\n";
    let analysis = analyze(&[("lib.rs", "mod long;\n"), ("long.rs", &source)]);
    assert_eq!(
        rules::long_functions(&analysis, MAX_FUNCTION_LINES),
        [
            "long.rs:167 fn S::method: 82 lines",
            "long.rs:3 fn free: 81 lines",
            "long.rs:251 fn T::provided: 81 lines",
        ]
    );
}

#[test]
fn checker_finds_legacy_cfg() {
    let core = r#"#[cfg(feature = "legacy")]
mod adapter {}
#[cfg(all(unix, not(feature = "legacy")))]
fn plain() {}
#[cfg_attr(feature = "legacy", derive(Debug))]
struct S;
fn param(#[cfg(feature = "legacy")] legacy: u8) {
    if cfg!(any(feature = "legacy")) {}
}
#[cfg(feature = "legacyish")]
fn near_miss() {}
#[cfg(feature = "auth")]
fn other() {}
#[cfg(test)]
mod tests {
    #[cfg(feature = "legacy")]
    fn exempt() {}
}
"#;
    let outside = "#[cfg(feature = \"legacy\")]\nfn allowed_here() {}\n";
    let analysis = analyze(&[
        ("lib.rs", "mod transport;\nmod registry;\nmod legacy;\n"),
        ("transport/mod.rs", core),
        (
            "registry.rs",
            "#[cfg(not(feature = \"legacy\"))]\nuse std::fmt;\n",
        ),
        ("legacy/mod.rs", outside),
    ]);
    assert_eq!(
        rules::legacy_cfgs(&analysis),
        [
            "registry.rs:1 #[cfg(not(feature = \"legacy\"))]",
            "transport/mod.rs:1 #[cfg(feature = \"legacy\")]",
            "transport/mod.rs:3 #[cfg(all(unix, not(feature = \"legacy\")))]",
            "transport/mod.rs:5 #[cfg_attr(feature = \"legacy\", derive(Debug))]",
            "transport/mod.rs:7 fn param(#[cfg(feature = \"legacy\")] legacy: u8) {",
            "transport/mod.rs:8 if cfg!(any(feature = \"legacy\")) {}",
        ]
    );
}

#[test]
fn checker_finds_layer_violation() {
    let protocol = "use crate::transport::http;
use crate::{server, inspect::Thing, registry::Fine};
fn f() -> http::Request { crate::server!(); server::x(); crate::Server::new() }
mod sub;
";
    let analysis = analyze(&[
        (
            "lib.rs",
            "mod protocol;\nmod transport;\nmod server;\nmod inspect;\nmod client;\nmod registry;\n",
        ),
        ("protocol/mod.rs", protocol),
        (
            "protocol/sub.rs",
            "fn g() { super::super::client::connect() }\n",
        ),
        (
            "transport/mod.rs",
            "pub(crate) mod http;\nfn up() { crate::server::x() }\n",
        ),
        ("transport/http.rs", "pub(crate) struct Request;\n"),
        ("server.rs", "pub(crate) fn x() {}\n"),
        ("inspect.rs", "pub(crate) struct Thing;\n"),
        ("client.rs", "pub(crate) fn connect() {}\n"),
        ("registry.rs", "pub(crate) struct Fine;\n"),
    ]);
    assert_eq!(
        rules::layer_violations(&analysis),
        [
            "protocol/mod.rs:1 `crate::transport::http`: crate::protocol -> crate::transport::http",
            "protocol/mod.rs:2 `crate::inspect::Thing`: crate::protocol -> crate::inspect",
            "protocol/mod.rs:2 `crate::server`: crate::protocol -> crate::server",
            "protocol/mod.rs:3 `http::Request`: crate::protocol -> crate::transport::http",
            "protocol/mod.rs:3 `server::x`: crate::protocol -> crate::server",
            "protocol/sub.rs:1 `super::super::client::connect`: crate::protocol::sub -> crate::client",
        ]
    );
}

#[test]
fn checker_finds_three_cycle() {
    let triangle = [
        ("lib.rs", "mod a;\nmod b;\nmod c;\nmod d;\nmod e;\n"),
        ("a.rs", "pub(crate) fn fa() { crate::b::fb() }\n"),
        ("b.rs", "pub(crate) fn fb() { crate::c::fc() }\n"),
        ("c/mod.rs", "mod inner;\n"),
        ("c/inner.rs", "pub(crate) fn fc() { crate::a::fa() }\n"),
        ("d.rs", "pub(crate) fn fd() { crate::e::fe() }\n"),
        ("e.rs", "pub(crate) fn fe() { crate::d::fd() }\n"),
    ];
    let analysis = analyze(&triangle);
    assert_eq!(
        rules::top_level_cycles(&analysis),
        [
            "component of 3: crate::a, crate::b, crate::c\n      \
             crate::a -> crate::b: a.rs:1 `crate::b::fb`\n      \
             crate::b -> crate::c: b.rs:1 `crate::c::fc`\n      \
             crate::c -> crate::a: c/inner.rs:1 `crate::a::fa`",
            "cycle of 3: crate::a -> crate::b -> crate::c -> crate::a",
        ]
    );
    assert_eq!(rules::mutual_top_level(&analysis).len(), 1, "only d <-> e");
    // A pair alone is rule 3b's business, not a longer cycle.
    let pair_only = analyze(&[triangle[0], triangle[5], triangle[6]]);
    assert_eq!(rules::top_level_cycles(&pair_only), Vec::<String>::new());
}

#[test]
fn checker_skips_test_modules() {
    let a = "pub(crate) fn f() {}
#[cfg(test)]
mod tests {
    use crate::b::g;
}
#[cfg(all(test, unix))]
fn helper() { crate::b::g() }
#[test]
fn t() { crate::b::g() }
#[cfg(test)]
mod more;
";
    let long_test = function("fn long()", 100);
    let analysis = analyze(&[
        ("lib.rs", "mod a;\nmod b;\n#[cfg(test)]\nmod tests;\n"),
        ("tests.rs", &format!("use crate::{{a, b}};\n{long_test}")),
        ("a.rs", a),
        ("a/more.rs", &format!("use crate::b::g;\n{long_test}")),
        ("b.rs", "pub(crate) fn g() { crate::a::f() }\n"),
    ]);
    let modules: Vec<String> = analysis
        .facts
        .modules
        .keys()
        .map(ModPath::to_string)
        .collect();
    assert_eq!(modules, ["crate", "crate::a", "crate::b"]);
    let edges: Vec<String> = analysis
        .dependencies
        .iter()
        .filter(|dependency| !dependency.from.is_root())
        .map(|dependency| format!("{} -> {}", dependency.from, dependency.to))
        .collect();
    assert_eq!(edges, ["crate::b -> crate::a"]);
    assert_eq!(rules::mutual_modules(&analysis), Vec::<String>::new());
    assert_eq!(
        rules::long_functions(&analysis, MAX_FUNCTION_LINES),
        Vec::<String>::new()
    );
}

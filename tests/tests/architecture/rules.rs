//! The rules, each a function from the analysed crate to its violations,
//! one formatted entry per violation (empty when the rule holds).

use crate::graph::{self, Edges, MutualPair};
use crate::model::ModPath;
use crate::resolve::{self, Dependency};
use crate::scan::Facts;

/// Top-level modules that must not carry `cfg(feature = "legacy")`: the
/// adapter lives in `legacy/`, and the core must build the same without it.
pub(crate) const LEGACY_FREE: &[&str] = &["transport", "dispatch", "mrtr", "registry"];

/// Top-level modules of the lower layers: every core module. Above them
/// are the upper layers (below), the composition roots that assemble a
/// server or a client (`run`, `cli`, `plugin`, `shared_state`, `testing`,
/// `contract`, `bench_internals`) and the integration still inside the
/// crate (`skills`), which may name what it builds on.
pub(crate) const LOWER_LAYERS: &[&str] = &[
    "apps",
    "auth",
    "bind",
    "blocking",
    "catalog",
    "changes",
    "complete",
    "context",
    "diagnostics",
    "dispatch",
    "extension",
    "files",
    "lifecycle",
    "metrics",
    "middleware",
    "mrtr",
    "prompt",
    "protocol",
    "registry",
    "request_extensions",
    "resource",
    "schema",
    "security",
    "source",
    "state",
    "tasks",
    "tool",
    "uri_template",
];

/// Top-level modules of the upper layers, which the lower ones must not
/// name.
pub(crate) const UPPER_LAYERS: &[&str] = &["transport", "legacy", "inspect", "client", "server"];

/// How many cycles rule 3c lists before it stops enumerating.
const CYCLE_LIMIT: usize = 500;

/// A crate parsed and resolved once, for all the rules.
#[derive(Debug)]
pub(crate) struct Analysis {
    pub(crate) facts: Facts,
    pub(crate) dependencies: Vec<Dependency>,
}

impl Analysis {
    /// Analyses `(path relative to src/, source text)` pairs.
    pub(crate) fn of(files: &[(String, String)]) -> Self {
        let facts = Facts::scan(files);
        let dependencies = resolve::dependencies(&facts);
        Self {
            facts,
            dependencies,
        }
    }
}

fn is_in(module: &ModPath, top_levels: &[&str]) -> bool {
    module
        .top_level_name()
        .is_some_and(|name| top_levels.contains(&name))
}

/// Rule 1: no `cfg`/`cfg_attr` mentioning `feature = "legacy"` in the
/// modules of [`LEGACY_FREE`].
pub(crate) fn legacy_cfgs(analysis: &Analysis) -> Vec<String> {
    let mut cfgs: Vec<_> = analysis
        .facts
        .legacy_cfgs
        .iter()
        .filter(|cfg| is_in(&cfg.module, LEGACY_FREE))
        .collect();
    cfgs.sort_by(|a, b| a.site.cmp(&b.site));
    cfgs.iter()
        .map(|cfg| format!("{} {}", cfg.site, cfg.text))
        .collect()
}

/// Rule 2: no path in a module of [`LOWER_LAYERS`] names a module of
/// [`UPPER_LAYERS`].
pub(crate) fn layer_violations(analysis: &Analysis) -> Vec<String> {
    analysis
        .dependencies
        .iter()
        .filter(|dependency| {
            is_in(&dependency.from, LOWER_LAYERS) && is_in(&dependency.to, UPPER_LAYERS)
        })
        .map(|dependency| {
            format!(
                "{}: {} -> {}",
                dependency.example(),
                dependency.from,
                dependency.to
            )
        })
        .collect()
}

/// Rule 3a: no two modules (neither containing the other, neither the
/// root) depend on each other.
pub(crate) fn mutual_modules(analysis: &Analysis) -> Vec<String> {
    mutual_report(&graph::module_edges(&analysis.dependencies))
}

/// Rule 3b: no two top-level modules depend on each other.
pub(crate) fn mutual_top_level(analysis: &Analysis) -> Vec<String> {
    mutual_report(&graph::top_level_edges(&analysis.dependencies))
}

fn mutual_report(edges: &Edges) -> Vec<String> {
    graph::mutual_pairs(edges)
        .into_iter()
        .map(|MutualPair { a, b, forth, back }| {
            format!(
                "{a} <-> {b}\n      {a} -> {b}: {}\n      {b} -> {a}: {}",
                forth.example(),
                back.example()
            )
        })
        .collect()
}

/// Rule 3c: no cycle of three or more top-level modules. Lists each
/// strongly connected component of three or more modules with its edges
/// (one example each), then every such cycle.
pub(crate) fn top_level_cycles(analysis: &Analysis) -> Vec<String> {
    let edges = graph::top_level_edges(&analysis.dependencies);
    let (cycles, truncated) = graph::cycles_longer_than_two(&edges, CYCLE_LIMIT);
    if cycles.is_empty() {
        return Vec::new();
    }
    let mut report: Vec<String> = graph::strongly_connected(&edges)
        .iter()
        .filter(|component| component.len() > 2)
        .map(|component| component_report(component, &edges))
        .collect();
    report.extend(cycles.iter().map(|cycle| {
        format!(
            "cycle of {}: {} -> {}",
            cycle.len(),
            join(cycle, " -> "),
            cycle[0]
        )
    }));
    if truncated {
        report.push(format!("(stopped after {CYCLE_LIMIT} cycles)"));
    }
    report
}

/// A component's members, then its inner edges with an example each.
fn component_report(component: &[ModPath], edges: &Edges) -> String {
    let mut report = format!(
        "component of {}: {}",
        component.len(),
        join(component, ", ")
    );
    for ((from, to), example) in edges {
        if component.contains(from) && component.contains(to) {
            report += &format!("\n      {from} -> {to}: {}", example.example());
        }
    }
    report
}

fn join(modules: &[ModPath], separator: &str) -> String {
    modules
        .iter()
        .map(ModPath::to_string)
        .collect::<Vec<_>>()
        .join(separator)
}

/// Rule 4: no non-test function longer than `max_lines`, longest first.
pub(crate) fn long_functions(analysis: &Analysis, max_lines: usize) -> Vec<String> {
    let mut long: Vec<_> = analysis
        .facts
        .functions
        .iter()
        .filter(|function| function.lines() > max_lines)
        .collect();
    long.sort_by(|a, b| b.lines().cmp(&a.lines()).then_with(|| a.site.cmp(&b.site)));
    long.iter()
        .map(|function| {
            format!(
                "{} fn {}: {} lines",
                function.site,
                function.name,
                function.lines()
            )
        })
        .collect()
}

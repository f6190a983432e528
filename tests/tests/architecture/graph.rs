//! The module dependency graph: edges with one example each, mutual pairs,
//! strongly connected components and the cycles inside them.

use std::collections::{BTreeMap, BTreeSet};

use crate::model::ModPath;
use crate::resolve::Dependency;

/// Graph edges `(from, to)`, each with the first dependency (by file and
/// line) that creates it.
pub(crate) type Edges = BTreeMap<(ModPath, ModPath), Dependency>;

/// The module-level graph: the crate root and parent/child pairs are left
/// out (the root is the re-export hub; a parent and its children are one
/// unit split over files).
pub(crate) fn module_edges(dependencies: &[Dependency]) -> Edges {
    collect_edges(dependencies, |dependency| {
        let (from, to) = (&dependency.from, &dependency.to);
        (!from.is_root() && !to.is_root() && !from.is_related_to(to))
            .then(|| (from.clone(), to.clone()))
    })
}

/// The graph between top-level modules (`crate::a::x -> crate::b::y`
/// becomes `crate::a -> crate::b`); edges inside one top-level module and
/// edges from or to the root are left out.
pub(crate) fn top_level_edges(dependencies: &[Dependency]) -> Edges {
    collect_edges(dependencies, |dependency| {
        let from = dependency.from.top_level()?;
        let to = dependency.to.top_level()?;
        (from != to).then_some((from, to))
    })
}

fn collect_edges(
    dependencies: &[Dependency],
    edge_of: impl Fn(&Dependency) -> Option<(ModPath, ModPath)>,
) -> Edges {
    let mut edges = Edges::new();
    for dependency in dependencies {
        if let Some(edge) = edge_of(dependency) {
            let example = edges.entry(edge).or_insert_with(|| dependency.clone());
            if (&dependency.site, &dependency.written) < (&example.site, &example.written) {
                *example = dependency.clone();
            }
        }
    }
    edges
}

/// Two nodes with an edge each way, and the example of each edge.
#[derive(Debug)]
pub(crate) struct MutualPair<'a> {
    pub(crate) a: &'a ModPath,
    pub(crate) b: &'a ModPath,
    pub(crate) forth: &'a Dependency,
    pub(crate) back: &'a Dependency,
}

/// Every pair of nodes with an edge each way, `a < b`, in order.
pub(crate) fn mutual_pairs(edges: &Edges) -> Vec<MutualPair<'_>> {
    edges
        .iter()
        .filter(|((a, b), _)| a < b)
        .filter_map(|((a, b), forth)| {
            let back = edges.get(&(b.clone(), a.clone()))?;
            Some(MutualPair { a, b, forth, back })
        })
        .collect()
}

/// The strongly connected components with more than one node, each sorted,
/// in order of their smallest node.
pub(crate) fn strongly_connected(edges: &Edges) -> Vec<Vec<ModPath>> {
    let graph = Adjacency::new(edges);
    let mut components: Vec<Vec<ModPath>> = tarjan(&graph)
        .into_iter()
        .filter(|component| component.len() > 1)
        .map(|component| {
            let mut nodes: Vec<ModPath> = component
                .into_iter()
                .map(|n| graph.nodes[n].clone())
                .collect();
            nodes.sort();
            nodes
        })
        .collect();
    components.sort();
    components
}

/// The strongly connected components of `graph`, as node indices
/// (Tarjan's algorithm).
fn tarjan(graph: &Adjacency) -> Vec<Vec<usize>> {
    let mut tarjan = Tarjan {
        graph,
        index: vec![None; graph.nodes.len()],
        low: vec![0; graph.nodes.len()],
        stack: Vec::new(),
        on_stack: vec![false; graph.nodes.len()],
        next_index: 0,
        components: Vec::new(),
    };
    for node in 0..graph.nodes.len() {
        if tarjan.index[node].is_none() {
            tarjan.connect(node);
        }
    }
    tarjan.components
}

/// The elementary cycles of three or more nodes, each starting at its
/// smallest node, at most `limit` of them (the count can grow
/// exponentially in a dense component). The flag says whether the limit cut
/// the list short.
pub(crate) fn cycles_longer_than_two(edges: &Edges, limit: usize) -> (Vec<Vec<ModPath>>, bool) {
    let graph = Adjacency::new(edges);
    let mut component = vec![0; graph.nodes.len()];
    for (id, members) in tarjan(&graph).into_iter().enumerate() {
        for node in members {
            component[node] = id;
        }
    }
    let mut search = CycleSearch {
        graph: &graph,
        component,
        path: Vec::new(),
        on_path: vec![false; graph.nodes.len()],
        found: Vec::new(),
        limit,
    };
    for start in 0..graph.nodes.len() {
        search.path.push(start);
        search.on_path[start] = true;
        search.extend(start);
        search.on_path[start] = false;
        search.path.pop();
    }
    let truncated = search.found.len() > limit;
    let cycles = search
        .found
        .into_iter()
        .take(limit)
        .map(|cycle| cycle.into_iter().map(|n| graph.nodes[n].clone()).collect())
        .collect();
    (cycles, truncated)
}

/// The edges as index lists, nodes in sorted order.
#[derive(Debug)]
struct Adjacency {
    nodes: Vec<ModPath>,
    successors: Vec<Vec<usize>>,
}

impl Adjacency {
    fn new(edges: &Edges) -> Self {
        let nodes: BTreeSet<&ModPath> = edges.keys().flat_map(|(from, to)| [from, to]).collect();
        let nodes: Vec<ModPath> = nodes.into_iter().cloned().collect();
        let index = |node: &ModPath| nodes.binary_search(node).expect("every endpoint is a node");
        let mut successors = vec![Vec::new(); nodes.len()];
        for (from, to) in edges.keys() {
            successors[index(from)].push(index(to));
        }
        Self { nodes, successors }
    }
}

/// Tarjan's strongly connected components, recursively (the graphs here
/// have tens of nodes).
#[derive(Debug)]
struct Tarjan<'a> {
    graph: &'a Adjacency,
    index: Vec<Option<usize>>,
    low: Vec<usize>,
    stack: Vec<usize>,
    on_stack: Vec<bool>,
    next_index: usize,
    components: Vec<Vec<usize>>,
}

impl Tarjan<'_> {
    fn connect(&mut self, node: usize) {
        self.index[node] = Some(self.next_index);
        self.low[node] = self.next_index;
        self.next_index += 1;
        self.stack.push(node);
        self.on_stack[node] = true;
        for &next in &self.graph.successors[node] {
            match self.index[next] {
                None => {
                    self.connect(next);
                    self.low[node] = self.low[node].min(self.low[next]);
                }
                Some(index) if self.on_stack[next] => self.low[node] = self.low[node].min(index),
                Some(_) => {}
            }
        }
        if Some(self.low[node]) == self.index[node] {
            let mut component = Vec::new();
            while let Some(member) = self.stack.pop() {
                self.on_stack[member] = false;
                component.push(member);
                if member == node {
                    break;
                }
            }
            self.components.push(component);
        }
    }
}

/// A depth-first search for elementary cycles through nodes no smaller
/// than the path's first node, so each cycle is found once, and only
/// within the first node's component, where every cycle through it lies.
#[derive(Debug)]
struct CycleSearch<'a> {
    graph: &'a Adjacency,
    /// Each node's strongly connected component.
    component: Vec<usize>,
    path: Vec<usize>,
    on_path: Vec<bool>,
    found: Vec<Vec<usize>>,
    limit: usize,
}

impl CycleSearch<'_> {
    fn extend(&mut self, node: usize) {
        let start = self.path[0];
        for &next in &self.graph.successors[node] {
            if self.found.len() > self.limit {
                return;
            }
            if next == start && self.path.len() > 2 {
                self.found.push(self.path.clone());
            } else if next > start
                && !self.on_path[next]
                && self.component[next] == self.component[start]
            {
                self.path.push(next);
                self.on_path[next] = true;
                self.extend(next);
                self.on_path[next] = false;
                self.path.pop();
            }
        }
    }
}

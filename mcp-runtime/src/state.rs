//! Application state: values the application owns (a database pool, an
//! HTTP client, its configuration) handed to handlers explicitly.
//!
//! ```no_run
//! use mcp_runtime::{State, tool};
//!
//! #[derive(Clone)]
//! struct Greeting(String);
//!
//! /// Greets someone.
//! #[tool]
//! async fn greet(name: String, #[ctx] greeting: State<Greeting>) -> String {
//!     format!("{}, {name}!", greeting.0.0)
//! }
//!
//! fn main() -> std::process::ExitCode {
//!     mcp_runtime::server!()
//!         .state(Greeting("Hello".into()))
//!         .run()
//! }
//! ```
//!
//! Each type is one value: [`ServerBuilder::state`](crate::ServerBuilder::state)
//! given a second value of a type replaces the first. A handler that takes
//! a state the server was not given stops the server when it is built,
//! with an error naming the handler and the type, before anything is
//! served; nothing is ever looked up and found missing while a request
//! runs.

use std::any::{Any, TypeId};
use std::fmt;
use std::ops::{Deref, DerefMut};
use std::sync::Arc;

use crate::changes::Changes;

/// A state the server was given with
/// [`ServerBuilder::state`](crate::ServerBuilder::state), taken by a
/// handler as a `#[ctx]` parameter: `#[ctx] db: State<PgPool>`.
///
/// The value is cloned for each request that takes it, as axum's `State`
/// is: pools and clients are handles (`PgPool`, `reqwest::Client`), and
/// anything else can be kept in an `Arc`.
#[derive(Clone, Copy, Debug, Default)]
pub struct State<T>(pub T);

impl<T> Deref for State<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

impl<T> DerefMut for State<T> {
    fn deref_mut(&mut self) -> &mut T {
        &mut self.0
    }
}

/// What a `#[ctx]` parameter needs besides the request itself: what
/// [`FromContext::REQUIRES`](crate::FromContext::REQUIRES) lists.
///
/// A [state](Requirement::state) is checked against the server's states
/// when it is built: a server without it refuses to start. A
/// [request extension](Requirement::extension), which a request layer
/// attaches, is checked for each request before the handler runs: a
/// request without it is answered with an internal error (`-32603`) naming
/// the type, and the handler does not run.
#[derive(Clone, Copy)]
pub struct Requirement {
    kind: RequirementKind,
    id: fn() -> TypeId,
    name: fn() -> &'static str,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RequirementKind {
    State,
    Extension,
}

impl Requirement {
    /// The state of type `T` ([`ServerBuilder::state`](crate::ServerBuilder::state)).
    pub const fn state<T: Send + Sync + 'static>() -> Requirement {
        Requirement {
            kind: RequirementKind::State,
            id: TypeId::of::<T>,
            name: std::any::type_name::<T>,
        }
    }

    /// The request extension of type `T`, which a request layer attaches
    /// ([`middleware::Extensions`](crate::middleware::Extensions)).
    pub const fn extension<T: Send + Sync + 'static>() -> Requirement {
        Requirement {
            kind: RequirementKind::Extension,
            id: TypeId::of::<T>,
            name: std::any::type_name::<T>,
        }
    }

    /// The type's name, as `std::any::type_name` spells it.
    pub fn name(&self) -> &'static str {
        (self.name)()
    }

    pub(crate) fn id(&self) -> TypeId {
        (self.id)()
    }

    pub(crate) fn kind(&self) -> RequirementKind {
        self.kind
    }
}

impl fmt::Debug for Requirement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind {
            RequirementKind::State => write!(f, "state {}", self.name()),
            RequirementKind::Extension => write!(f, "request extension {}", self.name()),
        }
    }
}

/// The application's states, one value per type. Cheap to clone.
#[derive(Clone, Default)]
pub struct States {
    /// Few entries (a pool, a config): a scan beats hashing.
    values: Vec<(TypeId, &'static str, Arc<dyn Any + Send + Sync>)>,
}

impl fmt::Debug for States {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list()
            .entries(self.values.iter().map(|(_, name, _)| name))
            .finish()
    }
}

impl States {
    /// No states.
    pub fn new() -> States {
        States::default()
    }

    /// Adds `value`, replacing a value of the same type.
    pub fn insert<T: Send + Sync + 'static>(&mut self, value: T) {
        let id = TypeId::of::<T>();
        let entry = (id, std::any::type_name::<T>(), Arc::new(value) as _);
        match self.values.iter_mut().find(|(other, ..)| *other == id) {
            Some(slot) => *slot = entry,
            None => self.values.push(entry),
        }
    }

    /// The value of type `T`, if there is one.
    pub fn get<T: Send + Sync + 'static>(&self) -> Option<&T> {
        let id = TypeId::of::<T>();
        self.values
            .iter()
            .find(|(other, ..)| *other == id)
            .and_then(|(_, _, value)| value.downcast_ref())
    }

    /// Whether there is a value of the type `wanted`.
    pub(crate) fn has(&self, wanted: &Requirement) -> bool {
        let id = wanted.id();
        self.values.iter().any(|(other, ..)| *other == id)
    }

    /// The types held, for messages.
    pub(crate) fn names(&self) -> Vec<&'static str> {
        self.values.iter().map(|(_, name, _)| *name).collect()
    }

    pub(crate) fn extend(&mut self, other: States) {
        for (id, name, value) in other.values {
            match self
                .values
                .iter_mut()
                .find(|(existing, ..)| *existing == id)
            {
                Some(slot) => *slot = (id, name, value),
                None => self.values.push((id, name, value)),
            }
        }
    }
}

/// What every request of one server shares: its change announcements,
/// the application's states and its counters. One `Arc`, cloned into each
/// request's scope.
#[derive(Clone, Debug)]
pub(crate) struct App(Arc<AppParts>);

#[derive(Debug)]
struct AppParts {
    changes: Changes,
    states: States,
    metrics: crate::metrics::Metrics,
}

impl App {
    pub(crate) fn new(changes: Changes, states: States, metrics: crate::metrics::Metrics) -> App {
        App(Arc::new(AppParts {
            changes,
            states,
            metrics,
        }))
    }

    pub(crate) fn changes(&self) -> &Changes {
        &self.0.changes
    }

    pub(crate) fn states(&self) -> &States {
        &self.0.states
    }

    /// The server's counters.
    pub(crate) fn metrics(&self) -> &crate::metrics::Metrics {
        &self.0.metrics
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_value_per_type() {
        let mut states = States::new();
        states.insert(1_u32);
        states.insert(String::from("a"));
        states.insert(2_u32);
        assert_eq!(states.get::<u32>(), Some(&2));
        assert_eq!(states.get::<String>().map(String::as_str), Some("a"));
        assert_eq!(states.get::<u64>(), None);
        assert!(states.has(&Requirement::state::<String>()));
        assert!(!states.has(&Requirement::state::<i8>()));
        assert_eq!(states.names(), ["u32", "alloc::string::String"]);
    }
}

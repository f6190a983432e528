//! A server's tasks (the Tasks extension): its runtime, and the engine
//! that drives them. The engine itself lives in [`crate::tasks`]: the
//! innermost item layer of every `#[tool(task)]` tool.

use std::sync::Arc;

use crate::extension::Extension;
use crate::middleware::ItemLayer;
use crate::mrtr::Clock;
use crate::registry::ToolEntry;
use crate::tasks::{Followed, TaskEngine, TaskHost, TaskOptions, TaskPlan, TaskStore};

/// A server's tasks: its runtime, and the engine that drives them.
#[derive(Clone)]
pub(crate) struct Tasks {
    pub(crate) runtime: Arc<TaskHost>,
    engine: &'static TaskEngine,
}

impl std::fmt::Debug for Tasks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tasks")
            .field("runtime", &self.runtime)
            .finish_non_exhaustive()
    }
}

impl Tasks {
    /// The tasks of a server whose engine is `engine` (a task tool's, or
    /// `ServerBuilder::with(TaskOptions)`'), run with `options` (the defaults when
    /// `None`), kept in `shared` (the server's shared state) unless the
    /// options say where.
    pub(crate) fn new(
        engine: &'static TaskEngine,
        options: Option<TaskOptions>,
        shared: Option<Arc<dyn TaskStore>>,
        clock: Clock,
    ) -> Tasks {
        Tasks {
            runtime: (engine.runtime)(options, shared, clock),
            engine,
        }
    }

    /// The extension serving `tasks/get`, `tasks/update`, `tasks/cancel`.
    pub(crate) fn extension(&self) -> Extension {
        (self.engine.extension)(&self.runtime)
    }

    /// Those of the tasks `ids` that `owner` has, as they are now.
    pub(crate) async fn followed(&self, ids: Vec<String>, owner: &str) -> Vec<Followed> {
        (self.engine.followed)(&self.runtime, ids, owner).await
    }

    /// The layer that runs `entry`'s calls as tasks, if it is a task tool.
    pub(crate) fn layer(&self, entry: &ToolEntry) -> Option<ItemLayer> {
        let task = entry.task?;
        let plan = TaskPlan {
            required: task.required,
            answer_within_ms: task.answer_within_ms,
            ttl_ms: task.ttl_ms,
            poll_interval_ms: task.poll_interval_ms,
            asks: entry.asks.len(),
        };
        Some((self.engine.layer)(&self.runtime, plan))
    }
}

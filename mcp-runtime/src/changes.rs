//! Publishing changes to clients listening with `subscriptions/listen`.
//!
//! Application code (a handler, a file watcher, a database trigger) tells
//! the runtime what changed through [`Changes`]; every open subscription
//! whose filter asked for that kind of change receives a notification.
//! Fan-out goes through a [`ChangeBus`]: the default is in-process; a
//! shared backend (Redis pub/sub, Postgres `LISTEN`) can span instances.

use std::fmt;
use std::sync::Arc;

use tokio::sync::broadcast;

/// Something that changed.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Change {
    /// The tool list changed.
    ToolsListChanged,
    /// The prompt list changed.
    PromptsListChanged,
    /// The resource list changed.
    ResourcesListChanged,
    /// The resource at this URI changed.
    ResourceUpdated(String),
    /// A task's state changed (the Tasks extension).
    Task(TaskNotice),
    /// The bus may have missed changes (a shared bus lost its connection):
    /// subscriptions end, so that their clients read again and listen
    /// anew rather than miss what was announced meanwhile. Sent by buses to
    /// their own subscribers, never published.
    Interrupted,
}

/// A task's new state, for `notifications/tasks` on the `subscriptions/listen`
/// streams of its owner that asked for it by id.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TaskNotice {
    /// The task's id.
    pub task_id: String,
    /// Whose task it is: only that caller's subscriptions receive it.
    pub owner: String,
    /// Whether the task has ended: nothing about it follows this notice.
    pub terminal: bool,
    /// The notification's params (a `DetailedTask`, as `tasks/get` shows
    /// it), as a JSON object without `_meta`.
    pub params: std::sync::Arc<str>,
}

/// Carries changes from publishers to subscriptions.
pub trait ChangeBus: Send + Sync + 'static {
    /// Sends `change` to every current subscriber (of every instance, for a
    /// shared bus).
    fn publish(&self, change: Change);

    /// A new subscriber, receiving changes published from now on.
    fn subscribe(&self) -> broadcast::Receiver<Change>;

    /// Whether subscribers hear every instance now (a shared bus whose
    /// connection is down does not): a new subscription is refused, with a
    /// retryable error, while it is `false`.
    fn connected(&self) -> bool {
        true
    }
}

/// The default bus: subscribers in this process only.
#[derive(Debug)]
pub struct InProcessBus {
    sender: broadcast::Sender<Change>,
}

impl InProcessBus {
    /// A bus buffering up to `capacity` changes per slow subscriber.
    pub fn new(capacity: usize) -> Self {
        InProcessBus {
            sender: broadcast::channel(capacity.max(1)).0,
        }
    }
}

impl Default for InProcessBus {
    fn default() -> Self {
        InProcessBus::new(1024)
    }
}

impl ChangeBus for InProcessBus {
    fn publish(&self, change: Change) {
        // No subscriber is not an error: nobody is listening right now.
        let _ = self.sender.send(change);
    }

    fn subscribe(&self) -> broadcast::Receiver<Change> {
        self.sender.subscribe()
    }
}

/// The handle application code uses to announce changes. Cheap to clone;
/// get it from [`Server::changes`](crate::Server::changes) or
/// [`Context::changes`](crate::Context::changes).
#[derive(Clone)]
pub struct Changes {
    bus: Arc<dyn ChangeBus>,
}

impl fmt::Debug for Changes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Changes").finish_non_exhaustive()
    }
}

impl Changes {
    pub(crate) fn new(bus: Arc<dyn ChangeBus>) -> Self {
        Changes { bus }
    }

    /// The tool list changed.
    pub fn tools_changed(&self) {
        self.bus.publish(Change::ToolsListChanged);
    }

    /// The prompt list changed.
    pub fn prompts_changed(&self) {
        self.bus.publish(Change::PromptsListChanged);
    }

    /// The resource list changed.
    pub fn resources_changed(&self) {
        self.bus.publish(Change::ResourcesListChanged);
    }

    /// The resource at `uri` changed.
    pub fn resource_updated(&self, uri: impl Into<String>) {
        self.bus.publish(Change::ResourceUpdated(uri.into()));
    }

    /// A task's state changed.
    pub(crate) fn task_changed(&self, notice: TaskNotice) {
        self.bus.publish(Change::Task(notice));
    }

    pub(crate) fn subscribe(&self) -> broadcast::Receiver<Change> {
        self.bus.subscribe()
    }

    /// Whether the bus hears every instance now.
    pub(crate) fn connected(&self) -> bool {
        self.bus.connected()
    }
}

//! The threads tasks run on. Handlers need not be `Send`, so a task's
//! future is built on the thread that runs it, from a job that is: each
//! worker is a single-threaded runtime with a `LocalSet`, like the
//! transports' own workers. They start with the first task, so a server
//! that never runs one keeps its threads to itself.

use std::future::Future;
use std::pin::Pin;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::sync::mpsc::{UnboundedSender, unbounded_channel};

/// Builds a task's future on the worker that runs it.
pub(crate) type Job = Box<dyn FnOnce() -> Pin<Box<dyn Future<Output = ()>>> + Send>;

/// The task workers of one server.
#[derive(Debug)]
pub(crate) struct Workers {
    threads: usize,
    senders: OnceLock<Vec<UnboundedSender<Job>>>,
    next: AtomicUsize,
}

impl Workers {
    pub(crate) fn new(threads: usize) -> Self {
        Workers {
            threads: threads.max(1),
            senders: OnceLock::new(),
            next: AtomicUsize::new(0),
        }
    }

    /// Runs `job` on a worker (round robin); `Err` if no worker could be
    /// started.
    pub(crate) fn spawn(&self, job: Job) -> Result<(), &'static str> {
        let senders = self.senders.get_or_init(|| start(self.threads));
        if senders.is_empty() {
            return Err("no task worker thread could be started");
        }
        let index = self.next.fetch_add(1, Ordering::Relaxed) % senders.len();
        senders[index]
            .send(job)
            .map_err(|_| "the task worker thread has stopped")
    }
}

/// Starts `threads` workers; those that fail to start are logged and left
/// out.
fn start(threads: usize) -> Vec<UnboundedSender<Job>> {
    (0..threads)
        .filter_map(|index| match start_one(index) {
            Ok(sender) => Some(sender),
            Err(error) => {
                tracing::error!(%error, "a task worker thread could not be started");
                None
            }
        })
        .collect()
}

fn start_one(index: usize) -> std::io::Result<UnboundedSender<Job>> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let (sender, mut jobs) = unbounded_channel::<Job>();
    std::thread::Builder::new()
        .name(format!("mcp-task-{index}"))
        .spawn(move || {
            let local = tokio::task::LocalSet::new();
            local.block_on(&runtime, async move {
                while let Some(job) = jobs.recv().await {
                    tokio::task::spawn_local(job());
                }
            });
        })?;
    Ok(sender)
}

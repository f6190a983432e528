//! The default task store: this process's memory, bounded.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use serde_json::{Map, Value};
use tokio::sync::Notify;

use super::record::{Signals, TaskRecord, TaskUpdate};
use super::store::{StoreError, StoreFuture, TaskStore};
use crate::security::fair::FairShare;

/// Keeps tasks in this process's memory: a task lives as long as the
/// process, and only this instance sees it (give instances behind a load
/// balancer a shared store).
///
/// Bounded: at most [`max_tasks`](Self::max_tasks) tasks and
/// [`max_bytes`](Self::max_bytes) of results, messages and requests in all,
/// [`max_per_owner`](Self::max_per_owner) running tasks per owner, and
/// [`max_finished_per_owner`](Self::max_finished_per_owner) finished ones
/// (past it, the owner's oldest finished task makes room: finished work
/// never blocks new work); a task is dropped once its `ttlMs` has passed.
///
/// Shared fairly: one owner holds at most 1/8 of `max_tasks`, running and
/// finished together, and once less than half of the store is free, less
/// than 1/8 of what is free (its oldest finished tasks make room first).
/// So a handful of callers cannot fill the store for everyone: it takes
/// 63 of them for the default 10,000 tasks.
#[derive(Debug)]
pub struct InMemoryTaskStore {
    inner: Mutex<Inner>,
    limits: Limits,
}

#[derive(Clone, Copy, Debug)]
struct Limits {
    tasks: usize,
    bytes: usize,
    per_owner: usize,
    finished_per_owner: usize,
}

#[derive(Debug, Default)]
struct Inner {
    tasks: HashMap<String, Entry>,
    /// Sum of the entries' sizes.
    bytes: usize,
    /// Running (not yet finished) tasks by owner.
    owners: HashMap<String, usize>,
    /// Finished tasks by owner, oldest first.
    finished: HashMap<String, VecDeque<String>>,
    /// Expiry times, soonest first (an entry may be gone already).
    expiry: BinaryHeap<Reverse<(u64, String)>>,
}

#[derive(Debug)]
struct Entry {
    record: TaskRecord,
    size: usize,
    /// Wakes the worker waiting for signals.
    wake: Arc<Notify>,
    /// Counted among its owner's finished tasks (no longer running).
    finished: bool,
}

impl Default for InMemoryTaskStore {
    fn default() -> Self {
        InMemoryTaskStore {
            inner: Mutex::default(),
            limits: Limits {
                tasks: 10_000,
                bytes: 128 * 1024 * 1024,
                per_owner: 1_000,
                finished_per_owner: 2_000,
            },
        }
    }
}

impl InMemoryTaskStore {
    /// A store with the default limits: 10,000 tasks, 128 MiB, 1,000
    /// running and 2,000 finished tasks per owner.
    pub fn new() -> Self {
        InMemoryTaskStore::default()
    }

    /// The most tasks kept at once (default 10,000).
    #[must_use]
    pub fn max_tasks(mut self, tasks: usize) -> Self {
        self.limits.tasks = tasks.max(1);
        self
    }

    /// The most bytes of results, messages, requests and answers kept at
    /// once (default 128 MiB). A result that would not fit fails its task
    /// with an error saying so.
    #[must_use]
    pub fn max_bytes(mut self, bytes: usize) -> Self {
        self.limits.bytes = bytes.max(1);
        self
    }

    /// The most running tasks one owner may have (default 1,000); a new
    /// one past it is refused (`-31000`, HTTP 429) until some finish.
    #[must_use]
    pub fn max_per_owner(mut self, tasks: usize) -> Self {
        self.limits.per_owner = tasks.max(1);
        self
    }

    /// The most finished tasks (with their results) kept for one owner
    /// until they expire (default 2,000); past it, the owner's oldest
    /// finished task is dropped, and reads as unknown.
    #[must_use]
    pub fn max_finished_per_owner(mut self, tasks: usize) -> Self {
        self.limits.finished_per_owner = tasks.max(1);
        self
    }

    /// How many tasks are kept now (expired ones included until they are
    /// swept).
    pub fn len(&self) -> usize {
        self.lock().tasks.len()
    }

    /// Whether no task is kept.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn create_now(&self, record: TaskRecord) -> Result<(), StoreError> {
        let mut inner = self.lock();
        inner.sweep(record.created_at_ms);
        let limits = self.limits;
        if inner.tasks.len() >= limits.tasks {
            return Err(StoreError::Full(format!(
                "it holds {} tasks, its limit",
                limits.tasks
            )));
        }
        let size = record.size();
        if inner.bytes + size > limits.bytes {
            return Err(StoreError::Full(format!(
                "it holds {} of its {} bytes",
                inner.bytes, limits.bytes
            )));
        }
        let owned = inner.owners.get(&record.owner).copied().unwrap_or(0);
        if owned >= limits.per_owner {
            return Err(StoreError::Quota(format!(
                "this caller has {owned} running tasks, the most one caller may have until some finish"
            )));
        }
        inner.make_fair_room(&record.owner, limits.tasks)?;
        if inner.tasks.contains_key(&record.id) {
            return Err(StoreError::Unavailable("task id collision".into()));
        }
        *inner.owners.entry(record.owner.clone()).or_default() += 1;
        inner.bytes += size;
        inner
            .expiry
            .push(Reverse((record.expires_at_ms(), record.id.clone())));
        let entry = Entry {
            record,
            size,
            wake: Arc::default(),
            finished: false,
        };
        inner.tasks.insert(entry.record.id.clone(), entry);
        Ok(())
    }

    fn update_now(
        &self,
        id: &str,
        worker: &str,
        update: TaskUpdate,
        now_ms: u64,
    ) -> Result<TaskRecord, StoreError> {
        let mut inner = self.lock();
        inner.sweep(now_ms);
        let limit = self.limits.bytes;
        let Inner { tasks, bytes, .. } = &mut *inner;
        let entry = tasks.get_mut(id).ok_or(StoreError::LeaseLost)?;
        if !entry.record.run_by(worker) {
            return Err(StoreError::LeaseLost);
        }
        entry.record.apply(update, now_ms);
        let size = entry.record.size();
        if *bytes - entry.size + size > limit {
            // What the worker wrote does not fit: the task ends with an
            // error that says so, rather than pushing others out.
            let message = format!(
                "the task's state ({size} bytes) does not fit in the task store ({limit} bytes)"
            );
            entry.record.fail(&message);
        }
        let size = entry.record.size();
        *bytes = *bytes - entry.size + size;
        entry.size = size;
        let record = entry.record.clone();
        inner.settle(id, self.limits.finished_per_owner);
        Ok(record)
    }

    /// Runs `change` on the owner's live task `id`; `None` when there is
    /// none. Wakes its worker when `wake` (a client's answer or cancel).
    fn for_owner(
        &self,
        id: &str,
        owner: &str,
        now_ms: u64,
        wake: bool,
        change: impl FnOnce(&mut TaskRecord),
    ) -> Option<TaskRecord> {
        let mut inner = self.lock();
        inner.sweep(now_ms);
        let Inner { tasks, bytes, .. } = &mut *inner;
        let entry = tasks.get_mut(id).filter(|e| e.record.owner == owner)?;
        if entry.record.is_orphaned(now_ms) {
            entry.record.orphan(now_ms);
        }
        change(&mut entry.record);
        let size = entry.record.size();
        *bytes = *bytes - entry.size + size;
        entry.size = size;
        if wake {
            entry.wake.notify_one();
        }
        let record = entry.record.clone();
        inner.settle(id, self.limits.finished_per_owner);
        Some(record)
    }

    fn take_signals(&self, id: &str, worker: &str) -> Result<(Signals, Arc<Notify>), StoreError> {
        let mut inner = self.lock();
        let Inner { tasks, bytes, .. } = &mut *inner;
        let entry = tasks.get_mut(id).ok_or(StoreError::LeaseLost)?;
        let record = &mut entry.record;
        if !record.run_by(worker) {
            return Err(StoreError::LeaseLost);
        }
        let responses = std::mem::take(&mut record.mailbox);
        let signals = Signals::new(responses, record.cancel_requested);
        let size = entry.record.size();
        *bytes = *bytes - entry.size + size;
        entry.size = size;
        Ok((signals, entry.wake.clone()))
    }
}

impl Inner {
    /// Drops the tasks whose time is up.
    fn sweep(&mut self, now_ms: u64) {
        while let Some(Reverse((at, _))) = self.expiry.peek() {
            if *at > now_ms {
                break;
            }
            let Some(Reverse((_, id))) = self.expiry.pop() else {
                break;
            };
            let Some(entry) = self.tasks.remove(&id) else {
                continue;
            };
            self.forget(&id, &entry);
        }
    }

    /// Moves the task `id` from its owner's running tasks to the finished
    /// ones once it has ended, dropping the owner's oldest finished task
    /// when there are more than `bound`.
    fn settle(&mut self, id: &str, bound: usize) {
        let Some(entry) = self.tasks.get_mut(id) else {
            return;
        };
        if entry.finished || !entry.record.status.is_terminal() {
            return;
        }
        entry.finished = true;
        let owner = entry.record.owner.clone();
        self.uncount(&owner);
        let finished = self.finished.entry(owner).or_default();
        finished.push_back(id.to_owned());
        if finished.len() <= bound {
            return;
        }
        let Some(oldest) = finished.pop_front() else {
            return;
        };
        if let Some(entry) = self.tasks.remove(&oldest) {
            self.bytes -= entry.size;
            entry.wake.notify_one();
        }
    }

    /// Room for one more task of `owner` under the fair-share rule
    /// (`security::fair`): an owner holds at most 1/8 of the store, and
    /// once less than half of it is free, less than 1/8 of what is free.
    /// Its own oldest finished tasks make room first (finished work never
    /// blocks new work); running ones never do, and past them the owner is
    /// refused: the biggest holders are refused first, and a handful of
    /// callers cannot fill the store for everyone.
    fn make_fair_room(&mut self, owner: &str, capacity: usize) -> Result<(), StoreError> {
        let rule = FairShare::new(capacity);
        loop {
            let running = self.owners.get(owner).copied().unwrap_or(0);
            let finished = self.finished.get(owner).map_or(0, VecDeque::len);
            let free = capacity.saturating_sub(self.tasks.len());
            if rule.admits(running + finished, free) {
                return Ok(());
            }
            let oldest = self.finished.get_mut(owner).and_then(VecDeque::pop_front);
            let Some(oldest) = oldest else {
                return Err(StoreError::Quota(format!(
                    "this caller has {running} running tasks, its share of a task store that is running short"
                )));
            };
            if let Some(entry) = self.tasks.remove(&oldest) {
                self.bytes -= entry.size;
                entry.wake.notify_one();
            }
            if self.finished.get(owner).is_some_and(VecDeque::is_empty) {
                self.finished.remove(owner);
            }
        }
    }

    /// Takes a removed task out of the counts.
    fn forget(&mut self, id: &str, entry: &Entry) {
        self.bytes -= entry.size;
        let owner = &entry.record.owner;
        if !entry.finished {
            self.uncount(owner);
        } else if let Some(finished) = self.finished.get_mut(owner) {
            finished.retain(|kept| kept != id);
            if finished.is_empty() {
                self.finished.remove(owner);
            }
        }
        // Its worker, if it still runs, finds the task gone and stops.
        entry.wake.notify_one();
    }

    /// One running task fewer for `owner`.
    fn uncount(&mut self, owner: &str) {
        if let Some(count) = self.owners.get_mut(owner) {
            *count -= 1;
            if *count == 0 {
                self.owners.remove(owner);
            }
        }
    }
}

impl TaskStore for InMemoryTaskStore {
    fn create(&self, task: TaskRecord) -> StoreFuture<'_, ()> {
        Box::pin(std::future::ready(self.create_now(task)))
    }

    fn get<'a>(
        &'a self,
        id: &'a str,
        owner: &'a str,
        now_ms: u64,
    ) -> StoreFuture<'a, Option<TaskRecord>> {
        Box::pin(std::future::ready(Ok(self.for_owner(
            id,
            owner,
            now_ms,
            false,
            |_| (),
        ))))
    }

    fn update<'a>(
        &'a self,
        id: &'a str,
        worker: &'a str,
        update: TaskUpdate,
        now_ms: u64,
    ) -> StoreFuture<'a, TaskRecord> {
        Box::pin(std::future::ready(
            self.update_now(id, worker, update, now_ms),
        ))
    }

    fn respond<'a>(
        &'a self,
        id: &'a str,
        owner: &'a str,
        responses: Map<String, Value>,
        now_ms: u64,
    ) -> StoreFuture<'a, Option<TaskRecord>> {
        let record = self.for_owner(id, owner, now_ms, true, |record| {
            record.deliver(responses, now_ms);
        });
        Box::pin(std::future::ready(Ok(record)))
    }

    fn cancel<'a>(
        &'a self,
        id: &'a str,
        owner: &'a str,
        now_ms: u64,
    ) -> StoreFuture<'a, Option<TaskRecord>> {
        let record = self.for_owner(id, owner, now_ms, true, |record| {
            if record.outcome.is_none() {
                record.cancel_requested = true;
            }
        });
        Box::pin(std::future::ready(Ok(record)))
    }

    fn signals<'a>(
        &'a self,
        id: &'a str,
        worker: &'a str,
        wait: Duration,
    ) -> StoreFuture<'a, Signals> {
        Box::pin(async move {
            let (signals, wake) = self.take_signals(id, worker)?;
            if !signals.is_empty() {
                return Ok(signals);
            }
            // `notify_one` leaves a permit when nobody waits, so a signal
            // sent between the look above and this wait is not lost.
            let _ = tokio::time::timeout(wait, wake.notified()).await;
            Ok(self.take_signals(id, worker)?.0)
        })
    }
}

//! Tasks in Redis: every instance sees every task, and `tasks/update` and
//! `tasks/cancel` reach the worker running it wherever they land.

use std::time::Duration;

use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use super::{Redis, RedisUnavailable};
use mcp_runtime::tasks::{Signals, StoreError, StoreFuture, TaskRecord, TaskStore, TaskUpdate};

/// Creates a task: refused when its owner has `quota` running tasks
/// (those whose expiry has passed are dropped from the counts first), when
/// the fair-share rule (`security::fair`) refuses its owner a slot of the
/// store's `max_tasks`, or when the id is taken. Before refusing by the
/// rule, the owner's finished tasks closest to expiry make room: they are
/// popped here, and the caller deletes their records.
/// KEYS: the task, the owner's running index, its finished index, the index
/// of every task. ARGV: the record, its expiry (ms since the epoch), now
/// (ms), the quota, the task id, `max_tasks`.
/// Returns `{verdict, popped ids...}`.
const CREATE: &str = r"
local now, quota, capacity = ARGV[3], tonumber(ARGV[4]), tonumber(ARGV[6])
for i = 2, 4 do redis.call('ZREMRANGEBYSCORE', KEYS[i], '-inf', now) end
local running = redis.call('ZCARD', KEYS[2])
if running >= quota then return {'quota'} end
local share = math.max(1, math.floor(capacity / 8))
local function admits(held, free)
  if free <= 0 or held >= share then return false end
  return free * 2 >= capacity or held * 8 < free
end
local popped = {}
while true do
  local finished = redis.call('ZCARD', KEYS[3])
  local free = capacity - redis.call('ZCARD', KEYS[4])
  if admits(running + finished, free) then break end
  if finished == 0 then
    if free <= 0 then return {'full'} end
    return {'share'}
  end
  local oldest = redis.call('ZPOPMIN', KEYS[3])
  redis.call('ZREM', KEYS[4], oldest[1])
  popped[#popped + 1] = oldest[1]
end
if redis.call('EXISTS', KEYS[1]) == 1 then return {'taken'} end
redis.call('HSET', KEYS[1], 'v', 1, 'r', ARGV[1])
redis.call('PEXPIREAT', KEYS[1], ARGV[2])
for _, index in ipairs({KEYS[2], KEYS[4]}) do
  redis.call('ZADD', index, ARGV[2], ARGV[5])
  local last = redis.call('ZRANGE', index, -1, -1, 'WITHSCORES')
  redis.call('PEXPIREAT', index, last[2])
end
table.insert(popped, 1, 'ok')
return popped
";

/// Moves a task that has ended from its owner's running tasks to the
/// finished ones (once: a second call finds it gone), and pops the
/// finished ones past the bound, soonest to expire first, for the caller
/// to delete. KEYS: the owner's running index, its finished index, the
/// index of every task. ARGV: the task id, its expiry, now (ms), the bound.
const SETTLE: &str = r"
if redis.call('ZREM', KEYS[1], ARGV[1]) == 0 then return {} end
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', ARGV[3])
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[1])
local last = redis.call('ZRANGE', KEYS[2], -1, -1, 'WITHSCORES')
redis.call('PEXPIREAT', KEYS[2], last[2])
local over = redis.call('ZCARD', KEYS[2]) - tonumber(ARGV[4])
if over <= 0 then return {} end
local popped = redis.call('ZPOPMIN', KEYS[2], over)
local ids = {}
for i = 1, #popped, 2 do
  ids[#ids + 1] = popped[i]
  redis.call('ZREM', KEYS[3], popped[i])
end
return ids
";

/// Replaces a task's record if it is still at version ARGV[1] (a write
/// made since is not overwritten: the caller reads again and retries).
/// KEYS: the task. ARGV: the version read, the new record.
const REPLACE: &str = r"
if redis.call('HGET', KEYS[1], 'v') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'v', tonumber(ARGV[1]) + 1, 'r', ARGV[2])
return 1
";

/// How often a write is retried when another instance wrote in between.
const RETRIES: usize = 16;

/// A [`TaskStore`] in Redis, shared by every instance: records (state,
/// results, questions and answers) as JSON under the server's key prefix,
/// each expiring with its task's `ttlMs`; writes are compare-and-set on a
/// version, so a worker's progress and a client's answer never overwrite
/// each other. A worker waiting for answers is woken over pub/sub, and
/// reads its task again at least every few seconds anyway (a wake lost
/// with a dropped connection only delays it).
///
/// Task results and questions may hold user data: Redis keeps them in
/// clear until the task expires. Bound that with `TaskOptions::max_ttl`,
/// and protect the Redis as you would the data. Redis without persistence
/// loses every task when it restarts; a lost task reads as unknown, so
/// turn persistence on (AOF) where tasks must survive that.
#[derive(Debug, Clone)]
pub struct RedisTaskStore {
    redis: Redis,
    max_tasks: usize,
    per_owner: usize,
    finished_per_owner: usize,
    max_bytes: usize,
}

impl RedisTaskStore {
    /// A store over `redis`: at most 100,000 tasks in all, 1,000 running
    /// and 2,000 finished tasks per owner, records of at most 4 MiB.
    pub fn new(redis: &Redis) -> Self {
        RedisTaskStore {
            redis: redis.clone(),
            max_tasks: 100_000,
            per_owner: 1_000,
            finished_per_owner: 2_000,
            max_bytes: 4 * 1024 * 1024,
        }
    }

    /// The most tasks kept at once, by every instance together (default
    /// 100,000; a full store refuses new ones with `-31001`, HTTP 503).
    /// Shared fairly (`security::fair`): one owner holds at most 1/8 of
    /// them, running and finished together, and once less than half are
    /// free, less than 1/8 of what is free; its finished tasks closest to
    /// expiry make room first. So a handful of callers cannot fill the
    /// store, nor grow Redis without bound: it takes about 80 of them.
    #[must_use]
    pub fn max_tasks(mut self, tasks: usize) -> Self {
        self.max_tasks = tasks.max(1);
        self
    }

    /// The most running tasks one owner may have (default 1,000); a new
    /// one past it is refused (`-31000`, HTTP 429) until some finish.
    #[must_use]
    pub fn max_per_owner(mut self, tasks: usize) -> Self {
        self.per_owner = tasks.max(1);
        self
    }

    /// The most finished tasks (with their results) kept for one owner
    /// (default 2,000); past it, the owner's finished task closest to
    /// expiry is deleted, and reads as unknown.
    #[must_use]
    pub fn max_finished_per_owner(mut self, tasks: usize) -> Self {
        self.finished_per_owner = tasks.max(1);
        self
    }

    /// The largest record kept (default 4 MiB): a result that would not fit
    /// fails its task with an error saying so.
    #[must_use]
    pub fn max_bytes(mut self, bytes: usize) -> Self {
        self.max_bytes = bytes.max(1024);
        self
    }

    fn task_key(&self, id: &str) -> String {
        self.redis.key(&format!("task:{id}"))
    }

    /// The owner's index: its key is a digest, so that an owner's name
    /// (a principal's id) bounds nothing and shows nothing.
    fn owner_key(&self, owner: &str) -> String {
        let digest = Sha256::digest(owner.as_bytes());
        let hex = crate::hex(&digest);
        self.redis.key(&format!("owner:{hex}"))
    }

    /// The index of every task, by expiry: what `max_tasks` bounds.
    fn all_key(&self) -> String {
        self.redis.key("tasks")
    }

    /// The owner's index of finished tasks.
    fn finished_key(&self, owner: &str) -> String {
        format!("{}:done", self.owner_key(owner))
    }

    /// Counts `record`, once it has ended, among its owner's finished
    /// tasks rather than its running ones, and deletes the finished ones
    /// past the bound. A failure only delays it: the task leaves the
    /// running count when it expires.
    async fn settle(&self, record: &TaskRecord, now_ms: u64) {
        if !record.status.is_terminal() {
            return;
        }
        static SCRIPT: std::sync::OnceLock<::redis::Script> = std::sync::OnceLock::new();
        let script = SCRIPT.get_or_init(|| ::redis::Script::new(SETTLE));
        let keys = vec![
            self.owner_key(&record.owner),
            self.finished_key(&record.owner),
            self.all_key(),
        ];
        let args = vec![
            record.id.clone(),
            record.expires_at_ms().to_string(),
            now_ms.to_string(),
            self.finished_per_owner.to_string(),
        ];
        let popped: Result<Vec<String>, _> = self.redis.script(script, keys, args).await;
        let dropped = match popped {
            Ok(ids) if ids.is_empty() => return,
            Ok(ids) => ids,
            Err(error) => {
                tracing::warn!(%error, task = %record.id, "a finished task stays counted as running until it expires");
                return;
            }
        };
        self.delete(&dropped).await;
    }

    /// Deletes the records of finished tasks an index no longer holds. A
    /// failure leaves them readable until they expire; they no longer
    /// count.
    async fn delete(&self, ids: &[String]) {
        if ids.is_empty() {
            return;
        }
        let mut command = ::redis::cmd("DEL");
        for id in ids {
            command.arg(self.task_key(id));
        }
        if let Err(error) = self.redis.query::<i64>(command).await {
            tracing::warn!(%error, "finished tasks past the bound stay until they expire");
        }
    }

    /// The record of task `id` and its version, if it exists.
    async fn read(&self, id: &str) -> Result<Option<(String, TaskRecord)>, StoreError> {
        let mut command = ::redis::cmd("HMGET");
        command.arg(self.task_key(id)).arg("v").arg("r");
        let (version, record): (Option<String>, Option<String>) =
            self.redis.query(command).await.map_err(unavailable)?;
        let (Some(version), Some(record)) = (version, record) else {
            return Ok(None);
        };
        let record = serde_json::from_str(&record).map_err(|error| {
            StoreError::Unavailable(format!("a stored task does not read: {error}"))
        })?;
        Ok(Some((version, record)))
    }

    /// Writes `record` over version `version`: `false` when another write
    /// came first.
    async fn replace(&self, version: &str, record: &TaskRecord) -> Result<bool, StoreError> {
        static SCRIPT: std::sync::OnceLock<::redis::Script> = std::sync::OnceLock::new();
        let script = SCRIPT.get_or_init(|| ::redis::Script::new(REPLACE));
        let json =
            serde_json::to_string(record).map_err(|e| StoreError::Unavailable(e.to_string()))?;
        let keys = vec![self.task_key(&record.id)];
        let replaced: i64 = self
            .redis
            .script(script, keys, vec![version.to_owned(), json])
            .await
            .map_err(unavailable)?;
        Ok(replaced == 1)
    }

    /// Reads task `id`, applies `change` (`None`: nothing to write, or the
    /// caller's refusal) and writes it back, again and again while other
    /// writes come in between. `Ok(None)`: no such task.
    async fn modify<T>(
        &self,
        id: &str,
        mut change: impl FnMut(&mut TaskRecord) -> Result<Option<T>, StoreError>,
    ) -> Result<Option<(TaskRecord, T)>, StoreError>
    where
        T: Default,
    {
        for _ in 0..RETRIES {
            let Some((version, mut record)) = self.read(id).await? else {
                return Ok(None);
            };
            let Some(outcome) = change(&mut record)? else {
                return Ok(Some((record, T::default())));
            };
            self.fit(&mut record);
            if self.replace(&version, &record).await? {
                return Ok(Some((record, outcome)));
            }
        }
        Err(StoreError::Unavailable(
            "the task changed too often to be written; retry".into(),
        ))
    }

    /// A record larger than the store keeps ends its task, saying why,
    /// rather than being written.
    fn fit(&self, record: &mut TaskRecord) {
        let size = record.size();
        if size > self.max_bytes {
            let message = format!(
                "the task's state ({size} bytes) does not fit in the task store ({} bytes)",
                self.max_bytes
            );
            record.fail(&message);
        }
    }

    /// Wakes the worker of task `id`, on whichever instance it runs.
    async fn wake(&self, id: &str) {
        let mut command = ::redis::cmd("PUBLISH");
        command.arg(self.redis.wake_channel()).arg(id);
        // A lost wake only delays the worker until its next look.
        if let Err(error) = self.redis.query::<i64>(command).await {
            tracing::debug!(%error, "a task's worker could not be woken");
        }
    }

    /// The owner's live task `id`, failed first if its worker stopped;
    /// `change` applied (`true`: written, and the worker woken).
    async fn for_owner(
        &self,
        id: &str,
        owner: &str,
        now_ms: u64,
        mut change: impl FnMut(&mut TaskRecord) -> bool,
    ) -> Result<Option<TaskRecord>, StoreError> {
        let (mut woke, mut orphaned) = (false, false);
        let found = self
            .modify(id, |record| {
                if record.owner != owner {
                    return Err(StoreError::LeaseLost);
                }
                orphaned = record.is_orphaned(now_ms);
                if orphaned {
                    record.orphan(now_ms);
                }
                woke = change(record);
                Ok((orphaned || woke).then_some(()))
            })
            .await;
        let found = match found {
            // Another owner's task looks exactly like an unknown one.
            Err(StoreError::LeaseLost) => return Ok(None),
            other => other?,
        };
        if woke {
            self.wake(id).await;
        }
        let found = found.map(|(record, ())| record);
        if let Some(record) = found.as_ref().filter(|_| orphaned) {
            // Failed just now: its worker is gone.
            self.settle(record, now_ms).await;
        }
        Ok(found)
    }

    /// The signals of task `id` for `worker`, taken out of its record.
    async fn take_signals(&self, id: &str, worker: &str) -> Result<Signals, StoreError> {
        let mut taken = Signals::default();
        let found = self
            .modify(id, |record| {
                if !record.run_by(worker) {
                    return Err(StoreError::LeaseLost);
                }
                let responses = std::mem::take(&mut record.mailbox);
                taken = Signals::new(responses, record.cancel_requested);
                // Only taken answers need a write; a cancel stays set.
                Ok((!taken.responses.is_empty()).then_some(()))
            })
            .await?;
        match found {
            Some(_) => Ok(taken),
            None => Err(StoreError::LeaseLost),
        }
    }
}

impl RedisTaskStore {
    /// What the create script's verdict means.
    fn verdict(&self, verdict: &str) -> Result<(), StoreError> {
        match verdict {
            "ok" => Ok(()),
            "quota" => Err(StoreError::Quota(format!(
                "this caller has {} running tasks, the most one caller may have until some finish",
                self.per_owner
            ))),
            "share" => Err(StoreError::Quota(
                "this caller holds its share of a task store that is running short".into(),
            )),
            "full" => Err(StoreError::Full(format!(
                "it holds {} tasks, its limit",
                self.max_tasks
            ))),
            _ => Err(StoreError::Unavailable("task id collision".into())),
        }
    }
}

fn unavailable(error: RedisUnavailable) -> StoreError {
    StoreError::Unavailable(error.0)
}

impl TaskStore for RedisTaskStore {
    fn create(&self, task: TaskRecord) -> StoreFuture<'_, ()> {
        Box::pin(async move {
            static SCRIPT: std::sync::OnceLock<::redis::Script> = std::sync::OnceLock::new();
            let script = SCRIPT.get_or_init(|| ::redis::Script::new(CREATE));
            let json =
                serde_json::to_string(&task).map_err(|e| StoreError::Unavailable(e.to_string()))?;
            let keys = vec![
                self.task_key(&task.id),
                self.owner_key(&task.owner),
                self.finished_key(&task.owner),
                self.all_key(),
            ];
            let args = vec![
                json,
                task.expires_at_ms().to_string(),
                task.created_at_ms.to_string(),
                self.per_owner.to_string(),
                task.id.clone(),
                self.max_tasks.to_string(),
            ];
            let verdict: Vec<String> = self
                .redis
                .script(script, keys, args)
                .await
                .map_err(unavailable)?;
            let Some((verdict, popped)) = verdict.split_first() else {
                return Err(StoreError::Unavailable("no verdict from Redis".into()));
            };
            self.delete(popped).await;
            self.verdict(verdict)
        })
    }

    fn get<'a>(
        &'a self,
        id: &'a str,
        owner: &'a str,
        now_ms: u64,
    ) -> StoreFuture<'a, Option<TaskRecord>> {
        Box::pin(self.for_owner(id, owner, now_ms, |_| false))
    }

    fn update<'a>(
        &'a self,
        id: &'a str,
        worker: &'a str,
        update: TaskUpdate,
        now_ms: u64,
    ) -> StoreFuture<'a, TaskRecord> {
        Box::pin(async move {
            let written = self
                .modify(id, |record| {
                    if !record.run_by(worker) {
                        return Err(StoreError::LeaseLost);
                    }
                    record.apply(update.clone(), now_ms);
                    Ok(Some(()))
                })
                .await?;
            let record = written
                .map(|(record, ())| record)
                .ok_or(StoreError::LeaseLost)?;
            self.settle(&record, now_ms).await;
            Ok(record)
        })
    }

    fn respond<'a>(
        &'a self,
        id: &'a str,
        owner: &'a str,
        responses: Map<String, Value>,
        now_ms: u64,
    ) -> StoreFuture<'a, Option<TaskRecord>> {
        Box::pin(self.for_owner(id, owner, now_ms, move |record| {
            record.deliver(responses.clone(), now_ms)
        }))
    }

    fn cancel<'a>(
        &'a self,
        id: &'a str,
        owner: &'a str,
        now_ms: u64,
    ) -> StoreFuture<'a, Option<TaskRecord>> {
        Box::pin(self.for_owner(id, owner, now_ms, |record| {
            let asked = record.outcome.is_none() && !record.cancel_requested;
            if asked {
                record.cancel_requested = true;
            }
            asked
        }))
    }

    fn signals<'a>(
        &'a self,
        id: &'a str,
        worker: &'a str,
        wait: Duration,
    ) -> StoreFuture<'a, Signals> {
        Box::pin(async move {
            // Registered before the first look, so that a wake sent between
            // the look and the wait is not lost.
            let waker = self.redis.waker(id);
            let signals = async {
                let signals = self.take_signals(id, worker).await?;
                if !signals.is_empty() {
                    return Ok(signals);
                }
                let _ = tokio::time::timeout(wait, waker.notified()).await;
                self.take_signals(id, worker).await
            }
            .await;
            self.redis.drop_waker(id);
            signals
        })
    }
}

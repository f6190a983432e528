//! Shared state in Redis for [`mcp_runtime`] servers: what several
//! instances behind a load balancer must agree on, so that none of it
//! needs sticky routing. A plugin on the runtime's public seam
//! ([`Setup::shared_state`](mcp_runtime::plugin::Setup::shared_state)).
//!
//! [The Redis plugin](RedisConfig) switches all of it on:
//! - change fan-out over pub/sub ([`RedisBus`]): a subscription on any
//!   instance hears what any instance announces;
//! - the single-use `requestState` guard ([`RedisReplayGuard`]): an atomic
//!   `SET NX` whose expiry is the state's remaining lifetime;
//! - the per-client rate limit ([`RedisRateLimiter`]): one budget for every
//!   instance, kept by an atomic script (GCRA);
//! - the task store ([`RedisTaskStore`]): tasks, their results and
//!   questions, visible to every instance, with the worker's lease;
//! - with the `legacy` feature (on by default), legacy HTTP sessions'
//!   settings (log level, subscriptions), their end (DELETE), and the
//!   client's answers and cancellations, forwarded to the instance whose
//!   request waits for them.
//!
//! The client is `redis` (redis-rs) with its tokio connection manager: the
//! maintained Rust client, multiplexed connections that reconnect by
//! themselves, server-side scripts, pub/sub. Its connections live on a
//! thread of their own (`mcp-redis`), one per server, so that they outlive
//! every request and every worker's runtime.
//!
//! When Redis cannot be reached, what needs it fails fast with a retryable
//! error (`503` with `Retry-After` over HTTP): a single-use state is
//! refused rather than let through, a task cannot be created or read. The
//! rate limit falls back to each instance's own budget (logged), so plain
//! calls, lists and discover keep working; subscriptions end with
//! `notifications/cancelled` when the bus loses its connection (what was
//! announced meanwhile cannot be replayed), and new ones are refused until
//! it is back.
//!
//! ```rust,no_run
//! use std::time::Duration;
//!
//! use mcp_runtime::ServerBuilder;
//! use mcp_runtime_redis::{Redis, RedisBus, RedisConfig, RedisReplayGuard};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! // All of it.
//! let config = RedisConfig::new("redis://10.0.0.5:6379")
//!     .key_prefix("notes:") // one prefix per server sharing the Redis
//!     .timeout(Duration::from_millis(500));
//! let server = ServerBuilder::new("notes", "1.0.0").with(config).build()?;
//!
//! // All of it when `MCP_REDIS_URL` is set (and `MCP_REDIS_PREFIX`), else
//! // nothing: each instance keeps its own.
//! let server = ServerBuilder::new("notes", "1.0.0")
//!     .with(RedisConfig::from_env())
//!     .build()?;
//!
//! // Or only some parts: single-use states and change fan-out here.
//! let shared = Redis::connect(&RedisConfig::new("redis://10.0.0.5:6379"))?;
//! let server = ServerBuilder::new("notes", "1.0.0")
//!     .with(mcp_runtime::plugin::from_fn(|server| {
//!         server
//!             .replay_guard(RedisReplayGuard::new(&shared))
//!             .change_bus(RedisBus::new(&shared));
//!     }))
//!     .build()?;
//! # let _ = server;
//! # Ok(())
//! # }
//! ```

mod bus;
mod plugin;
mod rate;
mod replay;
#[cfg(feature = "legacy")]
mod sessions;
mod tasks;

use std::fmt;
use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use ::redis::aio::{ConnectionManager, ConnectionManagerConfig};
use ::redis::{Cmd, FromRedisValue};
use tokio_util::sync::CancellationToken;

pub use self::bus::RedisBus;
pub use self::rate::RedisRateLimiter;
pub use self::replay::RedisReplayGuard;
#[cfg(feature = "legacy")]
pub(crate) use self::sessions::RedisSessions;
pub use self::tasks::RedisTaskStore;

/// The environment variable that switches the shared state on: a Redis
/// URL (`redis://[user:password@]host[:port][/db]`).
pub const REDIS_URL_ENV: &str = "MCP_REDIS_URL";

/// The environment variable that sets the key prefix (default `mcp:`).
pub const REDIS_PREFIX_ENV: &str = "MCP_REDIS_PREFIX";

/// How to reach Redis, and how the server's keys are named there.
#[derive(Clone)]
#[must_use]
pub struct RedisConfig {
    url: String,
    prefix: String,
    timeout: Duration,
    connect_timeout: Duration,
    pool: usize,
}

impl fmt::Debug for RedisConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RedisConfig")
            .field("url", &redacted(&self.url))
            .field("prefix", &self.prefix)
            .field("timeout", &self.timeout)
            .field("connect_timeout", &self.connect_timeout)
            .field("pool", &self.pool)
            .finish()
    }
}

impl RedisConfig {
    /// Redis at `url` (`redis://[user:password@]host[:port][/db]`), keys
    /// under `mcp:`, commands given a second, connections half a second,
    /// two multiplexed connections.
    pub fn new(url: impl Into<String>) -> Self {
        RedisConfig {
            url: url.into(),
            prefix: "mcp:".into(),
            timeout: Duration::from_secs(1),
            connect_timeout: Duration::from_millis(500),
            pool: 2,
        }
    }

    /// The prefix of every key and channel (default `mcp:`), so that
    /// several servers can share one Redis: give each its own.
    pub fn key_prefix(mut self, prefix: impl Into<String>) -> Self {
        self.prefix = prefix.into();
        self
    }

    /// How long one command may take before it fails (default 1 s): what
    /// needs Redis fails after this rather than hang.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout.max(Duration::from_millis(10));
        self
    }

    /// How long connecting may take (default 500 ms).
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout.max(Duration::from_millis(10));
        self
    }

    /// How many multiplexed connections carry commands (default 2; each
    /// pipelines any number of requests).
    pub fn pool_size(mut self, connections: usize) -> Self {
        self.pool = connections.clamp(1, 64);
        self
    }

    /// The configuration `MCP_REDIS_URL` gives, if it is set, with the key
    /// prefix `MCP_REDIS_PREFIX` gives, if that is set.
    pub fn from_env() -> Option<Self> {
        let url = std::env::var(REDIS_URL_ENV).ok()?;
        let config = (!url.trim().is_empty()).then(|| RedisConfig::new(url.trim()))?;
        Some(match std::env::var(REDIS_PREFIX_ENV) {
            Ok(prefix) if !prefix.is_empty() => config.key_prefix(prefix),
            _ => config,
        })
    }
}

impl From<&str> for RedisConfig {
    fn from(url: &str) -> Self {
        RedisConfig::new(url)
    }
}

impl From<String> for RedisConfig {
    fn from(url: String) -> Self {
        RedisConfig::new(url)
    }
}

/// A random id (144 bits, base64url): this instance's, told apart from the
/// others' on the shared channels.
fn new_id() -> String {
    use base64::Engine as _;
    let mut bytes = [0_u8; 18];
    getrandom::fill(&mut bytes).expect("the operating system's random source is available");
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

/// Lowercase hex of `bytes`.
fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    bytes
        .iter()
        .fold(String::with_capacity(bytes.len() * 2), |mut out, byte| {
            let _ = write!(out, "{byte:02x}");
            out
        })
}

/// `url` without its password, for logs.
fn redacted(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(scheme), Some(at)) if at > scheme => {
            format!("{}://***@{}", &url[..scheme], &url[at + 1..])
        }
        _ => url.to_owned(),
    }
}

/// Why a Redis operation failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RedisUnavailable(pub String);

impl fmt::Display for RedisUnavailable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Redis is unavailable: {}", self.0)
    }
}

impl std::error::Error for RedisUnavailable {}

/// A connection to Redis shared by every part of one server: cheap to
/// clone. Built by [`Redis::connect`], which does not wait for Redis: the
/// connections are made on first use and remade whenever they fail. Its
/// commands run on a thread of its own (`mcp-redis`), which stops when the
/// last clone drops (with the server whose stores hold them).
#[derive(Clone)]
pub struct Redis {
    inner: Arc<Inner>,
    /// Keeps the `mcp-redis` thread running while a handle lives (the
    /// stores of a server hold theirs): the last one to drop stops it.
    /// `None` in the pub/sub listener's own copy, which runs on that
    /// thread and must not keep it alive.
    _thread: Option<Arc<IoThread>>,
}

struct Inner {
    prefix: String,
    timeout: Duration,
    url: String,
    client: ::redis::Client,
    pool: Vec<ConnectionManager>,
    next: AtomicUsize,
    /// The runtime of this handle's `mcp-redis` thread, where every
    /// command runs.
    io: tokio::runtime::Handle,
    /// Random per process: tells this instance's messages from others'.
    instance: String,
    /// Whether the pub/sub connection is up (it carries changes and wakes).
    listening: AtomicBool,
    pubsub: pubsub::Routes,
    /// Where failed commands are counted: the server's that connected.
    metrics: mcp_runtime::metrics::Metrics,
}

impl fmt::Debug for Redis {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Redis")
            .field("url", &redacted(&self.inner.url))
            .field("prefix", &self.inner.prefix)
            .field("instance", &self.inner.instance)
            .finish_non_exhaustive()
    }
}

impl Redis {
    /// A handle on Redis as `config` says. Fails only for a URL that is not
    /// a Redis URL; an unreachable Redis is found out on use (and retried).
    pub fn connect(config: &RedisConfig) -> Result<Redis, RedisUnavailable> {
        Redis::connect_counting(config, mcp_runtime::metrics::Metrics::default())
    }

    /// [`connect`](Self::connect), counting failed commands into a
    /// server's `metrics`.
    pub(crate) fn connect_counting(
        config: &RedisConfig,
        metrics: mcp_runtime::metrics::Metrics,
    ) -> Result<Redis, RedisUnavailable> {
        let client = ::redis::Client::open(config.url.as_str())
            .map_err(|error| RedisUnavailable(format!("{}: {error}", redacted(&config.url))))?;
        let (io, thread) = io_thread()?;
        let manager_config = ConnectionManagerConfig::new()
            .set_connection_timeout(Some(config.connect_timeout))
            .set_response_timeout(Some(config.timeout))
            // Fail fast: a request waits for at most one quick retry; the
            // manager keeps reconnecting in the background.
            .set_number_of_retries(1)
            .set_max_delay(Duration::from_millis(500));
        let _entered = io.enter();
        let pool = (0..config.pool)
            .map(|_| {
                ConnectionManager::new_lazy_with_config(client.clone(), manager_config.clone())
            })
            .collect::<Result<Vec<_>, _>>()
            .map_err(|error| RedisUnavailable(error.to_string()))?;
        let redis = Redis {
            inner: Arc::new(Inner {
                prefix: config.prefix.clone(),
                timeout: config.timeout,
                url: config.url.clone(),
                client,
                pool,
                next: AtomicUsize::new(0),
                io: io.clone(),
                instance: new_id(),
                listening: AtomicBool::new(false),
                pubsub: pubsub::Routes::default(),
                metrics,
            }),
            _thread: Some(Arc::new(thread)),
        };
        io.spawn(pubsub::listen(redis.detached()));
        tracing::info!(url = %redacted(&config.url), prefix = %config.prefix, "shared state in Redis");
        Ok(redis)
    }

    /// A copy that does not keep the `mcp-redis` thread running: for the
    /// tasks that run on it for the life of the handle.
    fn detached(&self) -> Redis {
        Redis {
            inner: self.inner.clone(),
            _thread: None,
        }
    }

    /// `name` under the server's prefix.
    pub(crate) fn key(&self, name: &str) -> String {
        format!("{}{name}", self.inner.prefix)
    }

    /// When Redis's memory of this server's single-use states begins, and
    /// for which Redis process (`<ms>:<run_id>`).
    pub(crate) fn memory_key(&self) -> String {
        self.key("replay-memory")
    }

    /// This process's identity among the instances.
    pub(crate) fn instance(&self) -> &str {
        &self.inner.instance
    }

    /// Whether the pub/sub connection is up.
    pub(crate) fn listening(&self) -> bool {
        self.inner.listening.load(Ordering::Acquire)
    }

    /// Runs `command` on the Redis thread, within the command timeout.
    pub(crate) async fn query<T>(&self, command: Cmd) -> Result<T, RedisUnavailable>
    where
        T: FromRedisValue + Send + 'static,
    {
        let mut connection = self.connection();
        self.run(async move { command.query_async(&mut connection).await })
            .await
    }

    /// Runs `script` with `keys` and `args` on the Redis thread.
    pub(crate) async fn script<T>(
        &self,
        script: &'static ::redis::Script,
        keys: Vec<String>,
        args: Vec<String>,
    ) -> Result<T, RedisUnavailable>
    where
        T: FromRedisValue + Send + 'static,
    {
        let mut connection = self.connection();
        self.run(async move {
            let mut invocation = script.prepare_invoke();
            for key in keys {
                invocation.key(key);
            }
            for arg in args {
                invocation.arg(arg);
            }
            invocation.invoke_async(&mut connection).await
        })
        .await
    }

    /// Runs `work` on the Redis thread, in the background.
    pub(crate) fn spawn(&self, work: impl Future<Output = ()> + Send + 'static) {
        drop(self.inner.io.spawn(work));
    }

    fn connection(&self) -> ConnectionManager {
        let index = self.inner.next.fetch_add(1, Ordering::Relaxed) % self.inner.pool.len();
        self.inner.pool[index].clone()
    }

    /// Runs `operation` on the Redis thread (which runs while this handle
    /// lives), failing after the command timeout.
    async fn run<T, F>(&self, operation: F) -> Result<T, RedisUnavailable>
    where
        T: Send + 'static,
        F: Future<Output = ::redis::RedisResult<T>> + Send + 'static,
    {
        let timeout = self.inner.timeout;
        let task = self
            .inner
            .io
            .spawn(async move { tokio::time::timeout(timeout, operation).await });
        let failure = match task.await {
            Ok(Ok(Ok(value))) => return Ok(value),
            Ok(Ok(Err(error))) => error.to_string(),
            Ok(Err(_)) => format!("no answer within {} ms", timeout.as_millis()),
            Err(_) => "the Redis thread stopped".to_owned(),
        };
        self.inner.metrics.shared_store_error();
        Err(RedisUnavailable(failure))
    }
}

/// A handle's `mcp-redis` thread: stopped when dropped. Its runtime then
/// drops what runs on it (the pub/sub listener, commands in flight, which
/// their callers see fail), so nothing of the handle outlives it.
struct IoThread {
    stop: CancellationToken,
}

impl Drop for IoThread {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

/// Starts a `mcp-redis` thread: one per [`Redis::connect`], so one per
/// server that shares state, each stopped with its last handle rather than
/// kept for the life of the process.
fn io_thread() -> Result<(tokio::runtime::Handle, IoThread), RedisUnavailable> {
    let unavailable =
        |error: std::io::Error| RedisUnavailable(format!("the Redis thread cannot start: {error}"));
    let stop = CancellationToken::new();
    let stopped = stop.clone();
    let (sender, receiver) = std::sync::mpsc::channel();
    std::thread::Builder::new()
        .name("mcp-redis".into())
        .spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build();
            let runtime = match runtime {
                Ok(runtime) => runtime,
                Err(error) => {
                    let _ = sender.send(Err(error));
                    return;
                }
            };
            let _ = sender.send(Ok(runtime.handle().clone()));
            runtime.block_on(stopped.cancelled());
        })
        .map_err(unavailable)?;
    let io = receiver
        .recv()
        .map_err(|_| RedisUnavailable("the Redis thread stopped as it started".to_owned()))?
        .map_err(unavailable)?;
    Ok((io, IoThread { stop }))
}

mod pubsub {
    //! The one pub/sub connection of a handle (and its clones): changes
    //! from other instances, and wake-ups for this instance's task workers. Made again
    //! whenever it drops; while it is down, the bus says so.

    use std::collections::HashMap;
    use std::sync::atomic::Ordering;
    use std::sync::{Arc, Mutex};
    use std::time::Duration;

    use futures_util::StreamExt as _;
    use tokio::sync::Notify;

    use super::Redis;

    /// What receives a message's payload.
    type Deliver = Box<dyn Fn(&[u8]) + Send + Sync>;

    /// What receives a sessions message: `false` once it is gone.
    pub(crate) type DeliverWhileAlive = Box<dyn Fn(&[u8]) -> bool + Send + Sync>;

    /// Where messages go.
    #[derive(Default)]
    pub(super) struct Routes {
        /// Changes from other instances (set by the bus).
        pub(super) changes: Mutex<Option<Deliver>>,
        /// Told when the connection drops (set by the bus).
        pub(super) interrupted: Mutex<Option<Box<dyn Fn() + Send + Sync>>>,
        /// Task workers of this instance waiting for signals, by task id.
        pub(super) wakers: Mutex<HashMap<String, Arc<Notify>>>,
        /// Legacy HTTP endpoints of this server (messages about sessions).
        pub(super) sessions: Mutex<Vec<DeliverWhileAlive>>,
    }

    fn locked<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
        mutex
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    impl Redis {
        /// The channel changes are announced on.
        pub(crate) fn changes_channel(&self) -> String {
            self.key("changes")
        }

        /// The channel that wakes task workers: the payload is a task id,
        /// and the instance whose worker waits for that task wakes it.
        pub(crate) fn wake_channel(&self) -> String {
            self.key("wake")
        }

        /// The channel instances forward legacy sessions' messages on.
        pub(crate) fn sessions_channel(&self) -> String {
            self.key("session")
        }

        /// Adds a receiver of sessions messages (one per HTTP endpoint).
        #[cfg_attr(
            not(feature = "legacy"),
            expect(dead_code, reason = "only legacy HTTP sessions forward")
        )]
        pub(crate) fn on_session(&self, deliver: DeliverWhileAlive) {
            locked(&self.inner.pubsub.sessions).push(deliver);
        }

        pub(super) fn on_changes(&self, deliver: impl Fn(&[u8]) + Send + Sync + 'static) {
            *locked(&self.inner.pubsub.changes) = Some(Box::new(deliver));
        }

        pub(super) fn on_interrupted(&self, notify: impl Fn() + Send + Sync + 'static) {
            *locked(&self.inner.pubsub.interrupted) = Some(Box::new(notify));
        }

        /// The notifier a task worker of this instance waits on.
        pub(crate) fn waker(&self, task: &str) -> Arc<Notify> {
            locked(&self.inner.pubsub.wakers)
                .entry(task.to_owned())
                .or_default()
                .clone()
        }

        /// Forgets a task's notifier (its worker stopped waiting).
        pub(crate) fn drop_waker(&self, task: &str) {
            locked(&self.inner.pubsub.wakers).remove(task);
        }
    }

    /// Keeps the pub/sub connection up for the life of the handle's thread
    /// (`redis` is a detached copy, which does not keep it running).
    pub(super) async fn listen(redis: Redis) {
        let mut delay = Duration::from_millis(50);
        loop {
            match session(&redis).await {
                Ok(()) => {
                    delay = Duration::from_millis(50);
                    tracing::warn!("Redis pub/sub connection closed; reconnecting");
                }
                Err(error) => {
                    tracing::warn!(%error, "Redis pub/sub connection failed; reconnecting");
                }
            }
            if redis.inner.listening.swap(false, Ordering::AcqRel)
                && let Some(interrupted) = &*locked(&redis.inner.pubsub.interrupted)
            {
                interrupted();
            }
            // Wake every waiting worker: it reads its task again, so a
            // wake sent while the connection was down is not lost.
            for waker in locked(&redis.inner.pubsub.wakers).values() {
                waker.notify_one();
            }
            tokio::time::sleep(delay).await;
            delay = (delay * 2).min(Duration::from_secs(2));
        }
    }

    /// One connection's life: subscribe, then deliver until it drops.
    async fn session(redis: &Redis) -> Result<(), ::redis::RedisError> {
        let connect = redis.inner.client.get_async_pubsub();
        let mut pubsub = tokio::time::timeout(Duration::from_secs(2), connect)
            .await
            .map_err(|_| {
                std::io::Error::new(std::io::ErrorKind::TimedOut, "connect timed out")
            })??;
        let changes = redis.changes_channel();
        let wake = redis.wake_channel();
        let sessions = redis.sessions_channel();
        pubsub.subscribe(&changes).await?;
        pubsub.subscribe(&wake).await?;
        pubsub.subscribe(&sessions).await?;
        redis.inner.listening.store(true, Ordering::Release);
        tracing::debug!("Redis pub/sub connected");

        let mut messages = pubsub.into_on_message();
        while let Some(message) = messages.next().await {
            // (A stream that ends is a connection that dropped.)
            let channel = message.get_channel_name();
            if channel == changes {
                if let Some(deliver) = &*locked(&redis.inner.pubsub.changes) {
                    deliver(message.get_payload_bytes());
                }
            } else if channel == wake {
                let task = String::from_utf8_lossy(message.get_payload_bytes());
                if let Some(waker) = locked(&redis.inner.pubsub.wakers).get(&*task) {
                    waker.notify_one();
                }
            } else if channel == sessions {
                let payload = message.get_payload_bytes();
                locked(&redis.inner.pubsub.sessions).retain(|deliver| deliver(payload));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_stay_out_of_logs() {
        assert_eq!(
            redacted("redis://user:secret@cache:6379/2"),
            "redis://***@cache:6379/2"
        );
        assert_eq!(redacted("redis://127.0.0.1:6379"), "redis://127.0.0.1:6379");
        let config = RedisConfig::new("redis://:hunter2@h");
        assert!(!format!("{config:?}").contains("hunter2"));
    }

    #[test]
    fn the_io_thread_stops_when_the_last_handle_drops() {
        // Whether Redis answers does not matter: the pub/sub listener
        // runs (and retries) on the thread either way.
        let redis = Redis::connect(&RedisConfig::new("redis://127.0.0.1:6379")).unwrap();
        let clone = redis.clone();
        let inner = Arc::downgrade(&redis.inner);
        drop(redis);
        std::thread::sleep(Duration::from_millis(100));
        assert!(inner.upgrade().is_some(), "a clone keeps the handle alive");
        drop(clone);
        // The listener's task holds the connection's state until the
        // thread's runtime, stopped, drops it.
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        while inner.upgrade().is_some() {
            assert!(
                std::time::Instant::now() < deadline,
                "the Redis thread still runs 5 s after the last handle dropped"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

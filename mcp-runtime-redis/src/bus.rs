//! Change fan-out across instances over Redis pub/sub.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use tokio::sync::{broadcast, mpsc};

use super::Redis;
use mcp_runtime::{Change, ChangeBus, TaskNotice};

/// The most changes waiting to be published while Redis is slow or away.
const BACKLOG: usize = 4096;
/// How long a change may wait for Redis before it is dropped (and the drop
/// logged as an error): long enough for a restart, short enough that a
/// late notification is still news.
const MAX_AGE: Duration = Duration::from_secs(30);

/// A [`ChangeBus`] whose subscribers, on every instance that shares the
/// Redis, receive what any instance publishes.
///
/// A change reaches this instance's subscribers at once, without Redis,
/// and is published for the others; while Redis is away, changes wait (up
/// to 30 s, 4,096 of them) and are published once it is back. While this
/// instance's pub/sub connection is down it cannot hear the others, so its
/// subscriptions are ended ([`Change::Interrupted`]) and new ones refused
/// until it is up again: a client then re-reads and listens anew, instead
/// of silently missing what was announced meanwhile.
#[derive(Debug, Clone)]
pub struct RedisBus {
    redis: Redis,
    local: broadcast::Sender<Change>,
    outgoing: mpsc::Sender<(Instant, Vec<u8>)>,
}

/// A change on the wire.
#[derive(Serialize, Deserialize)]
struct Wire {
    /// The publishing instance.
    #[serde(rename = "o")]
    origin: String,
    #[serde(rename = "k")]
    kind: Kind,
    #[serde(rename = "u", default, skip_serializing_if = "Option::is_none")]
    uri: Option<String>,
    #[serde(rename = "t", default, skip_serializing_if = "Option::is_none")]
    task: Option<WireTask>,
}

#[derive(Serialize, Deserialize, Clone, Copy)]
#[serde(rename_all = "snake_case")]
enum Kind {
    Tools,
    Prompts,
    Resources,
    Updated,
    Task,
}

#[derive(Serialize, Deserialize)]
struct WireTask {
    id: String,
    owner: String,
    terminal: bool,
    params: String,
}

impl RedisBus {
    /// A bus over `redis`, buffering up to 1,024 changes per slow
    /// subscriber.
    pub fn new(redis: &Redis) -> Self {
        let local = broadcast::channel(1024).0;
        let (outgoing, queue) = mpsc::channel(BACKLOG);
        let bus = RedisBus {
            redis: redis.clone(),
            local,
            outgoing,
        };
        let deliver = bus.local.clone();
        let me = redis.instance().to_owned();
        redis.on_changes(move |payload| {
            if let Some(change) = decode(payload, &me) {
                let _ = deliver.send(change);
            }
        });
        let interrupted = bus.local.clone();
        redis.on_interrupted(move || {
            let _ = interrupted.send(Change::Interrupted);
        });
        redis.inner.io.spawn(publish(redis.clone(), queue));
        bus
    }
}

impl ChangeBus for RedisBus {
    fn publish(&self, change: Change) {
        if let Some(payload) = encode(&change, self.redis.instance())
            && self.outgoing.try_send((Instant::now(), payload)).is_err()
        {
            tracing::error!(
                "a change could not be queued for the other instances (Redis is away and {BACKLOG} wait): their subscribers miss it"
            );
        }
        let _ = self.local.send(change);
    }

    fn subscribe(&self) -> broadcast::Receiver<Change> {
        self.local.subscribe()
    }

    fn connected(&self) -> bool {
        self.redis.listening()
    }
}

/// Publishes queued changes in order, each until Redis takes it or it is
/// too old.
async fn publish(redis: Redis, mut queue: mpsc::Receiver<(Instant, Vec<u8>)>) {
    let channel = redis.changes_channel();
    let mut dropped = 0_u64;
    while let Some((queued, payload)) = queue.recv().await {
        let mut delay = Duration::from_millis(20);
        loop {
            let mut command = ::redis::cmd("PUBLISH");
            command.arg(&channel).arg(&payload);
            match redis.query::<i64>(command).await {
                Ok(_) => break,
                Err(error) if queued.elapsed() > MAX_AGE => {
                    dropped += 1;
                    tracing::error!(%error, dropped, "a change waited too long for Redis and was dropped: other instances' subscribers miss it");
                    break;
                }
                Err(_) => {
                    tokio::time::sleep(delay).await;
                    delay = (delay * 2).min(Duration::from_millis(500));
                }
            }
        }
    }
}

fn encode(change: &Change, origin: &str) -> Option<Vec<u8>> {
    let (kind, uri, task) = match change {
        Change::ToolsListChanged => (Kind::Tools, None, None),
        Change::PromptsListChanged => (Kind::Prompts, None, None),
        Change::ResourcesListChanged => (Kind::Resources, None, None),
        Change::ResourceUpdated(uri) => (Kind::Updated, Some(uri.clone()), None),
        Change::Task(notice) => {
            let task = WireTask {
                id: notice.task_id.clone(),
                owner: notice.owner.clone(),
                terminal: notice.terminal,
                params: notice.params.to_string(),
            };
            (Kind::Task, None, Some(task))
        }
        // This instance's own news: nothing for the others.
        Change::Interrupted => return None,
        // A kind of change newer than this crate (`Change` is
        // non-exhaustive): said, not silently kept from the others.
        other => {
            tracing::error!(change = ?other, "a change this version of mcp-runtime-redis cannot carry stays in this instance: upgrade mcp-runtime-redis with mcp-runtime");
            return None;
        }
    };
    let wire = Wire {
        origin: origin.to_owned(),
        kind,
        uri,
        task,
    };
    serde_json::to_vec(&wire).ok()
}

/// A change another instance published (`None` for this instance's own,
/// delivered already, and for what does not parse).
fn decode(payload: &[u8], me: &str) -> Option<Change> {
    let wire: Wire = serde_json::from_slice(payload).ok()?;
    if wire.origin == me {
        return None;
    }
    Some(match (wire.kind, wire.uri, wire.task) {
        (Kind::Tools, ..) => Change::ToolsListChanged,
        (Kind::Prompts, ..) => Change::PromptsListChanged,
        (Kind::Resources, ..) => Change::ResourcesListChanged,
        (Kind::Updated, Some(uri), _) => Change::ResourceUpdated(uri),
        (Kind::Task, _, Some(task)) => Change::Task(TaskNotice {
            task_id: task.id,
            owner: task.owner,
            terminal: task.terminal,
            params: Arc::from(task.params),
        }),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changes_cross_the_wire_and_an_instance_skips_its_own() {
        let notice = TaskNotice {
            task_id: "t1".into(),
            owner: "principal:alice".into(),
            terminal: true,
            params: Arc::from(r#"{"taskId":"t1","status":"completed"}"#),
        };
        for change in [
            Change::ToolsListChanged,
            Change::PromptsListChanged,
            Change::ResourcesListChanged,
            Change::ResourceUpdated("file:///a".into()),
            Change::Task(notice),
        ] {
            let payload = encode(&change, "a").unwrap();
            assert_eq!(decode(&payload, "b"), Some(change));
            assert_eq!(decode(&payload, "a"), None);
        }
        assert_eq!(encode(&Change::Interrupted, "a"), None);
        assert_eq!(decode(b"not json", "b"), None);
    }
}

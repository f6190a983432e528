//! Legacy HTTP sessions' shared part in Redis: one hash per session
//! (`{prefix}session:{nonce}`: `level`, `s:{uri}` per subscription, `ended`),
//! expiring with the session, and the `{prefix}session` channel for what
//! one instance hands to the others (answers to server-to-client
//! requests, `notifications/cancelled`, DELETE).

use std::collections::HashMap;

use ::redis::Script;
use serde::{Deserialize, Serialize};

use super::Redis;
use mcp_runtime::legacy::Live;
use mcp_runtime::legacy::{
    Forwarded, Receiver, SessionShare, Setting, ShareFuture, ShareUnavailable,
};
use mcp_runtime::protocol::LogLevel;

/// Sets or clears one field of a session's hash and keeps the hash until
/// the session expires. KEYS[1]: the hash; ARGV: field, value ('' clears),
/// expiry (Unix seconds).
static SAVE: std::sync::LazyLock<Script> = std::sync::LazyLock::new(|| {
    Script::new(
        r"
        if ARGV[2] == '' then
            redis.call('HDEL', KEYS[1], ARGV[1])
        else
            redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
        end
        redis.call('EXPIREAT', KEYS[1], ARGV[3])
        return 1
        ",
    )
});

/// Legacy sessions shared by every instance through Redis.
#[derive(Debug)]
pub(crate) struct RedisSessions {
    redis: Redis,
}

/// A message on the sessions channel.
#[derive(Serialize, Deserialize)]
struct Envelope {
    /// The instance that sent it (which ignores its own).
    #[serde(rename = "o")]
    origin: String,
    #[serde(rename = "n")]
    nonce: String,
    #[serde(flatten)]
    message: Forwarded,
}

impl RedisSessions {
    /// Sessions in `redis`.
    pub(crate) fn new(redis: &Redis) -> RedisSessions {
        RedisSessions {
            redis: redis.clone(),
        }
    }

    fn key(&self, nonce: &str) -> String {
        self.redis.key(&format!("session:{nonce}"))
    }

    async fn set(
        &self,
        nonce: &str,
        field: String,
        value: String,
        expires: u64,
    ) -> Result<(), ShareUnavailable> {
        let keys = vec![self.key(nonce)];
        let args = vec![field, value, expires.to_string()];
        self.redis
            .script::<i64>(&SAVE, keys, args)
            .await
            .map(drop)
            .map_err(|error| ShareUnavailable(error.to_string()))
    }
}

/// A session's hash as its settings: `None` once it was ended.
fn live_of(fields: HashMap<String, String>) -> Option<Live> {
    if fields.contains_key("ended") {
        return None;
    }
    let mut live = Live::default();
    for (field, value) in fields {
        if field == "level" {
            live.log_level = serde_json::from_value::<LogLevel>(value.into()).ok();
        } else if let Some(uri) = field.strip_prefix("s:") {
            live.subscriptions.insert(uri.to_owned());
        }
    }
    Some(live)
}

impl SessionShare for RedisSessions {
    fn load<'a>(&'a self, nonce: &'a str) -> ShareFuture<'a, Option<Live>> {
        Box::pin(async move {
            let mut command = ::redis::cmd("HGETALL");
            command.arg(self.key(nonce));
            let fields: HashMap<String, String> = self
                .redis
                .query(command)
                .await
                .map_err(|error| ShareUnavailable(error.to_string()))?;
            Ok(live_of(fields))
        })
    }

    fn save<'a>(&'a self, nonce: &'a str, setting: Setting, expires: u64) -> ShareFuture<'a, ()> {
        let (field, value) = match setting {
            Setting::Level(level) => (
                "level".to_owned(),
                serde_json::to_value(level)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_owned))
                    .unwrap_or_default(),
            ),
            Setting::Subscribed(uri, on) => {
                (format!("s:{uri}"), if on { "1" } else { "" }.to_owned())
            }
        };
        Box::pin(self.set(nonce, field, value, expires))
    }

    fn end<'a>(&'a self, nonce: &'a str, expires: u64) -> ShareFuture<'a, ()> {
        Box::pin(async move {
            self.set(nonce, "ended".into(), "1".into(), expires).await?;
            self.forward(nonce, Forwarded::Ended).await
        })
    }

    fn forward<'a>(&'a self, nonce: &'a str, message: Forwarded) -> ShareFuture<'a, ()> {
        Box::pin(async move {
            let envelope = Envelope {
                origin: self.redis.instance().to_owned(),
                nonce: nonce.to_owned(),
                message,
            };
            let payload =
                serde_json::to_string(&envelope).map_err(|e| ShareUnavailable(e.to_string()))?;
            let mut command = ::redis::cmd("PUBLISH");
            command.arg(self.redis.sessions_channel()).arg(payload);
            self.redis
                .query::<i64>(command)
                .await
                .map(drop)
                .map_err(|error| ShareUnavailable(error.to_string()))
        })
    }

    fn receive(&self, receiver: Receiver) {
        let instance = self.redis.instance().to_owned();
        self.redis.on_session(Box::new(move |payload| {
            match serde_json::from_slice::<Envelope>(payload) {
                Ok(envelope) if envelope.origin == instance => true,
                Ok(envelope) => receiver(&envelope.nonce, envelope.message),
                Err(error) => {
                    tracing::warn!(%error, "an unreadable message on the sessions channel");
                    true
                }
            }
        }));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashes_read_as_settings() {
        let fields = HashMap::from([
            ("level".to_owned(), "warning".to_owned()),
            ("s:file:///a".to_owned(), "1".to_owned()),
        ]);
        let live = live_of(fields).unwrap();
        assert_eq!(live.log_level, Some(LogLevel::Warning));
        assert_eq!(live.subscriptions, ["file:///a".to_owned()].into());
        assert_eq!(live_of(HashMap::new()), Some(Live::default()));
        assert_eq!(
            live_of(HashMap::from([("ended".to_owned(), "1".to_owned())])),
            None
        );
    }
}

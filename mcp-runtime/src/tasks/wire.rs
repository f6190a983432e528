//! Tasks on the wire: `CreateTaskResult`, `GetTaskResult`'s members (a
//! `DetailedTask`) and the `notifications/tasks` params, each written
//! straight from a [`TaskRecord`] (results and errors are copied as the
//! JSON text the store keeps).

use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::value::RawValue;
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use super::record::{TaskOutcome, TaskRecord};
use crate::protocol::meta::SERVER_INFO_KEY;

/// The `_meta` key of a task's last reported progress (this runtime's
/// own): `{"progress": n, "total": m}`, for clients that draw a bar.
pub const PROGRESS_META_KEY: &str = "rs.mcp-runtime/progress";

/// An ISO 8601 (RFC 3339) UTC timestamp with milliseconds.
pub(crate) fn timestamp(millis: u64) -> String {
    let nanos = i128::from(millis) * 1_000_000;
    OffsetDateTime::from_unix_timestamp_nanos(nanos)
        .ok()
        .and_then(|time| time.format(&Rfc3339).ok())
        .unwrap_or_else(|| "1970-01-01T00:00:00Z".to_owned())
}

/// Which shape of a task to write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Shape {
    /// `CreateTaskResult`: `resultType: "task"`, the task's fields only.
    Created,
    /// `notifications/tasks` params: the payload, and `_meta` naming the
    /// subscription.
    Notification,
    /// A `GetTaskResult`'s members but `resultType` and `_meta`, which
    /// the extension API writes.
    Members,
}

/// One task written in a [`Shape`].
pub(crate) struct Written<'a> {
    pub(crate) record: &'a TaskRecord,
    pub(crate) shape: Shape,
    pub(crate) server_info: Option<&'a RawValue>,
    /// The subscription a notification is for (its `_meta`).
    pub(crate) subscription: Option<&'a crate::protocol::RequestId>,
}

impl Serialize for Written<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let record = self.record;
        let mut map = serializer.serialize_map(None)?;
        match self.shape {
            Shape::Created => map.serialize_entry("resultType", "task")?,
            Shape::Notification | Shape::Members => {}
        }
        map.serialize_entry("taskId", &record.id)?;
        map.serialize_entry("status", record.status.as_str())?;
        if let Some(message) = &record.status_message {
            map.serialize_entry("statusMessage", message)?;
        }
        map.serialize_entry("createdAt", &timestamp(record.created_at_ms))?;
        map.serialize_entry("lastUpdatedAt", &timestamp(record.last_updated_at_ms))?;
        map.serialize_entry("ttlMs", &record.ttl_ms)?;
        map.serialize_entry("pollIntervalMs", &record.poll_interval_ms)?;
        if self.shape != Shape::Created {
            payload(record, &mut map)?;
        }
        let live_progress = record.progress.is_some() && record.outcome.is_none();
        let has_meta = self.server_info.is_some() || self.subscription.is_some() || live_progress;
        if has_meta && self.shape != Shape::Members {
            map.serialize_entry("_meta", &Meta(self))?;
        }
        map.end()
    }
}

/// What the status carries: outstanding requests, the result, the error.
fn payload<M: SerializeMap>(record: &TaskRecord, map: &mut M) -> Result<(), M::Error> {
    match &record.outcome {
        Some(TaskOutcome::Completed(result)) => map.serialize_entry("result", result),
        Some(TaskOutcome::Failed(error)) => map.serialize_entry("error", error),
        Some(TaskOutcome::Cancelled) => Ok(()),
        None if record.input_requests.is_empty() => Ok(()),
        None => map.serialize_entry("inputRequests", &record.input_requests),
    }
}

struct Meta<'a>(&'a Written<'a>);

impl Serialize for Meta<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let written = self.0;
        let mut map = serializer.serialize_map(None)?;
        if let Some(info) = written.server_info {
            map.serialize_entry(SERVER_INFO_KEY, info)?;
        }
        if let Some(id) = written.subscription {
            map.serialize_entry("io.modelcontextprotocol/subscriptionId", id)?;
        }
        let live = written.record.outcome.is_none();
        if let Some(progress) = written.record.progress.filter(|_| live) {
            map.serialize_entry(PROGRESS_META_KEY, &progress)?;
        }
        map.end()
    }
}

/// The bytes of `record` written in `shape`.
pub(crate) fn to_vec(record: &TaskRecord, shape: Shape, server_info: Option<&RawValue>) -> Vec<u8> {
    let written = Written {
        record,
        shape,
        server_info,
        subscription: None,
    };
    serde_json::to_vec(&written).expect("a task record serializes")
}

/// The params of a task's `notifications/tasks`, without `_meta`.
pub(crate) fn notification_params(record: &TaskRecord) -> String {
    let written = Written {
        record,
        shape: Shape::Notification,
        server_info: None,
        subscription: None,
    };
    serde_json::to_string(&written).expect("a task record serializes")
}

/// `tasks/get`'s members (the task's fields and its status's payload) as
/// JSON text, and its `_meta` entries (the last progress, while live).
pub(crate) fn get_members(record: &TaskRecord) -> (String, Option<crate::protocol::JsonObject>) {
    let written = Written {
        record,
        shape: Shape::Members,
        server_info: None,
        subscription: None,
    };
    let object = serde_json::to_string(&written).expect("a task record serializes");
    let meta = record
        .progress
        .filter(|_| record.outcome.is_none())
        .map(|progress| {
            let mut meta = crate::protocol::JsonObject::new();
            let value = serde_json::to_value(progress).unwrap_or_default();
            meta.insert(PROGRESS_META_KEY.to_owned(), value);
            meta
        });
    (object, meta)
}

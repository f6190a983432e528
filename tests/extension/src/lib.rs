//! `com.example/ping`: a small [MCP extension] for servers built on
//! `mcp-runtime`, added with one call and served on every transport and to
//! every client era the runtime serves.
//!
//! ```no_run
//! // A whole server: every `#[tool]` linked in, plus the extension.
//! fn main() -> std::process::ExitCode {
//!     mcp_extension_example::server().run()
//! }
//! ```
//!
//! or, in a server of your own:
//!
//! ```
//! let server = mcp_runtime::server!()
//!     .with(mcp_extension_example::extension())
//!     .build()
//!     .expect("the server builds");
//! # let _ = server;
//! ```
//!
//! # The extension
//!
//! Identifier: `com.example/ping` ([`ID`]). The server advertises it in
//! `server/discover` under `capabilities.extensions` with one setting:
//!
//! | Setting | Meaning |
//! | --- | --- |
//! | `maxLength` | the longest `message` (in characters) `com.example/ping` accepts: [`MAX_LENGTH`] |
//!
//! A client negotiates it by declaring it, with no settings, on each
//! request: `_meta["io.modelcontextprotocol/clientCapabilities"]` =
//! `{"extensions": {"com.example/ping": {}}}` (revision 2026-07-28), or
//! once in `initialize`'s `capabilities.extensions` (initialize-handshake
//! revisions such as 2025-11-25).
//!
//! ## Methods
//!
//! | Method | Who may call it | Params | Result |
//! | --- | --- | --- | --- |
//! | `com.example/ping` | clients that negotiated the extension | `{"message": string}` | `resultType: "pong"`, `{"echo": string, "length": integer}` |
//! | `com.example/wait` | clients that negotiated the extension | `{"timeoutMs"?: integer}` | `resultType: "complete"`, `{"waitedMs": integer}` once the timeout passes; without a timeout it waits until the request is cancelled. Reports progress 0 as it starts |
//! | `pings/stats` | every client | `{}` | `resultType: "complete"`, `{"pings": integer, "cancelledWaits": integer}` |
//! | `pings/reset` | clients that negotiated the extension, with scope `ping:admin` ([`ADMIN_SCOPE`]) when the server checks authorization | `{}` | `resultType: "complete"`, `{"resetBy": string or null}`: the authenticated caller, if any |
//!
//! `com.example/ping` reports progress twice (1 of 2, then 2 of 2) when
//! the request carries a `progressToken`, and logs one `info` message
//! (logger `com.example/ping`) when the client asked for log messages. A
//! message longer than `maxLength` is refused with `-32602` and
//! `data: {"maxLength": ..., "length": ...}`.
//!
//! The tool [`pong`] is the ping as a tool; it too needs the extension.
//!
//! ## Clients without the extension
//!
//! The extension is mandatory for its methods and its tool: a client that
//! has not negotiated it gets `-32021` (missing required client
//! capability) with `data.requiredCapabilities.extensions` naming
//! `com.example/ping`, and can negotiate and retry. `pings/stats` answers
//! everyone, so that monitoring needs no negotiation.
//!
//! [MCP extension]: https://modelcontextprotocol.io/extensions/overview

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use mcp_runtime::extension::{Extension, ExtensionMethod, MethodResult};
use mcp_runtime::{Context, ErrorObject, ServerBuilder};
use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::json;

/// The extension's identifier.
pub const ID: &str = "com.example/ping";

/// The longest message `com.example/ping` accepts, in characters
/// (advertised as the `maxLength` setting).
pub const MAX_LENGTH: usize = 64;

/// The OAuth scope `pings/reset` needs.
pub const ADMIN_SCOPE: &str = "ping:admin";

/// The extension, with counters of its own: every call makes a fresh one.
pub fn extension() -> Extension {
    let stats = Arc::new(Stats::default());
    Extension::new(ID)
        .settings(json!({"maxLength": MAX_LENGTH}))
        .method(ping(stats.clone()))
        .method(wait(stats.clone()))
        .method(stats_method(stats.clone()))
        .method(reset(stats))
}

/// A server offering the extension (and every `#[tool]` linked into the
/// binary, [`pong`] included), named after this crate.
pub fn server() -> ServerBuilder {
    mcp_runtime::server!().with(extension())
}

/// Answers `pong: <message>`: the extension's ping as a tool, for clients
/// that negotiated `com.example/ping`.
#[mcp_runtime::tool(requires_extension = "com.example/ping")]
pub fn pong(
    /// What to echo.
    message: String,
) -> String {
    format!("pong: {message}")
}

/// What the extension counts, shared by its methods.
#[derive(Debug, Default)]
struct Stats {
    pings: AtomicU64,
    cancelled_waits: AtomicU64,
}

/// `pings/stats`' result members.
#[derive(Debug, serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct StatsResult {
    pings: u64,
    cancelled_waits: u64,
}

impl Stats {
    fn snapshot(&self) -> StatsResult {
        StatsResult {
            pings: self.pings.load(Ordering::Relaxed),
            cancelled_waits: self.cancelled_waits.load(Ordering::Relaxed),
        }
    }

    fn reset(&self) {
        self.pings.store(0, Ordering::Relaxed);
        self.cancelled_waits.store(0, Ordering::Relaxed);
    }
}

/// `com.example/ping`'s params.
#[derive(Debug, Deserialize)]
struct PingParams {
    message: String,
}

/// `com.example/ping`: echoes the message as a `pong`, with progress and
/// a log message on the way.
fn ping(stats: Arc<Stats>) -> ExtensionMethod {
    ExtensionMethod::new(ID, move |params: PingParams, ctx: Context| {
        let stats = stats.clone();
        async move {
            let length = params.message.chars().count();
            if length > MAX_LENGTH {
                return Err(ErrorObject::invalid_params(format!(
                    "Invalid params: `message` is {length} characters long, more than maxLength ({MAX_LENGTH})"
                ))
                .with_data(json!({"maxLength": MAX_LENGTH, "length": length})));
            }
            let progress = ctx.progress();
            progress.report_total(1.0, 2.0);
            ctx.logger(ID)
                .info(format!("ping of {length} character(s)"));
            stats.pings.fetch_add(1, Ordering::Relaxed);
            progress.report_total(2.0, 2.0);
            Ok(MethodResult::of_type(
                "pong",
                json!({"echo": params.message, "length": length}),
            ))
        }
    })
}

/// `com.example/wait`'s params.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct WaitParams {
    #[serde(default)]
    timeout_ms: Option<u64>,
}

/// `com.example/wait`: reports progress 0 as it starts, then waits for the
/// timeout, or until the request is cancelled (counted in
/// `cancelledWaits`).
///
/// The wait runs as a job of its own that watches the request's
/// cancellation: a cancelled request's handler is dropped, so only work it
/// handed its [`Context`] (or its token) to can see the cancellation.
fn wait(stats: Arc<Stats>) -> ExtensionMethod {
    ExtensionMethod::new(
        "com.example/wait",
        move |params: WaitParams, ctx: Context| {
            ctx.progress().report(0.0);
            let job = tokio::spawn(wait_job(params.timeout_ms, ctx, stats.clone()));
            async move {
                match job.await {
                    Ok(Some(waited_ms)) => {
                        Ok(MethodResult::complete(json!({"waitedMs": waited_ms})))
                    }
                    // Cancelled: nobody reads this answer.
                    Ok(None) | Err(_) => Err(ErrorObject::internal_error()),
                }
            }
        },
    )
}

/// Waits `timeout_ms` (forever without one) unless the request is
/// cancelled first: `Some(timeout_ms)`, or `None` when cancelled.
async fn wait_job(timeout_ms: Option<u64>, ctx: Context, stats: Arc<Stats>) -> Option<u64> {
    let timeout = async {
        match timeout_ms {
            Some(ms) => tokio::time::sleep(Duration::from_millis(ms)).await,
            None => std::future::pending().await,
        }
    };
    tokio::select! {
        () = ctx.cancelled() => {
            stats.cancelled_waits.fetch_add(1, Ordering::Relaxed);
            None
        }
        () = timeout => timeout_ms,
    }
}

/// `pings/stats`: the counters, for every client.
fn stats_method(stats: Arc<Stats>) -> ExtensionMethod {
    ExtensionMethod::new("pings/stats", move |_: IgnoredAny, _: Context| {
        let snapshot = stats.snapshot();
        async move { Ok(MethodResult::complete(snapshot)) }
    })
    .open_to_all_clients()
}

/// `pings/reset`: zeroes the counters; needs [`ADMIN_SCOPE`].
fn reset(stats: Arc<Stats>) -> ExtensionMethod {
    ExtensionMethod::new("pings/reset", move |_: IgnoredAny, ctx: Context| {
        stats.reset();
        let reset_by = ctx.principal().map(|caller| caller.id().to_owned());
        async move { Ok(MethodResult::complete(json!({"resetBy": reset_by}))) }
    })
    .scopes([ADMIN_SCOPE])
}

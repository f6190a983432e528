//! The tracker's floor: an idiomatic axum 0.8 + sqlx app (`#[tokio::main]`,
//! a `Router` with one POST route, `Json` in and out) answering the
//! tracker's `get_issue` tool. It parses the JSON-RPC `tools/call` body,
//! runs the tracker's own query (`tracker::db::issue`) on a pool with the
//! tracker's own settings (`tracker::db::lazy_pool`, that is
//! `tracker::db::pool_options()`), and answers the JSON-RPC result the
//! tracker writes: the issue as `structuredContent` and, as the text
//! block, the same JSON, and the tracker's `_meta` (its `serverInfo`, a
//! constant here), so that both send the same bytes. No MCP logic
//! otherwise: what any server answering this tool over HTTP must at least
//! do.
//!
//! `floor-tracker ADDR`, with `DATABASE_URL` read as the tracker reads it
//! (a URL may carry `?options=-c%20search_path%3D<schema>`).

use axum::extract::State;
use axum::routing::post;
use axum::serve::ListenerExt as _;
use axum::{Json, Router};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sqlx::PgPool;
use sqlx::postgres::PgConnectOptions;
use tracker::{Issue, TrackerError};

/// A JSON-RPC request, as far as this floor reads it.
#[derive(Debug, Deserialize)]
struct Call {
    id: Value,
    method: String,
    params: Params,
}

#[derive(Debug, Deserialize)]
struct Params {
    name: String,
    arguments: Arguments,
}

/// `get_issue`'s arguments.
#[derive(Debug, Deserialize)]
struct Arguments {
    id: i64,
}

/// A JSON-RPC answer: a result, or an error.
#[derive(Debug, Serialize)]
struct Answer {
    jsonrpc: &'static str,
    id: Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    result: Option<ToolResult>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<RpcError>,
}

/// A `tools/call` result, members in the tracker's order.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct ToolResult {
    result_type: &'static str,
    content: [Text; 1],
    #[serde(skip_serializing_if = "Option::is_none")]
    structured_content: Option<Issue>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    is_error: bool,
    #[serde(rename = "_meta")]
    meta: Meta,
}

/// What the tracker's results carry in `_meta`: its identity (the
/// package's name and version, the title `tracker::configure` gives it).
#[derive(Debug, Serialize)]
struct Meta {
    #[serde(rename = "io.modelcontextprotocol/serverInfo")]
    server_info: ServerInfo,
}

#[derive(Debug, Serialize)]
struct ServerInfo {
    name: &'static str,
    version: &'static str,
    title: &'static str,
}

const META: Meta = Meta {
    server_info: ServerInfo {
        name: "tracker",
        version: "0.1.0",
        title: "Issue tracker",
    },
};

#[derive(Debug, Serialize)]
struct Text {
    #[serde(rename = "type")]
    kind: &'static str,
    text: String,
}

#[derive(Debug, Serialize)]
struct RpcError {
    code: i32,
    message: &'static str,
}

async fn mcp(State(pool): State<PgPool>, Json(call): Json<Call>) -> Json<Answer> {
    if call.method != "tools/call" || call.params.name != "get_issue" {
        return Json(Answer {
            jsonrpc: "2.0",
            id: call.id,
            result: None,
            error: Some(RpcError {
                code: -32601,
                message: "this floor answers tools/call get_issue only",
            }),
        });
    }
    let id = call.params.arguments.id;
    let result = match tracker::db::issue(&pool, id).await {
        Ok(Some(issue)) => match serde_json::to_string(&issue) {
            Ok(text) => ToolResult {
                result_type: "complete",
                content: [Text { kind: "text", text }],
                structured_content: Some(issue),
                is_error: false,
                meta: META,
            },
            Err(error) => failed(error.to_string()),
        },
        // The tracker's own messages for a missing issue and for the
        // database's errors.
        Ok(None) => failed(TrackerError::NotFound(id).to_string()),
        Err(error) => failed(TrackerError::from(error).to_string()),
    };
    Json(Answer {
        jsonrpc: "2.0",
        id: call.id,
        result: Some(result),
        error: None,
    })
}

/// A tool error, as the tracker answers one.
fn failed(text: String) -> ToolResult {
    ToolResult {
        result_type: "complete",
        content: [Text { kind: "text", text }],
        structured_content: None,
        is_error: true,
        meta: META,
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let Some(address) = std::env::args().nth(1) else {
        eprintln!("usage: DATABASE_URL=postgres://... floor-tracker ADDR");
        std::process::exit(2);
    };
    let options: PgConnectOptions = std::env::var("DATABASE_URL")?.parse()?;
    let pool = tracker::db::lazy_pool(options);
    // As the tracker's start-up hook: the tables, and a first connection.
    tracker::db::migrate(&pool).await?;
    let app = Router::new().route("/mcp", post(mcp)).with_state(pool);
    // TCP_NODELAY, as the tracker and the other floors set it.
    let listener = tokio::net::TcpListener::bind(&address)
        .await?
        .tap_io(|stream| {
            let _ = stream.set_nodelay(true);
        });
    axum::serve(listener, app).await?;
    Ok(())
}

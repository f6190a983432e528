//! An issue tracker on PostgreSQL: what a database-backed MCP server looks
//! like on mcp-runtime.
//!
//! - The pool is application state: built by the start-up hook inside the
//!   runtime the server runs on ([`configure`]), closed by the shutdown
//!   hook, and taken by handlers as `#[ctx] db: State<PgPool>`. Tests hand
//!   each server a pool of their own with `ServerBuilder::state`.
//! - Tools return structured output (`Json<Issue>`); closing an issue asks
//!   the user to confirm first (a multi round-trip request).
//! - Writes need the `issues:write` scope over HTTP with authorization.
//! - `tracker://issues/{id}` reads an issue with its comments;
//!   `tracker://issues{?state,label}` lists issues, filtered by the query.
//! - A database outage is a clear tool error; what went wrong is logged,
//!   and no answer or log line carries the connection string.

pub mod db;

use std::fmt;

use mcp_runtime::security::Principal;
use mcp_runtime::{
    ElicitForm, Elicitation, Input, Json, PromptError, PromptMessage, ReadError, ServerBuilder,
    State, prompt, resource, tool,
};
use sqlx::postgres::PgConnectOptions;
use sqlx::{Connection as _, PgConnection, PgPool};

pub use db::{Comment, Issue, IssueState};

/// What the tracker tells the model about itself.
pub const INSTRUCTIONS: &str = "An issue tracker. Find issues with `list_issues` or the \
     `tracker://issues{?state,label}` resource, read one with `get_issue`, open them with \
     `create_issue`, discuss them with `comment_on_issue`, and close them with `close_issue` \
     (the user confirms each close).";

/// The server's identity, instructions and lifecycle: the start-up hook
/// connects to `DATABASE_URL` and creates the tables; the shutdown hook
/// closes the pool once the last request has drained.
pub fn configure(builder: ServerBuilder) -> ServerBuilder {
    builder
        .title("Issue tracker")
        .instructions(INSTRUCTIONS)
        .on_startup(|startup| async move {
            let options = database_options()?;
            // A first connection, then the tables: a server whose database
            // cannot be reached at start says why (a pool would only say
            // that it timed out), and does not serve.
            let first = PgConnection::connect_with(&options)
                .await
                .map_err(|error| format!("cannot connect to the database: {error}"))?;
            let pool = db::lazy_pool(options);
            let _ = first.close().await;
            db::migrate(&pool)
                .await
                .map_err(|error| format!("cannot prepare the database: {error}"))?;
            Ok::<_, mcp_runtime::HookError>(startup.state(pool))
        })
        .on_shutdown(|states| async move {
            if let Some(pool) = states.get::<PgPool>() {
                pool.close().await;
            }
        })
}

/// `DATABASE_URL`, read into connection options. The URL itself (which
/// may hold a password) is never repeated in an error.
fn database_options() -> Result<PgConnectOptions, String> {
    let url = std::env::var("DATABASE_URL").map_err(|_| {
        "set DATABASE_URL to the tracker's PostgreSQL, e.g. postgres://127.0.0.1:5432/test"
            .to_owned()
    })?;
    url.parse().map_err(|_| {
        "DATABASE_URL is not a PostgreSQL URL (postgres://user@host:port/database)".to_owned()
    })
}

/// What can go wrong in a tool, as the model reads it. Serializable so
/// that a step `close_issue` remembers across rounds can end in one.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
pub enum TrackerError {
    /// No issue has this number.
    NotFound(i64),
    /// The issue is closed already.
    AlreadyClosed(i64),
    /// The issue changed while the user was deciding: what they confirmed
    /// is not what it is now (its title now).
    Changed(i64, String),
    /// An argument is out of range.
    Invalid(String),
    /// The database cannot be reached (or is overloaded): try again.
    Unavailable,
    /// The database refused the query; the log says why.
    Failed,
}

impl fmt::Display for TrackerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TrackerError::NotFound(id) => write!(f, "there is no issue #{id}"),
            TrackerError::AlreadyClosed(id) => write!(f, "issue #{id} is closed already"),
            TrackerError::Changed(id, title) => write!(
                f,
                "issue #{id} changed while the user was deciding (it is now \u{201c}{title}\u{201d}); \
                 nothing was changed: call close_issue again to confirm it as it is now"
            ),
            TrackerError::Invalid(problem) => f.write_str(problem),
            TrackerError::Unavailable => f.write_str(
                "the issue database is unavailable right now; nothing was changed, try again shortly",
            ),
            TrackerError::Failed => f.write_str("the issue database could not do that; nothing was changed"),
        }
    }
}

impl std::error::Error for TrackerError {}

/// Database errors become one of two answers: unavailable (connection
/// trouble: worth retrying) or failed. The details go to the log, not to
/// the client: they name tables and constraints, and are no use to a model.
impl From<sqlx::Error> for TrackerError {
    fn from(error: sqlx::Error) -> Self {
        match &error {
            sqlx::Error::Io(_)
            | sqlx::Error::Tls(_)
            | sqlx::Error::PoolTimedOut
            | sqlx::Error::PoolClosed
            | sqlx::Error::WorkerCrashed => {
                tracing::error!(%error, "the issue database is unavailable");
                TrackerError::Unavailable
            }
            _ => {
                tracing::error!(%error, "a query failed");
                TrackerError::Failed
            }
        }
    }
}

/// Who is acting: the token's subject (or its principal's id) over HTTP
/// with authorization, else
/// the local user (stdio, or HTTP on loopback without authorization).
fn author(principal: Option<&Principal>) -> String {
    principal
        .map_or("local", |p| p.subject().unwrap_or(p.id()))
        .to_owned()
}

/// Reads one issue with its details.
#[tool(annotations(read_only, open_world = false))]
pub async fn get_issue(
    /// The issue's number.
    id: i64,
    #[ctx] db: State<PgPool>,
) -> Result<Json<Issue>, TrackerError> {
    match db::issue(&db, id).await? {
        Some(issue) => Ok(Json(issue)),
        None => Err(TrackerError::NotFound(id)),
    }
}

/// The issues found, newest first.
#[derive(Debug, serde::Serialize, schemars::JsonSchema)]
pub struct IssueList {
    /// At most `limit` issues.
    pub issues: Vec<Issue>,
}

/// Lists issues, newest first, optionally only those in one state or with
/// one label.
#[tool(annotations(read_only, open_world = false))]
pub async fn list_issues(
    /// Only issues in this state.
    state: Option<IssueState>,
    /// Only issues with this label.
    label: Option<String>,
    /// How many at most (1 to 100, default 20).
    limit: Option<u32>,
    #[ctx] db: State<PgPool>,
) -> Result<Json<IssueList>, TrackerError> {
    let limit = limit.unwrap_or(20);
    if !(1..=100).contains(&limit) {
        return Err(TrackerError::Invalid(format!(
            "limit must be between 1 and 100, not {limit}"
        )));
    }
    let issues = db::list(&db, state, label.as_deref(), i64::from(limit)).await?;
    Ok(Json(IssueList { issues }))
}

/// Opens a new issue.
#[tool(
    scopes = ["issues:write"],
    annotations(destructive = false, idempotent = false, open_world = false)
)]
pub async fn create_issue(
    /// A one-line summary (1 to 200 characters).
    title: String,
    /// The details, in Markdown.
    body: Option<String>,
    /// Labels, such as `bug` (at most 10).
    labels: Option<Vec<String>>,
    #[ctx] principal: Option<&Principal>,
    #[ctx] db: State<PgPool>,
) -> Result<Json<Issue>, TrackerError> {
    let title = title.trim();
    if title.is_empty() || title.chars().count() > 200 {
        return Err(TrackerError::Invalid(
            "a title is 1 to 200 characters".to_owned(),
        ));
    }
    let labels = labels.unwrap_or_default();
    if labels.len() > 10 || labels.iter().any(|l| l.is_empty() || l.len() > 50) {
        return Err(TrackerError::Invalid(
            "at most 10 labels, each 1 to 50 bytes".to_owned(),
        ));
    }
    let author = author(principal);
    let body = body.unwrap_or_default();
    Ok(Json(db::create(&db, title, &body, &labels, &author).await?))
}

/// Adds a comment to an issue.
#[tool(
    scopes = ["issues:write"],
    annotations(destructive = false, idempotent = false, open_world = false)
)]
pub async fn comment_on_issue(
    /// The issue's number.
    id: i64,
    /// The comment, in Markdown.
    text: String,
    #[ctx] principal: Option<&Principal>,
    #[ctx] db: State<PgPool>,
) -> Result<String, TrackerError> {
    if text.trim().is_empty() {
        return Err(TrackerError::Invalid(
            "a comment cannot be empty".to_owned(),
        ));
    }
    match db::comment(&db, id, &author(principal), &text).await? {
        true => Ok(format!("Commented on issue #{id}.")),
        false => Err(TrackerError::NotFound(id)),
    }
}

/// The user's answer to "close this issue?".
#[derive(Debug, serde::Deserialize, schemars::JsonSchema, ElicitForm)]
pub struct ConfirmClose {
    /// Close it.
    pub close: bool,
}

/// The issue as the user is asked to close it: what the question shows,
/// and what the close checks is still so.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
struct Shown {
    title: String,
}

/// Closes an issue, after the user confirms.
///
/// The user confirms the issue as it was shown, and another client may
/// change it while they decide: the issue is read once, in the first round,
/// and remembered in the sealed state (so every round asks the same
/// question), and the close is conditional on the issue being still open
/// with the title shown (`UPDATE ... WHERE title = $shown`).
#[tool(scopes = ["issues:write"], annotations(destructive, idempotent, open_world = false))]
pub async fn close_issue(
    /// The issue's number.
    id: i64,
    /// Why it is closed (shown on the issue).
    reason: Option<String>,
    #[ctx] input: Input,
    #[ctx] db: State<PgPool>,
) -> Result<Json<Issue>, TrackerError> {
    let shown = input.remember(|| open_issue(&db, id)).await?;
    let question = format!("Close issue #{id} \u{201c}{}\u{201d}?", shown.title);
    match input
        .elicit_as::<ConfirmClose>("confirm_close", question)
        .await
    {
        Elicitation::Accepted(ConfirmClose { close: true }) => {}
        _ => {
            return Err(TrackerError::Invalid(format!(
                "issue #{id} was left open: the user did not confirm"
            )));
        }
    }
    match db::close(&db, id, &shown.title, reason.as_deref()).await? {
        Some(closed) => Ok(Json(closed)),
        // Closed, changed or gone while the user was deciding.
        None => Err(not_closed(&db, id).await?),
    }
}

/// The open issue `id` as the user will be shown it.
async fn open_issue(db: &PgPool, id: i64) -> Result<Shown, TrackerError> {
    let issue = db::issue(db, id).await?.ok_or(TrackerError::NotFound(id))?;
    if issue.state == IssueState::Closed.as_str() {
        return Err(TrackerError::AlreadyClosed(id));
    }
    Ok(Shown { title: issue.title })
}

/// Why a confirmed close closed nothing: the issue as it is now.
async fn not_closed(db: &PgPool, id: i64) -> Result<TrackerError, TrackerError> {
    Ok(match open_issue(db, id).await {
        Ok(now) => TrackerError::Changed(id, now.title),
        Err(why) => why,
    })
}

/// An issue with its comments, as Markdown.
#[resource(
    "tracker://issues/{id}",
    name = "issue",
    mime_type = "text/markdown",
    annotations(audience = ["user", "assistant"])
)]
pub async fn issue_resource(id: i64, #[ctx] db: State<PgPool>) -> Result<String, ReadError> {
    let issue = db::issue(&db, id)
        .await
        .map_err(read_error)?
        .ok_or(ReadError::NotFound)?;
    let comments = db::comments(&db, id).await.map_err(read_error)?;
    Ok(render(&issue, &comments))
}

/// Issues, newest first (at most 100), as a Markdown list; the query
/// narrows them: `tracker://issues?state=open&label=bug`.
#[resource(
    "tracker://issues{?state,label}",
    name = "issues",
    mime_type = "text/markdown",
    complete(state = issue_states)
)]
pub async fn issues_resource(
    state: Option<String>,
    label: Option<String>,
    #[ctx] db: State<PgPool>,
) -> Result<String, ReadError> {
    let state = match state.as_deref() {
        None => None,
        Some("open") => Some(IssueState::Open),
        Some("closed") => Some(IssueState::Closed),
        Some(other) => {
            return Err(ReadError::Invalid(format!(
                "state is `open` or `closed`, not `{other}`"
            )));
        }
    };
    let issues = db::list(&db, state, label.as_deref(), 100)
        .await
        .map_err(read_error)?;
    let mut text = String::from("# Issues\n");
    for issue in &issues {
        text.push_str(&format!(
            "\n- #{} {} ({}{})",
            issue.id,
            issue.title,
            issue.state,
            issue
                .labels
                .iter()
                .map(|l| format!(", {l}"))
                .collect::<String>()
        ));
    }
    if issues.is_empty() {
        text.push_str("\nNo issues.");
    }
    Ok(text)
}

fn issue_states(_: &mcp_runtime::CompletionRequest) -> Vec<&'static str> {
    vec!["open", "closed"]
}

fn read_error(error: sqlx::Error) -> ReadError {
    ReadError::Failed(TrackerError::from(error).to_string())
}

/// One issue as Markdown.
fn render(issue: &Issue, comments: &[Comment]) -> String {
    let mut text = format!(
        "# #{} {}\n\n{} · opened by {} on {}",
        issue.id, issue.title, issue.state, issue.author, issue.created_at
    );
    if !issue.labels.is_empty() {
        text.push_str(&format!(" · labels: {}", issue.labels.join(", ")));
    }
    text.push_str("\n\n");
    text.push_str(&issue.body);
    for comment in comments {
        text.push_str(&format!(
            "\n\n---\n**{}** on {}:\n\n{}",
            comment.author, comment.created_at, comment.body
        ));
    }
    text
}

/// Asks the model to triage an issue: labels, severity, next step.
#[prompt]
pub async fn triage(
    /// The issue's number.
    id: i64,
    #[ctx] db: State<PgPool>,
) -> Result<Vec<PromptMessage>, PromptError> {
    let failed = |error: sqlx::Error| PromptError::Failed(TrackerError::from(error).to_string());
    let issue = db::issue(&db, id)
        .await
        .map_err(failed)?
        .ok_or_else(|| PromptError::invalid_argument("id", format!("there is no issue #{id}")))?;
    let comments = db::comments(&db, id).await.map_err(failed)?;
    Ok(vec![PromptMessage::user(format!(
        "Triage this issue: suggest labels, a severity (low, medium, high) and the next step, \
         in three short lines.\n\n{}",
        render(&issue, &comments)
    ))])
}

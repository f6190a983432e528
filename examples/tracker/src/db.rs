//! The tracker's tables and queries. Plain `sqlx::query_as` with bound
//! parameters: nothing a client sends is ever part of the SQL text.

use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use sqlx::{FromRow, PgPool};

/// Creates the tables when they are missing (idempotent: every start runs
/// it, as does every test, in its own schema).
pub async fn migrate(pool: &PgPool) -> Result<(), sqlx::Error> {
    for statement in [
        "CREATE TABLE IF NOT EXISTS issues (
            id BIGSERIAL PRIMARY KEY,
            title TEXT NOT NULL,
            body TEXT NOT NULL DEFAULT '',
            state TEXT NOT NULL DEFAULT 'open' CHECK (state IN ('open', 'closed')),
            labels TEXT[] NOT NULL DEFAULT '{}',
            author TEXT NOT NULL,
            created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
            closed_at TIMESTAMPTZ,
            close_reason TEXT
        )",
        "CREATE TABLE IF NOT EXISTS comments (
            id BIGSERIAL PRIMARY KEY,
            issue_id BIGINT NOT NULL REFERENCES issues (id),
            author TEXT NOT NULL,
            body TEXT NOT NULL,
            created_at TIMESTAMPTZ NOT NULL DEFAULT now()
        )",
        "CREATE INDEX IF NOT EXISTS comments_by_issue ON comments (issue_id)",
    ] {
        sqlx::query(statement).execute(pool).await?;
    }
    Ok(())
}

/// The pool's settings: the same for the server and for the benchmark's
/// axum floor. A short acquire timeout makes a database outage a prompt,
/// clear tool error rather than a request that hangs until the client
/// gives up.
pub fn pool_options() -> PgPoolOptions {
    PgPoolOptions::new()
        .max_connections(16)
        .min_connections(0)
        .acquire_timeout(Duration::from_secs(3))
}

/// A pool for `options` (parsed from a URL, or built), without connecting
/// yet: the first query connects, so a server starts even while its
/// database is down, and answers that it is.
pub fn lazy_pool(options: PgConnectOptions) -> PgPool {
    pool_options().connect_lazy_with(options)
}

/// An issue's state.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum IssueState {
    /// Still to do.
    Open,
    /// Done, or will not be done.
    Closed,
}

impl IssueState {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            IssueState::Open => "open",
            IssueState::Closed => "closed",
        }
    }
}

/// One issue, as the tools return it.
#[derive(Clone, Debug, Serialize, JsonSchema, FromRow)]
pub struct Issue {
    /// Its number.
    pub id: i64,
    /// A one-line summary.
    pub title: String,
    /// The details (Markdown).
    pub body: String,
    /// `open` or `closed`.
    pub state: String,
    /// Labels, such as `bug`.
    pub labels: Vec<String>,
    /// Who opened it.
    pub author: String,
    /// When it was opened (RFC 3339, UTC).
    pub created_at: String,
    /// When it was closed, if it is.
    pub closed_at: Option<String>,
    /// Why it was closed, if it said.
    pub close_reason: Option<String>,
    /// How many comments it has.
    pub comments: i64,
}

/// One comment on an issue.
#[derive(Clone, Debug, Serialize, JsonSchema, FromRow)]
pub struct Comment {
    /// Who wrote it.
    pub author: String,
    /// What it says.
    pub body: String,
    /// When (RFC 3339, UTC).
    pub created_at: String,
}

const ISSUE_COLUMNS: &str = "i.id, i.title, i.body, i.state, i.labels, i.author, \
     to_char(i.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"') AS created_at, \
     to_char(i.closed_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"') AS closed_at, \
     i.close_reason, \
     (SELECT count(*) FROM comments c WHERE c.issue_id = i.id) AS comments";

/// The issue `id`, if there is one.
pub async fn issue(pool: &PgPool, id: i64) -> Result<Option<Issue>, sqlx::Error> {
    let sql = format!("SELECT {ISSUE_COLUMNS} FROM issues i WHERE i.id = $1");
    sqlx::query_as(&sql).bind(id).fetch_optional(pool).await
}

/// Opens an issue.
pub async fn create(
    pool: &PgPool,
    title: &str,
    body: &str,
    labels: &[String],
    author: &str,
) -> Result<Issue, sqlx::Error> {
    let sql = format!(
        "WITH i AS (INSERT INTO issues (title, body, labels, author) VALUES ($1, $2, $3, $4) \
         RETURNING *) SELECT {ISSUE_COLUMNS} FROM i"
    );
    sqlx::query_as(&sql)
        .bind(title)
        .bind(body)
        .bind(labels)
        .bind(author)
        .fetch_one(pool)
        .await
}

/// Issues by state and label, newest first.
pub async fn list(
    pool: &PgPool,
    state: Option<IssueState>,
    label: Option<&str>,
    limit: i64,
) -> Result<Vec<Issue>, sqlx::Error> {
    let sql = format!(
        "SELECT {ISSUE_COLUMNS} FROM issues i \
         WHERE ($1::text IS NULL OR i.state = $1) AND ($2::text IS NULL OR $2 = ANY (i.labels)) \
         ORDER BY i.id DESC LIMIT $3"
    );
    sqlx::query_as(&sql)
        .bind(state.map(IssueState::as_str))
        .bind(label)
        .bind(limit)
        .fetch_all(pool)
        .await
}

/// Adds a comment; `false` when there is no such issue.
pub async fn comment(
    pool: &PgPool,
    id: i64,
    author: &str,
    body: &str,
) -> Result<bool, sqlx::Error> {
    let added = sqlx::query(
        "INSERT INTO comments (issue_id, author, body) SELECT id, $2, $3 FROM issues WHERE id = $1",
    )
    .bind(id)
    .bind(author)
    .bind(body)
    .execute(pool)
    .await?;
    Ok(added.rows_affected() == 1)
}

/// The issue's comments, oldest first.
pub async fn comments(pool: &PgPool, id: i64) -> Result<Vec<Comment>, sqlx::Error> {
    sqlx::query_as(
        "SELECT author, body, \
         to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"') AS created_at \
         FROM comments WHERE issue_id = $1 ORDER BY id",
    )
    .bind(id)
    .fetch_all(pool)
    .await
}

/// Closes the issue if it is still open with the title the user
/// confirmed: `None` when it is not (closed meanwhile by someone else,
/// retitled, or gone), so that two confirmations of the same close never
/// both succeed, and a confirmation never closes an issue the user was not
/// shown.
pub async fn close(
    pool: &PgPool,
    id: i64,
    title: &str,
    reason: Option<&str>,
) -> Result<Option<Issue>, sqlx::Error> {
    let sql = format!(
        "WITH i AS (UPDATE issues SET state = 'closed', closed_at = now(), close_reason = $2 \
         WHERE id = $1 AND state = 'open' AND title = $3 RETURNING *) SELECT {ISSUE_COLUMNS} FROM i"
    );
    sqlx::query_as(&sql)
        .bind(id)
        .bind(reason)
        .bind(title)
        .fetch_optional(pool)
        .await
}

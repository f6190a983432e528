//! The tracker stage's database: a schema of its own, created and seeded
//! with the tracker's own queries, and dropped at the end.
//!
//! ```text
//! DATABASE_URL=postgres://... bench-tracker-db create SCHEMA ISSUES COMMENTS
//! DATABASE_URL=postgres://... bench-tracker-db drop SCHEMA
//! ```
//!
//! `create` makes SCHEMA, the tracker's tables in it (`tracker::db::migrate`),
//! ISSUES issues (`tracker::db::create`) and, on issue *n*, `n % (COMMENTS +
//! 1)` comments, all COMMENTS on issue 1 (`tracker::db::comment`), then
//! `ANALYZE`s the tables. `drop` drops SCHEMA with everything in it.

use std::process::ExitCode;

use sqlx::PgPool;
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};

/// A schema name this program makes SQL of: lower-case letters, digits and
/// `_` only.
fn checked(schema: &str) -> Result<&str, String> {
    let fine = !schema.is_empty()
        && schema
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_');
    fine.then_some(schema)
        .ok_or_else(|| format!("not a plain schema name: {schema:?}"))
}

fn number(text: Option<String>, what: &str) -> Result<i64, String> {
    text.and_then(|t| t.parse().ok())
        .ok_or_else(|| format!("{what}: a number"))
}

async fn pool(options: PgConnectOptions) -> Result<PgPool, sqlx::Error> {
    PgPoolOptions::new()
        .max_connections(1)
        .connect_with(options)
        .await
}

async fn create(
    options: PgConnectOptions,
    schema: &str,
    issues: i64,
    comments: i64,
) -> Result<(), Box<dyn std::error::Error>> {
    let admin = pool(options.clone()).await?;
    sqlx::query(&format!("CREATE SCHEMA {schema}"))
        .execute(&admin)
        .await?;
    admin.close().await;
    let pool = pool(options.options([("search_path", schema)])).await?;
    tracker::db::migrate(&pool).await?;
    let labels = ["bug", "docs", "performance", "ui"];
    for n in 1..=issues {
        let title = format!("Issue {n}: the export drops rows past 10,000");
        let body = format!(
            "Seen on build {n}.\n\n**Steps**\n\n1. Open a project with more than 10,000 rows.\n\
             2. Export it as CSV.\n3. Count the rows.\n\n**Expected**: every row.\n\
             **Actual**: the first 10,000 only."
        );
        let label = labels[usize::try_from(n).unwrap_or(0) % labels.len()];
        let issue = tracker::db::create(&pool, &title, &body, &[label.to_owned()], "bench").await?;
        let count = if n == 1 { comments } else { n % (comments + 1) };
        for c in 0..count {
            let text = format!("Comment {c}: reproduced here too.");
            tracker::db::comment(&pool, issue.id, "bench", &text).await?;
        }
    }
    sqlx::query("ANALYZE issues").execute(&pool).await?;
    sqlx::query("ANALYZE comments").execute(&pool).await?;
    pool.close().await;
    Ok(())
}

async fn drop_schema(
    options: PgConnectOptions,
    schema: &str,
) -> Result<(), Box<dyn std::error::Error>> {
    let admin = pool(options).await?;
    sqlx::query(&format!("DROP SCHEMA IF EXISTS {schema} CASCADE"))
        .execute(&admin)
        .await?;
    admin.close().await;
    Ok(())
}

async fn run() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let (command, schema) = (args.next().unwrap_or_default(), args.next());
    let schema = schema.ok_or("usage: bench-tracker-db create|drop SCHEMA ...")?;
    let schema = checked(&schema)?;
    let options: PgConnectOptions = std::env::var("DATABASE_URL")
        .map_err(|_| "set DATABASE_URL")?
        .parse()?;
    match command.as_str() {
        "create" => {
            let issues = number(args.next(), "ISSUES")?;
            let comments = number(args.next(), "COMMENTS")?;
            create(options, schema, issues, comments).await
        }
        "drop" => drop_schema(options, schema).await,
        _ => Err("usage: bench-tracker-db create|drop SCHEMA ...".into()),
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    match run().await {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("bench-tracker-db: {error}");
            ExitCode::FAILURE
        }
    }
}

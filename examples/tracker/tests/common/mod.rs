//! A PostgreSQL schema of its own for each test: created with the
//! tracker's tables, reached through a pool whose connections use it
//! (`search_path`), dropped when the test ends, passed or failed.
//!
//! The database is `TRACKER_TEST_DATABASE_URL`, else the machine's at
//! `postgres://postgres@127.0.0.1:5432/test` (`.ci/run` starts one when
//! none answers there). Tests fail, loudly, without one.

#![allow(dead_code, reason = "each test binary uses a part")]

use std::sync::atomic::{AtomicU32, Ordering};

use sqlx::postgres::PgConnectOptions;
use sqlx::{Connection, PgConnection, PgPool};

/// The database the tests make their schemas in.
pub(crate) fn database_url() -> String {
    std::env::var("TRACKER_TEST_DATABASE_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".to_owned())
}

/// One test's schema and its pool.
pub(crate) struct TestDb {
    pub(crate) schema: String,
    pub(crate) pool: PgPool,
    dropped: bool,
}

impl TestDb {
    /// A new, empty schema with the tracker's tables.
    pub(crate) async fn new() -> TestDb {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let schema = format!(
            "tracker_test_{}_{}_{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .subsec_nanos()
        );
        let mut admin = connect_admin().await;
        sqlx::query(&format!("CREATE SCHEMA {schema}"))
            .execute(&mut admin)
            .await
            .expect("creates the test's schema");
        let options: PgConnectOptions = database_url().parse().expect("a PostgreSQL URL");
        let pool = tracker::db::lazy_pool(options.options([("search_path", schema.as_str())]));
        tracker::db::migrate(&pool)
            .await
            .expect("creates the tables");
        TestDb {
            schema,
            pool,
            dropped: false,
        }
    }

    /// Drops the schema (with everything in it) and closes the pool.
    pub(crate) async fn drop_schema(mut self) {
        self.pool.close().await;
        drop_schema(&self.schema).await;
        self.dropped = true;
    }
}

/// A test that panicked before `drop_schema` still leaves nothing behind:
/// the schema is dropped from a thread of its own (no runtime to borrow
/// in `Drop`).
impl Drop for TestDb {
    fn drop(&mut self) {
        if self.dropped {
            return;
        }
        let schema = self.schema.clone();
        let _ = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("a runtime");
            runtime.block_on(drop_schema(&schema));
        })
        .join();
    }
}

async fn connect_admin() -> PgConnection {
    let url = database_url();
    PgConnection::connect(&url).await.unwrap_or_else(|error| {
        panic!(
            "the tracker's tests need PostgreSQL at {url} (set TRACKER_TEST_DATABASE_URL, or run \
             .ci/run, which starts one): {error}"
        )
    })
}

async fn drop_schema(schema: &str) {
    let mut admin = connect_admin().await;
    sqlx::query(&format!("DROP SCHEMA IF EXISTS {schema} CASCADE"))
        .execute(&mut admin)
        .await
        .expect("drops the test's schema");
}

/// Whether `schema` exists (to check that tests clean up).
pub(crate) async fn schema_exists(schema: &str) -> bool {
    let mut admin = connect_admin().await;
    sqlx::query_scalar::<_, bool>(
        "SELECT EXISTS (SELECT 1 FROM information_schema.schemata WHERE schema_name = $1)",
    )
    .bind(schema)
    .fetch_one(&mut admin)
    .await
    .unwrap()
}

//! The tracker's binary, as a user runs it: the start-up hook connects to
//! `DATABASE_URL` before anything is served (or says why it cannot), and
//! the inspector aimed at another server never runs it.

mod common;

use std::process::{Command, Output};

use common::TestDb;

fn tracker(args: &[&str], database_url: Option<&str>) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_tracker"));
    command
        .args(args)
        .env_remove("DATABASE_URL")
        .env("RUST_LOG", "warn");
    if let Some(url) = database_url {
        command.env("DATABASE_URL", url);
    }
    command.output().expect("the tracker runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn without_a_database_it_says_what_to_set_and_serves_nothing() {
    let output = tracker(&["list", "tools"], None);
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(
        text(&output.stderr),
        "error: start-up: set DATABASE_URL to the tracker's PostgreSQL, e.g. postgres://127.0.0.1:5432/test\n"
    );
    assert!(output.stdout.is_empty());
}

#[test]
fn a_database_that_does_not_answer_stops_it_without_telling_the_password() {
    let output = tracker(
        &["list", "tools"],
        Some("postgres://tracker:hunter2-secret@127.0.0.1:1/tracker"),
    );
    assert_eq!(output.status.code(), Some(1));
    let stderr = text(&output.stderr);
    assert_eq!(
        stderr,
        "error: start-up: cannot connect to the database: error communicating with database: \
         Connection refused (os error 111)\n"
    );
    assert!(!stderr.contains("hunter2"), "{stderr}");
}

#[test]
fn the_inspector_aimed_at_another_server_needs_no_database() {
    // Nothing listens on port 1: the inspector fails to connect, and says
    // so, without asking for this server's database.
    let output = tracker(&["list", "--url", "http://127.0.0.1:1/mcp"], None);
    assert_eq!(output.status.code(), Some(1));
    let stderr = text(&output.stderr);
    assert!(!stderr.contains("DATABASE_URL"), "{stderr}");
    assert!(!stderr.contains("start-up"), "{stderr}");
}

#[tokio::test]
async fn the_inspector_in_process_runs_the_start_up_hook() {
    let db = TestDb::new().await;
    // The test's schema, through the connection's options.
    let url = format!(
        "{}?options=-c%20search_path%3D{}",
        common::database_url(),
        db.schema
    );
    let created = tracker(
        &["call", "create_issue", r#"{"title": "From the CLI"}"#],
        Some(&url),
    );
    assert_eq!(created.status.code(), Some(0), "{}", text(&created.stderr));
    let listed = tracker(&["call", "list_issues", "{}", "--json"], Some(&url));
    assert_eq!(listed.status.code(), Some(0), "{}", text(&listed.stderr));
    let result: serde_json::Value = serde_json::from_slice(&listed.stdout).expect("JSON");
    assert_eq!(
        result["structuredContent"]["issues"][0]["title"], "From the CLI",
        "{result}"
    );
    db.drop_schema().await;
}

//! The tracker stage: `examples/tracker`'s `get_issue` tool (one
//! PostgreSQL query through sqlx) against `floor-tracker`, an axum + sqlx
//! handler running the same query (`tracker::db::issue`) on a pool with the
//! same settings (`tracker::db::pool_options()`: at most 16 connections)
//! and answering the same JSON-RPC result.
//!
//! The database is `TRACKER_TEST_DATABASE_URL` (`benches/run.sh` exports it
//! through `tests/postgres.sh`'s `ensure_postgres`), else the machine's at
//! `postgres://postgres@127.0.0.1:5432/test`. The stage makes a schema of
//! its own there, seeds it with the tracker's own queries
//! (`bench-tracker-db`), points both servers at it (`search_path` in the
//! URL's `options`) and drops it at the end, passed or failed.
//!
//! Both servers are pinned to core 0 and wrk to core 1 as in the other
//! stages; PostgreSQL is not pinned, and its backends share both cores
//! with them. In each round both servers start, both answers are checked
//! (equal as JSON, and right), each is warmed up (1 s at 16 connections,
//! which opens its pool's connections; not counted), and then, for each
//! load, the two run back to back in an order that alternates.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::net::SocketAddr;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

use serde_json::{Value, json};

use super::{
    Paths, Run, Server, Side, Workload, free_port, median, median_run, paired, pinned, post,
    request, rounds, seconds, wrk, wrk_script,
};

const CONNECTIONS: [u32; 2] = [1, 16];
/// Issues seeded, and comments on issue 1 (the one read).
const ISSUES: u32 = 1000;
const COMMENTS: u32 = 3;
/// The target: the tracker at 16 connections, at least this fraction of
/// the axum + sqlx floor's throughput.
const TARGET: f64 = 0.9;

/// The database the stage makes its schema in.
fn database_url() -> String {
    std::env::var("TRACKER_TEST_DATABASE_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".to_owned())
}

/// `url` with its connections' `search_path` set to `schema`.
fn in_schema(url: &str, schema: &str) -> String {
    let separator = if url.contains('?') { '&' } else { '?' };
    format!("{url}{separator}options=-c%20search_path%3D{schema}")
}

/// The bench schema: created and seeded on construction, dropped on drop
/// (also when the stage panics).
struct Schema {
    program: std::path::PathBuf,
    url: String,
    name: String,
}

impl Schema {
    fn create(paths: &Paths) -> Schema {
        let schema = Schema {
            program: paths.release.join("bench-tracker-db"),
            url: database_url(),
            name: format!("mcp_bench_tracker_{}", std::process::id()),
        };
        let started = Instant::now();
        let status = Command::new(&schema.program)
            .args(["create", &schema.name])
            .arg(ISSUES.to_string())
            .arg(COMMENTS.to_string())
            .env("DATABASE_URL", &schema.url)
            .status()
            .expect("bench-tracker-db runs (benches/run.sh builds it)");
        assert!(status.success(), "the bench schema could not be seeded");
        eprintln!(
            "   schema {} seeded ({ISSUES} issues) in {:.1} s",
            schema.name,
            started.elapsed().as_secs_f64()
        );
        schema
    }

    fn url(&self) -> String {
        in_schema(&self.url, &self.name)
    }
}

impl Drop for Schema {
    fn drop(&mut self) {
        let dropped = Command::new(&self.program)
            .args(["drop", &self.name])
            .env("DATABASE_URL", &self.url)
            .status();
        if !dropped.is_ok_and(|s| s.success()) {
            eprintln!("warning: the bench schema {} was not dropped", self.name);
        }
    }
}

/// A server of this stage, pinned to core 0, on the bench schema.
fn start(paths: &Paths, side: Side, database: &str) -> Server {
    let address: SocketAddr = ([127, 0, 0, 1], free_port()).into();
    let addr = address.to_string();
    let log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(paths.results.join("tracker-servers.log"))
        .expect("the servers' log");
    let mut command = match side {
        Side::Ours => pinned(
            &paths.release.join("tracker"),
            &["--http", &addr, "--rate-limit", "0"],
        ),
        Side::Floor => pinned(&paths.release.join("floor-tracker"), &[&addr]),
    };
    let child = command
        .env("DATABASE_URL", database)
        .stderr(log)
        .spawn()
        .expect("the server starts");
    Server::ready(child, address)
}

/// The whole answer to `body`, parsed, without `_meta` in its result (the
/// tracker's `serverInfo`, which the floor writes as a constant: compared
/// byte for byte, not required to match), and its bytes.
fn answer(server: &Server, workload: &Workload) -> (Value, String) {
    let (status, body) = post(
        server.address,
        workload.method,
        workload.target,
        &workload.body,
    );
    assert_eq!(status, 200, "{}: {body}", workload.name);
    let mut value: Value = serde_json::from_str(&body).expect("JSON");
    if let Some(result) = value["result"].as_object_mut() {
        result.remove("_meta");
    }
    (value, body)
}

/// Checks the tracker's answer: issue 1 as seeded, its text block the same
/// JSON as its `structuredContent`.
fn check_issue(response: &Value) {
    let result = &response["result"];
    let issue = &result["structuredContent"];
    assert_eq!(result["resultType"], "complete", "{response}");
    assert!(
        result.get("isError").is_none_or(|e| e == false),
        "{response}"
    );
    assert_eq!(issue["id"], 1, "{response}");
    assert_eq!(issue["comments"], COMMENTS, "{response}");
    assert_eq!(issue["author"], "bench", "{response}");
    assert_eq!(issue["labels"], json!(["docs"]), "{response}");
    let text = result["content"][0]["text"].as_str().expect("a text block");
    assert_eq!(result["content"][0]["type"], "text");
    assert_eq!(
        &serde_json::from_str::<Value>(text).expect("the text is JSON"),
        issue,
        "the text block is the structured content"
    );
}

/// CPU time (user + system) a process has used, in µs, from
/// `/proc/PID/stat`.
fn cpu_us(pid: u32, tick_us: f64) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // After the command name, which is in parentheses: state is the first
    // field, utime the 12th and stime the 13th.
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .map(|(_, rest)| rest.split_whitespace().collect())
        .unwrap_or_default();
    let ticks = |i: usize| fields.get(i).and_then(|v| v.parse::<f64>().ok());
    ticks(11)
        .zip(ticks(12))
        .map_or(0.0, |(u, s)| (u + s) * tick_us)
}

/// CPU time used by every process named `postgres` on this machine (the
/// server and its backends; 0 when PostgreSQL runs elsewhere).
fn postgres_cpu_us(tick_us: f64) -> f64 {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return 0.0;
    };
    entries
        .filter_map(Result::ok)
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/comm"))
                .is_ok_and(|comm| comm.trim_end() == "postgres")
        })
        .map(|pid| cpu_us(pid, tick_us))
        .sum()
}

/// µs per clock tick of `/proc`'s CPU times.
fn tick_us() -> f64 {
    Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|o| {
            String::from_utf8_lossy(&o.stdout)
                .trim()
                .parse::<f64>()
                .ok()
        })
        .map_or(10_000.0, |hz| 1e6 / hz)
}

/// One load run, with the CPU the server and PostgreSQL spent on it.
#[derive(Debug, Clone, Copy)]
struct Measured {
    run: Run,
    /// The server's CPU per request (µs).
    server_us: f64,
    /// PostgreSQL's CPU per request (µs), all its processes.
    postgres_us: f64,
}

fn measure(server: &Server, lua: &Path, connections: u32, tick: f64) -> Measured {
    let (server_before, postgres_before) = (cpu_us(server.child.id(), tick), postgres_cpu_us(tick));
    let run = wrk(&server.url(), lua, connections);
    let (server_after, postgres_after) = (cpu_us(server.child.id(), tick), postgres_cpu_us(tick));
    #[allow(clippy::cast_precision_loss, reason = "seconds")]
    let requests = (run.rate * seconds() as f64).max(1.0);
    Measured {
        run,
        server_us: (server_after - server_before) / requests,
        postgres_us: (postgres_after - postgres_before) / requests,
    }
}

/// 1 s of wrk at 16 connections, not counted: opens the pool's
/// connections (up to 16).
fn warm_up(server: &Server, lua: &Path) {
    let output = Command::new("wrk")
        .args(["-t1", "-c16", "-d1s", "-s"])
        .arg(lua)
        .arg(server.url())
        .stderr(Stdio::null())
        .output()
        .expect("wrk runs");
    assert!(output.status.success(), "the warm-up failed");
}

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_default()
}

/// Runs the stage; its Markdown (table, target, notes).
pub(super) fn stage(paths: &Paths) -> String {
    let load_before = load_average();
    let schema = Schema::create(paths);
    let database = schema.url();
    let workload = Workload {
        name: "tracker get_issue",
        server: "tracker",
        method: "tools/call",
        target: Some("get_issue"),
        body: request(
            "tools/call",
            json!({"name": "get_issue", "arguments": {"id": 1}}),
        ),
        key: "tools/call get_issue".into(),
    };
    let lua = paths.results.join("tracker-get-issue.lua");
    std::fs::write(&lua, wrk_script(&workload)).expect("lua");
    let tick = tick_us();

    // The answers, once: the tracker's is right, the floor's equals it.
    let (mut ours, mut floor) = (
        start(paths, Side::Ours, &database),
        start(paths, Side::Floor, &database),
    );
    let (expected, ours_bytes) = answer(&ours, &workload);
    check_issue(&expected);
    let (floors, floor_bytes) = answer(&floor, &workload);
    assert_eq!(
        floors, expected,
        "the floor's answer differs from the tracker's"
    );
    let same_bytes = ours_bytes == floor_bytes;
    eprintln!(
        "   answers equal as JSON; byte for byte: {same_bytes} ({} and {} bytes)",
        ours_bytes.len(),
        floor_bytes.len()
    );
    ours.stop();
    floor.stop();

    let mut runs: BTreeMap<(u32, Side), Vec<Measured>> = BTreeMap::new();
    for round in 0..rounds() {
        let servers = [
            (Side::Ours, start(paths, Side::Ours, &database)),
            (Side::Floor, start(paths, Side::Floor, &database)),
        ];
        for (side, server) in &servers {
            let (got, _) = answer(server, &workload);
            assert_eq!(got, expected, "{side:?}: the answer changed");
            warm_up(server, &lua);
        }
        for connections in CONNECTIONS {
            for side in Side::order(round) {
                let server = &servers[usize::from(side == Side::Floor)].1;
                let measured = measure(server, &lua, connections, tick);
                eprintln!(
                    "   round {round} {side:?} c={connections}: {:?}, server {:.1} µs/req, PostgreSQL {:.1} µs/req",
                    measured.run, measured.server_us, measured.postgres_us
                );
                runs.entry((connections, side)).or_default().push(measured);
            }
        }
        for (_, mut server) in servers {
            server.stop();
        }
    }
    drop(schema);
    table(&runs, same_bytes, ours_bytes.len(), &load_before)
}

fn table(
    runs: &BTreeMap<(u32, Side), Vec<Measured>>,
    same_bytes: bool,
    bytes: usize,
    load_before: &str,
) -> String {
    let mut out = String::from(
        "| `get_issue` on PostgreSQL | load | tracker req/s | axum + sqlx req/s | ratio | tracker p50 / p99 (µs) | axum + sqlx p50 / p99 (µs) | p50 ratio | server CPU µs / request, tracker / axum | PostgreSQL CPU µs / request, tracker / axum |\n\
         | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n",
    );
    let mut per_round = String::new();
    let mut at_16 = None;
    for connections in CONNECTIONS {
        let (Some(ours), Some(floor)) = (
            runs.get(&(connections, Side::Ours)),
            runs.get(&(connections, Side::Floor)),
        ) else {
            continue;
        };
        let runs_of = |m: &[Measured]| m.iter().map(|m| m.run).collect::<Vec<Run>>();
        let (ours_runs, floor_runs) = (runs_of(ours), runs_of(floor));
        let ratio = paired(&ours_runs, &floor_runs);
        let (o, f) = (median_run(&ours_runs), median_run(&floor_runs));
        let cpu = |m: &[Measured], pick: fn(&Measured) -> f64| {
            median(&mut m.iter().map(pick).collect::<Vec<f64>>())
        };
        let _ = writeln!(
            out,
            "| `get_issue` (issue 1) | {connections} conn | {:.0} | {:.0} | {:.2}x | {:.0} / {:.0} | {:.0} / {:.0} | {:.2}x | {:.1} / {:.1} | {:.1} / {:.1} |",
            o.rate,
            f.rate,
            ratio.rate,
            o.p50_us,
            o.p99_us,
            f.p50_us,
            f.p99_us,
            ratio.p50,
            cpu(ours, |m| m.server_us),
            cpu(floor, |m| m.server_us),
            cpu(ours, |m| m.postgres_us),
            cpu(floor, |m| m.postgres_us),
        );
        let ratios: Vec<String> = ours_runs
            .iter()
            .zip(&floor_runs)
            .map(|(o, f)| format!("{:.2}", o.rate / f.rate))
            .collect();
        let _ = writeln!(per_round, "- {connections} conn: {}", ratios.join(" "));
        if connections == 16 {
            at_16 = Some(ratio.rate);
        }
    }
    out.push('\n');
    if let Some(ratio) = at_16 {
        let _ = writeln!(out, "| target | this run | |\n| --- | --- | --- |");
        let _ = writeln!(
            out,
            "| tracker `get_issue` at 16 connections >= {TARGET}x of axum + sqlx | {ratio:.2}x | {} |",
            if ratio >= TARGET { "met" } else { "missed" }
        );
        out.push('\n');
    }
    let _ = writeln!(
        out,
        "Per-round throughput ratios (tracker / axum + sqlx, rounds in order):\n{per_round}"
    );
    let _ = writeln!(
        out,
        "The tracker (`examples/tracker`, `--http --rate-limit 0`) against `floor-tracker`: \
         axum 0.8 + sqlx on `#[tokio::main]`, one POST route, the same query \
         (`tracker::db::issue`) on a pool with the same settings (`tracker::db::pool_options()`, \
         16 connections at most), answering the same JSON-RPC result (checked equal as JSON each \
         round; byte for byte: {}; {bytes} bytes). The schema holds {ISSUES} issues; issue 1 has \
         {COMMENTS} comments. Both servers are pinned to core 0, where the tracker serves \
         on one thread and tokio's multi-threaded runtime starts one worker (axum's accept \
         loop runs on the main thread), wrk to core 1. PostgreSQL is not pinned: its backends share the \
         machine's 2 cores with the server and wrk, so both sides' rates include the \
         database's work, which is the same for both. Each server is warmed up for 1 s at 16 \
         connections before each round (its pool's connections opened). CPU per request is \
         read from `/proc` during each run (PostgreSQL's: every process named `postgres` on the \
         machine). Load average before the stage: {load_before}; after: {}.",
        if same_bytes { "yes" } else { "no" },
        load_average()
    );
    out
}

//! The benchmark run behind `benches/RESULTS.md`: the quickstart server
//! against the floor servers, interleaved (A B A B ...), each server pinned
//! to core 0 and the load generator to core 1. Run it with
//! `benches/run.sh`, which builds everything and pins this program.
//!
//! Workloads over HTTP (wrk at 1, 16 and 64 connections): `tools/call
//! echo`, `tools/list` of a 50-tool server, `server/discover`, and round 2
//! of a two-round MRTR call carrying a sealed `requestState`. Over stdio
//! (pipelined at depth 1, 16 and 64): `tools/call echo`. Also: peak RSS
//! under load, cold start, stripped binary size, and the 10,000-tool
//! server's startup, throughput and list page size. The tracker stage
//! (`bench/tracker.rs`): `examples/tracker`'s `get_issue` on PostgreSQL
//! against an axum + sqlx handler running the same query.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

#[path = "bench/tasks.rs"]
mod tasks;
#[path = "bench/tracker.rs"]
mod tracker;

/// Interleaved rounds per measurement (`BENCH_ROUNDS`); medians are
/// reported. Seven by default: on a shared 2-core VM one round's ratio
/// moves by up to ±0.1, and the median of three still by about ±0.05.
fn rounds() -> usize {
    env_number("BENCH_ROUNDS", 7)
}

/// Seconds per load run (`BENCH_SECONDS`).
fn seconds() -> u64 {
    env_number("BENCH_SECONDS", 3)
}

fn env_number<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}
/// 32 bytes, base64: the benchmark's fixed `requestState` key.
const STATE_KEY: &str = "YmVuY2htYXJrIGtleSwgbm90IGEgc2VjcmV0ISEhISE=";

const CONNECTIONS: [u32; 3] = [1, 16, 64];
const DEPTHS: [usize; 3] = [1, 16, 64];

fn meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}
    })
}

fn request(method: &str, mut params: Value) -> String {
    params["_meta"] = meta();
    json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).to_string()
}

/// One HTTP workload: what is sent, and what must come back.
struct Workload {
    name: &'static str,
    /// Binary serving it (ours).
    server: &'static str,
    method: &'static str,
    /// `Mcp-Name`, for named methods.
    target: Option<&'static str>,
    body: String,
    /// The floor's answers key.
    key: String,
}

struct Paths {
    /// Release builds: the quickstart, the floors, the 50-tool server.
    release: PathBuf,
    /// `--profile scale` builds: the 10,000- and 50-tool servers compared
    /// with each other.
    scale: PathBuf,
    results: PathBuf,
}

fn main() {
    let release = PathBuf::from(
        std::env::args()
            .nth(1)
            .unwrap_or_else(|| "target/release".into()),
    );
    let scale_dir = PathBuf::from(
        std::env::args()
            .nth(2)
            .unwrap_or_else(|| "target/scale".into()),
    );
    let results = PathBuf::from(
        std::env::args()
            .nth(3)
            .unwrap_or_else(|| "benches/results".into()),
    );
    std::fs::create_dir_all(&results).expect("results directory");
    let paths = Paths {
        release,
        scale: scale_dir,
        results,
    };
    let mut report = Report::default();
    if std::env::var("BENCH_ONLY").as_deref() == Ok("tasks") {
        // Only the Tasks stage (while iterating on it): its table alone.
        let table = tasks::stage(&paths);
        std::fs::write(paths.results.join("tasks.md"), &table).expect("results");
        print!("{table}");
        return;
    }
    if std::env::var("BENCH_ONLY").as_deref() == Ok("tracker") {
        // Only the tracker stage (while iterating on it): its table alone.
        let table = tracker::stage(&paths);
        std::fs::write(paths.results.join("tracker.md"), &table).expect("results");
        print!("{table}");
        return;
    }

    let echo = request(
        "tools/call",
        json!({"name": "echo", "arguments": {"text": "hello"}}),
    );
    let mut workloads = vec![
        Workload {
            name: "tools/call echo",
            server: "quickstart",
            method: "tools/call",
            target: Some("echo"),
            body: echo.clone(),
            key: "tools/call echo".into(),
        },
        Workload {
            name: "tools/list (50 tools)",
            server: "bench-tools",
            method: "tools/list",
            target: None,
            body: request("tools/list", json!({})),
            key: "tools/list".into(),
        },
        Workload {
            name: "server/discover",
            server: "quickstart",
            method: "server/discover",
            target: None,
            body: request("server/discover", json!({})),
            key: "server/discover".into(),
        },
    ];
    if std::env::var("BENCH_ONLY").as_deref() == Ok("stdio") {
        // Only the stdio stage (while iterating on it): its table alone.
        stdio_stage(&paths, echo_workload(&workloads), &mut report);
        print!("{}", report.markdown());
        return;
    }
    // First: its sealed state expires ten minutes after round 1 (the
    // server's default), which the other workloads' rounds could outlast.
    workloads.insert(0, mrtr_round_two(&paths));

    http_stage(&paths, &workloads, &mut report);
    if std::env::var("BENCH_ONLY").as_deref() == Ok("http") {
        // Only the HTTP stage (while iterating on it): its tables alone.
        print!("{}", report.markdown());
        return;
    }

    let echo_workload = echo_workload(&workloads);
    let stdio_answers = stdio_stage(&paths, echo_workload, &mut report);

    eprintln!("== cold start");
    report.cold_start = Some((
        cold_start_http(&paths.release.join("quickstart"), &[]),
        cold_start_http(
            &paths.release.join("floor-http"),
            &[stdio_answers.to_str().unwrap_or_default()],
        ),
        cold_start_stdio(&paths.release.join("quickstart")),
    ));
    report.size = Some(stripped_size(
        &paths.release.join("quickstart"),
        &paths.results,
    ));
    let stdio_only = paths.release.join("stdio-only");
    report.stdio_only_size = stdio_only
        .exists()
        .then(|| stripped_size(&stdio_only, &paths.results));

    eprintln!("== 10,000 tools");
    report.scale = Some(scale(&paths, echo_workload));

    eprintln!("== tasks");
    report.tasks = Some(tasks::stage(&paths));

    eprintln!("== tracker (PostgreSQL)");
    report.tracker = Some(tracker::stage(&paths));

    let markdown = report.markdown();
    std::fs::write(paths.results.join("RESULTS.md"), &markdown).expect("results");
    print!("{markdown}");
}

/// The HTTP workloads, ours against the floor, interleaved round by
/// round. `BENCH_WORKLOADS` (substrings of the workloads' names, comma
/// separated) runs only those that match, while iterating.
fn http_stage(paths: &Paths, workloads: &[Workload], report: &mut Report) {
    let only = std::env::var("BENCH_WORKLOADS").unwrap_or_default();
    let chosen = |workload: &&Workload| {
        only.is_empty() || only.split(',').any(|part| workload.name.contains(part))
    };
    for workload in workloads.iter().filter(chosen) {
        eprintln!("== {}", workload.name);
        let expected = expected_result(paths, workload);
        let answers = paths.results.join("answers.json");
        let mut results = BTreeMap::new();
        results.insert(workload.key.clone(), expected.clone());
        std::fs::write(&answers, json!({"results": results}).to_string()).expect("answers");
        let lua = paths.results.join(format!("{}.lua", slug(workload.name)));
        std::fs::write(&lua, wrk_script(workload)).expect("lua");
        for round in 0..rounds() {
            // Both servers are up for the whole round (the idle one costs
            // nothing), so that for each load ours and the floor run back
            // to back, in an order that alternates from round to round:
            // the machine's drift then shifts both sides of a pair alike.
            let mut ours = Server::ours(paths, workload.server);
            let mut floor = Server::floor_http(paths, &answers);
            ours.check(workload, &expected);
            floor.check(workload, &expected);
            for connections in CONNECTIONS {
                for side in Side::order(round) {
                    let server = match side {
                        Side::Ours => &ours,
                        Side::Floor => &floor,
                    };
                    let run = wrk(&server.url(), &lua, connections);
                    eprintln!("   round {round} {side:?} c={connections}: {run:?}");
                    report.http(workload.name, side, connections, run);
                }
            }
            report.rss(workload.name, Side::Ours, ours.peak_rss());
            report.rss(workload.name, Side::Floor, floor.peak_rss());
            ours.stop();
            floor.stop();
        }
    }
}

fn slug(name: &str) -> String {
    name.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect()
}

/// Round 1 of `confirm_delete` through our server, then the retry with the
/// answer and the sealed state: the body the benchmark sends. The server is
/// `bench-mrtr`, whose `confirm_delete` is the quickstart's with
/// `replayable_state`: the quickstart's states open once, and wrk repeats
/// one body (the single-use check, one lookup in memory, is not timed).
fn mrtr_round_two(paths: &Paths) -> Workload {
    let mut server = Server::ours(paths, "bench-mrtr");
    let first = request(
        "tools/call",
        json!({"name": "confirm_delete", "arguments": {"path": "/tmp/x"}}),
    );
    let (status, body) = post(server.address, "tools/call", Some("confirm_delete"), &first);
    assert_eq!(status, 200, "round 1: {body}");
    let round: Value = serde_json::from_str(&body).expect("JSON");
    let state = round["result"]["requestState"]
        .as_str()
        .expect("a requestState")
        .to_owned();
    server.stop();
    Workload {
        name: "MRTR round 2 (sealed requestState)",
        server: "bench-mrtr",
        method: "tools/call",
        target: Some("confirm_delete"),
        body: request(
            "tools/call",
            json!({
                "name": "confirm_delete",
                "arguments": {"path": "/tmp/x"},
                "inputResponses": {"answer": {"action": "accept", "content": {"confirm": true}}},
                "requestState": state
            }),
        ),
        key: "tools/call confirm_delete".into(),
    }
}

/// Our server's answer to the workload, checked against what it must be.
fn expected_result(paths: &Paths, workload: &Workload) -> Value {
    let mut server = Server::ours(paths, workload.server);
    let (status, body) = post(
        server.address,
        workload.method,
        workload.target,
        &workload.body,
    );
    server.stop();
    assert_eq!(status, 200, "{}: {body}", workload.name);
    let response: Value = serde_json::from_str(&body).expect("JSON");
    let result = response["result"].clone();
    assert_eq!(
        result["resultType"], "complete",
        "{}: {body}",
        workload.name
    );
    let fits = match workload.name {
        "tools/call echo" => result["content"] == json!([{"type": "text", "text": "hello"}]),
        "tools/list (50 tools)" => result["tools"].as_array().is_some_and(|t| t.len() == 51),
        "server/discover" => result["supportedVersions"] == json!(["2026-07-28"]),
        _ => result["content"] == json!([{"type": "text", "text": "deleted /tmp/x"}]),
    };
    assert!(fits, "{}: unexpected result {result}", workload.name);
    result
}

fn wrk_script(workload: &Workload) -> String {
    let mut lua = String::from("wrk.method = \"POST\"\n");
    let _ = writeln!(lua, "wrk.body = [==[{}]==]", workload.body);
    let mut headers = vec![
        ("Content-Type", "application/json".to_owned()),
        ("Accept", "application/json, text/event-stream".to_owned()),
        ("MCP-Protocol-Version", "2026-07-28".to_owned()),
        ("Mcp-Method", workload.method.to_owned()),
    ];
    if let Some(target) = workload.target {
        headers.push(("Mcp-Name", target.to_owned()));
    }
    for (name, value) in headers {
        let _ = writeln!(lua, "wrk.headers[\"{name}\"] = \"{value}\"");
    }
    // Any answer but 200 fails the run.
    lua.push_str("response = function(status, headers, body)\n  if status ~= 200 then\n    io.stderr:write(\"unexpected status \" .. status .. \"\\n\")\n    os.exit(1)\n  end\nend\n");
    lua
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Side {
    Ours,
    Floor,
}

impl Side {
    /// Who runs first in `round`: alternating, so that neither side always
    /// gets the machine's first (or last) seconds of a pair.
    fn order(round: usize) -> [Side; 2] {
        if round.is_multiple_of(2) {
            [Side::Ours, Side::Floor]
        } else {
            [Side::Floor, Side::Ours]
        }
    }
}

struct Server {
    child: Child,
    address: SocketAddr,
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

/// `taskset -c 0 PROGRAM ARGS`: servers run on core 0.
fn pinned(program: &Path, args: &[&str]) -> Command {
    let mut command = Command::new("taskset");
    command.arg("-c").arg("0").arg(program).args(args);
    command
}

impl Server {
    fn ours(paths: &Paths, binary: &str) -> Server {
        Server::ours_at(&paths.release.join(binary))
    }

    fn ours_at(binary: &Path) -> Server {
        let port = free_port();
        let address: SocketAddr = ([127, 0, 0, 1], port).into();
        let addr = address.to_string();
        let child = pinned(binary, &["--http", &addr, "--rate-limit", "0"])
            // One key for every run, the way instances behind a load
            // balancer share one: round 2 may reach another process.
            .env("MCP_STATE_KEY", STATE_KEY)
            .stderr(Stdio::null())
            .spawn()
            .expect("the server starts");
        Server::ready(child, address)
    }

    fn floor_http(paths: &Paths, answers: &Path) -> Server {
        let port = free_port();
        let address: SocketAddr = ([127, 0, 0, 1], port).into();
        let addr = address.to_string();
        let child = pinned(
            &paths.release.join("floor-http"),
            &[&addr, answers.to_str().unwrap_or_default()],
        )
        .spawn()
        .expect("the floor starts");
        Server::ready(child, address)
    }

    fn ready(child: Child, address: SocketAddr) -> Server {
        let deadline = Instant::now() + Duration::from_secs(10);
        while TcpStream::connect(address).is_err() {
            assert!(Instant::now() < deadline, "{address} never listened");
            std::thread::sleep(Duration::from_millis(2));
        }
        Server { child, address }
    }

    fn url(&self) -> String {
        format!("http://{}/mcp", self.address)
    }

    /// Once per run: the server answers the workload with the expected body.
    fn check(&self, workload: &Workload, expected: &Value) {
        let (status, body) = post(
            self.address,
            workload.method,
            workload.target,
            &workload.body,
        );
        assert_eq!(status, 200, "{}: {body}", workload.name);
        let response: Value = serde_json::from_str(&body).expect("JSON");
        assert_eq!(
            &response["result"], expected,
            "{}: the answer changed",
            workload.name
        );
    }

    /// Peak resident set (VmHWM), in KiB, of the server process (the
    /// child of `taskset`, which execs it).
    fn peak_rss(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
            .unwrap_or_default();
        status
            .lines()
            .find_map(|line| line.strip_prefix("VmHWM:"))
            .and_then(|v| v.split_whitespace().next()?.parse().ok())
            .unwrap_or(0)
    }

    fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A blocking HTTP/1.1 POST to `/mcp`; returns status and body.
fn post(address: SocketAddr, method: &str, target: Option<&str>, body: &str) -> (u16, String) {
    let mut stream = TcpStream::connect(address).expect("connects");
    let mut head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {address}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: {method}\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    if let Some(target) = target {
        let _ = write!(head, "Mcp-Name: {target}\r\n");
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes()).expect("writes");
    stream.write_all(body.as_bytes()).expect("writes");
    let mut response = String::new();
    stream.read_to_string(&mut response).expect("reads");
    let status = response
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let body = response
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_owned())
        .unwrap_or_default();
    (status, body)
}

#[derive(Debug, Clone, Copy, Default)]
struct Run {
    rate: f64,
    p50_us: f64,
    p99_us: f64,
}

/// `wrk` on core 1 (this process's own core) for SECONDS.
fn wrk(url: &str, lua: &Path, connections: u32) -> Run {
    let output = Command::new("wrk")
        .args([
            "-t1",
            &format!("-c{connections}"),
            &format!("-d{}s", seconds()),
            "--latency",
            "-s",
        ])
        .arg(lua)
        .arg(url)
        .output()
        .expect("wrk runs (apt-get install wrk)");
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success() && !text.contains("Non-2xx"),
        "wrk failed:\n{text}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let field = |prefix: &str| -> Option<&str> {
        text.lines()
            .find_map(|l| l.trim_start().strip_prefix(prefix))
            .map(str::trim)
    };
    Run {
        rate: field("Requests/sec:")
            .and_then(|v| v.parse().ok())
            .unwrap_or(0.0),
        p50_us: field("50%").map(micros).unwrap_or(0.0),
        p99_us: field("99%").map(micros).unwrap_or(0.0),
    }
}

/// wrk's latency text (`235.00us`, `1.20ms`, `2.00s`) in microseconds.
fn micros(text: &str) -> f64 {
    let split = text
        .find(|c: char| c.is_ascii_alphabetic())
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let n: f64 = number.parse().unwrap_or(0.0);
    match unit {
        "us" => n,
        "ms" => n * 1e3,
        "s" => n * 1e6,
        _ => n,
    }
}

/// The echo workload, found by name (the MRTR workload goes first).
fn echo_workload(workloads: &[Workload]) -> &Workload {
    workloads
        .iter()
        .find(|w| w.name == "tools/call echo")
        .expect("the echo workload")
}

/// The stdio workload: `echo` pipelined at each depth, ours and the floor
/// back to back in each round. Returns the floor's answers file.
fn stdio_stage(paths: &Paths, echo_workload: &Workload, report: &mut Report) -> PathBuf {
    eprintln!("== stdio tools/call echo");
    let echo = &echo_workload.body;
    let stdio_answers = paths.results.join("stdio-answers.json");
    let expected = expected_result(paths, echo_workload);
    std::fs::write(
        &stdio_answers,
        json!({"results": {"tools/call echo": expected}}).to_string(),
    )
    .expect("answers");
    for round in 0..rounds() {
        for depth in DEPTHS {
            for side in Side::order(round) {
                let run = match side {
                    Side::Ours => {
                        stdio_load(&paths.release.join("quickstart"), &["--stdio"], echo, depth)
                    }
                    Side::Floor => stdio_load(
                        &paths.release.join("floor-stdio"),
                        &[stdio_answers.to_str().unwrap_or_default()],
                        echo,
                        depth,
                    ),
                };
                eprintln!("   round {round} {side:?} depth={depth}: {run:?}");
                report.stdio(side, depth, run);
            }
        }
    }
    stdio_answers
}

/// Pipelines `total` copies of `request` at `depth` to a server over stdio;
/// ids are rewritten so each request is distinct.
fn stdio_load(program: &Path, args: &[&str], request: &str, depth: usize) -> Run {
    let mut child = pinned(program, args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("the server starts");
    let mut stdin = child.stdin.take().expect("stdin");
    let stdout = BufReader::with_capacity(1 << 16, child.stdout.take().expect("stdout"));
    let (prefix, suffix) = request.split_once("\"id\":1").expect("an id to rewrite");
    let (prefix, suffix) = (format!("{prefix}\"id\":"), format!("{suffix}\n"));
    let (tokens, permits) = std::sync::mpsc::channel::<()>();
    let (sent_at, sent) = std::sync::mpsc::channel::<Instant>();
    let warmup = 2_000;
    let duration = Duration::from_secs(seconds());
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let writer_stop = stop.clone();
    let writer = std::thread::spawn(move || {
        let mut id = 0u64;
        let mut buffer = Vec::new();
        // `depth` requests in flight; each answer lets one more go.
        let mut credit = depth;
        loop {
            while credit > 0 {
                buffer.clear();
                buffer.extend_from_slice(prefix.as_bytes());
                buffer.extend_from_slice(id.to_string().as_bytes());
                buffer.extend_from_slice(suffix.as_bytes());
                if stdin.write_all(&buffer).is_err() {
                    return;
                }
                let _ = sent_at.send(Instant::now());
                id += 1;
                credit -= 1;
            }
            let _ = stdin.flush();
            if permits.recv().is_err() || writer_stop.load(std::sync::atomic::Ordering::Relaxed) {
                return;
            }
            credit += 1;
            while permits.try_recv().is_ok() {
                credit += 1;
            }
        }
    });
    let mut latencies = Vec::new();
    let mut count = 0u64;
    let mut started = None;
    let mut lines = stdout.lines();
    while let Some(Ok(line)) = lines.next() {
        let sent_time = sent.recv().expect("a send time");
        if count == 0 {
            assert!(
                line.contains("\"text\":\"hello\""),
                "unexpected stdio answer: {line}"
            );
        }
        count += 1;
        if count == warmup {
            started = Some(Instant::now());
        } else if let Some(start) = started {
            latencies.push(sent_time.elapsed());
            if start.elapsed() >= duration {
                stop.store(true, std::sync::atomic::Ordering::Relaxed);
                let _ = tokens.send(());
                break;
            }
        }
        if tokens.send(()).is_err() {
            break;
        }
    }
    let elapsed = started.map_or(Duration::from_secs(1), |s| s.elapsed());
    let _ = child.kill();
    let _ = child.wait();
    let _ = writer.join();
    let summary = mcp_bench::summarize(&mut latencies, elapsed);
    Run {
        rate: summary.rate,
        p50_us: summary.p50.as_secs_f64() * 1e6,
        p99_us: summary.p99.as_secs_f64() * 1e6,
    }
}

/// Median time from spawn to the first successful answer over HTTP.
fn cold_start_http(program: &Path, extra: &[&str]) -> Duration {
    let mut times = Vec::new();
    for _ in 0..15 {
        let port = free_port();
        let address: SocketAddr = ([127, 0, 0, 1], port).into();
        let addr = address.to_string();
        let mut args: Vec<&str> = Vec::new();
        if extra.is_empty() {
            args.extend(["--http", &addr]);
        } else {
            args.push(&addr);
            args.extend_from_slice(extra);
        }
        let start = Instant::now();
        let mut child = pinned(program, &args)
            .stderr(Stdio::null())
            .spawn()
            .expect("starts");
        let discover = request("server/discover", json!({}));
        loop {
            if TcpStream::connect(address).is_ok() {
                let (status, _) = post(address, "server/discover", None, &discover);
                if status == 200 || status == 404 {
                    break;
                }
            }
            std::thread::sleep(Duration::from_micros(200));
        }
        times.push(start.elapsed());
        let _ = child.kill();
        let _ = child.wait();
    }
    times.sort();
    times[times.len() / 2]
}

/// Median time from spawn to the first answer over stdio.
fn cold_start_stdio(program: &Path) -> Duration {
    let mut times = Vec::new();
    for _ in 0..15 {
        let start = Instant::now();
        let mut child = pinned(program, &["--stdio"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("starts");
        let mut stdin = child.stdin.take().expect("stdin");
        let _ = writeln!(stdin, "{}", request("server/discover", json!({})));
        let mut line = String::new();
        let _ = BufReader::new(child.stdout.take().expect("stdout")).read_line(&mut line);
        times.push(start.elapsed());
        drop(stdin);
        let _ = child.kill();
        let _ = child.wait();
    }
    times.sort();
    times[times.len() / 2]
}

fn stripped_size(binary: &Path, results: &Path) -> u64 {
    let name = binary
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("binary");
    let copy = results.join(format!("{name}-stripped"));
    std::fs::copy(binary, &copy).expect("copies the binary");
    let status = Command::new("strip")
        .arg(&copy)
        .status()
        .expect("strip runs");
    assert!(status.success());
    std::fs::metadata(&copy).map(|m| m.len()).unwrap_or(0)
}

/// Median registry build time (the registry and the precomputed answers:
/// schemas, list pages, `server/discover`), as the server measures its own
/// `ServerBuilder::build` when started with `--time-build`.
fn registry_build(program: &Path) -> Duration {
    let mut times = Vec::new();
    for _ in 0..15 {
        let output = pinned(program, &["--time-build"])
            .stdin(Stdio::null())
            .stderr(Stdio::inherit())
            .output()
            .expect("starts");
        assert!(output.status.success(), "the registry builds");
        let micros = String::from_utf8_lossy(&output.stdout)
            .trim()
            .parse::<u64>()
            .expect("the server prints its build time in microseconds");
        times.push(Duration::from_micros(micros));
    }
    times.sort();
    times[times.len() / 2]
}

#[derive(Debug, Default)]
struct Scale {
    registry_ms: f64,
    startup_ms: f64,
    echo_50: f64,
    echo_10k: f64,
    /// Median of the per-round ratios 10,000 / 50 tools.
    ratio: f64,
    first_page_tools: usize,
    largest_page_bytes: usize,
    pages: usize,
    listed: usize,
}

fn scale(paths: &Paths, echo: &Workload) -> Scale {
    let lua = paths.results.join("scale-echo.lua");
    std::fs::write(&lua, wrk_script(echo)).expect("lua");
    let startup = cold_start_http(&paths.scale.join("bench-scale"), &[]);
    let mut result = Scale {
        registry_ms: registry_build(&paths.scale.join("bench-scale")).as_secs_f64() * 1e3,
        startup_ms: startup.as_secs_f64() * 1e3,
        ..Scale::default()
    };
    // Paired like the HTTP table: in each round both servers run back to
    // back, in an order that alternates, and the ratio is the median of
    // the per-round ratios (the machine's speed drifts between rounds).
    let run = |binary: &str| -> f64 {
        let mut server = Server::ours_at(&paths.scale.join(binary));
        let rate = wrk(&server.url(), &lua, 16).rate;
        server.stop();
        rate
    };
    let (mut rates_50, mut rates_10k, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
    for round in 0..rounds() {
        let (echo_50, echo_10k) = if round % 2 == 0 {
            let echo_50 = run("bench-tools");
            (echo_50, run("bench-scale"))
        } else {
            let echo_10k = run("bench-scale");
            (run("bench-tools"), echo_10k)
        };
        rates_50.push(echo_50);
        rates_10k.push(echo_10k);
        ratios.push(echo_10k / echo_50);
    }
    result.echo_50 = median(&mut rates_50);
    result.echo_10k = median(&mut rates_10k);
    result.ratio = median(&mut ratios);
    let mut server = Server::ours_at(&paths.scale.join("bench-scale"));
    let mut cursor: Option<String> = None;
    loop {
        let params = cursor.map_or_else(|| json!({}), |c| json!({"cursor": c}));
        let (status, body) = post(
            server.address,
            "tools/list",
            None,
            &request("tools/list", params),
        );
        assert_eq!(status, 200, "tools/list: {body}");
        let page: Value = serde_json::from_str(&body).expect("JSON");
        let tools = page["result"]["tools"].as_array().map_or(0, Vec::len);
        if result.pages == 0 {
            result.first_page_tools = tools;
        }
        result.pages += 1;
        result.listed += tools;
        result.largest_page_bytes = result.largest_page_bytes.max(body.len());
        cursor = page["result"]["nextCursor"].as_str().map(str::to_owned);
        if cursor.is_none() {
            break;
        }
    }
    server.stop();
    assert_eq!(result.listed, 10_001, "every tool is listed exactly once");
    result
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied().unwrap_or(0.0)
}

#[derive(Default)]
struct Report {
    http: BTreeMap<(String, u32, Side), Vec<Run>>,
    rss: BTreeMap<(String, Side), u64>,
    stdio: BTreeMap<(usize, Side), Vec<Run>>,
    cold_start: Option<(Duration, Duration, Duration)>,
    size: Option<u64>,
    /// The same server built with `default-features = false`.
    stdio_only_size: Option<u64>,
    scale: Option<Scale>,
    /// The Tasks stage's table.
    tasks: Option<String>,
    /// The tracker stage's table, target and notes.
    tracker: Option<String>,
}

/// Ours against the floor, pair by pair (the runs of one round were back to
/// back): the medians of the per-round ratios of throughput and of p50.
/// Robust to a machine whose speed drifts between rounds, which a ratio of
/// the two sides' medians is not.
#[derive(Debug, Clone, Copy)]
struct Paired {
    rate: f64,
    p50: f64,
}

fn paired(ours: &[Run], floor: &[Run]) -> Paired {
    let pairs = || ours.iter().zip(floor);
    let mut rates: Vec<f64> = pairs().map(|(o, f)| o.rate / f.rate).collect();
    let mut p50: Vec<f64> = pairs().map(|(o, f)| o.p50_us / f.p50_us).collect();
    Paired {
        rate: median(&mut rates),
        p50: median(&mut p50),
    }
}

fn median_run(runs: &[Run]) -> Run {
    let mut rates: Vec<f64> = runs.iter().map(|r| r.rate).collect();
    let mut p50: Vec<f64> = runs.iter().map(|r| r.p50_us).collect();
    let mut p99: Vec<f64> = runs.iter().map(|r| r.p99_us).collect();
    Run {
        rate: median(&mut rates),
        p50_us: median(&mut p50),
        p99_us: median(&mut p99),
    }
}

impl Report {
    fn http(&mut self, workload: &str, side: Side, connections: u32, run: Run) {
        self.http
            .entry((workload.to_owned(), connections, side))
            .or_default()
            .push(run);
    }

    fn rss(&mut self, workload: &str, side: Side, kib: u64) {
        let slot = self.rss.entry((workload.to_owned(), side)).or_default();
        *slot = (*slot).max(kib);
    }

    fn stdio(&mut self, side: Side, depth: usize, run: Run) {
        self.stdio.entry((depth, side)).or_default().push(run);
    }

    fn markdown(&self) -> String {
        let mut out = String::new();
        // The guide's performance chapter includes this table by its anchor.
        let _ = writeln!(out, "<!-- ANCHOR: load -->");
        let _ = writeln!(
            out,
            "| workload | load | ours req/s | floor req/s | ratio | ours p50 / p99 (µs) | floor p50 / p99 (µs) | p50 ratio |"
        );
        let _ = writeln!(
            out,
            "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |"
        );
        let mut names: Vec<&String> = self.http.keys().map(|(n, ..)| n).collect();
        names.dedup();
        for name in names {
            for connections in CONNECTIONS {
                let get = |side| self.http.get(&(name.clone(), connections, side));
                if let (Some(ours), Some(floor)) = (get(Side::Ours), get(Side::Floor)) {
                    comparison_row(&mut out, name, &format!("{connections} conn"), ours, floor);
                }
            }
        }
        for depth in DEPTHS {
            let get = |side| self.stdio.get(&(depth, side));
            if let (Some(ours), Some(floor)) = (get(Side::Ours), get(Side::Floor)) {
                comparison_row(
                    &mut out,
                    "stdio tools/call echo",
                    &format!("depth {depth}"),
                    ours,
                    floor,
                );
            }
        }
        let _ = writeln!(out, "<!-- ANCHOR_END: load -->");
        out.push('\n');
        let _ = writeln!(out, "| measure | ours | floor |");
        let _ = writeln!(out, "| --- | ---: | ---: |");
        for ((name, side), kib) in &self.rss {
            if *side == Side::Ours {
                let floor = self
                    .rss
                    .get(&(name.clone(), Side::Floor))
                    .copied()
                    .unwrap_or(0);
                let _ = writeln!(
                    out,
                    "| peak RSS under load, {name} | {:.1} MiB | {:.1} MiB |",
                    *kib as f64 / 1024.0,
                    floor as f64 / 1024.0
                );
            }
        }
        if let Some((http, floor, stdio)) = self.cold_start {
            let _ = writeln!(
                out,
                "| cold start, spawn to first answer (HTTP) | {:.1} ms | {:.1} ms |",
                ms(http),
                ms(floor)
            );
            let _ = writeln!(
                out,
                "| cold start, spawn to first answer (stdio) | {:.1} ms | |",
                ms(stdio)
            );
        }
        if let Some(size) = self.size {
            let _ = writeln!(
                out,
                "| quickstart binary, stripped (both transports, inspector) | {:.2} MiB | |",
                size as f64 / 1048576.0
            );
        }
        if let Some(size) = self.stdio_only_size {
            let _ = writeln!(
                out,
                "| stdio-only binary, stripped (`default-features = false`, `examples/stdio-only`) | {:.2} MiB | |",
                size as f64 / 1048576.0
            );
        }
        if let Some(scale) = &self.scale {
            let _ = writeln!(
                out,
                "| 10,000 tools: registry build (timed by the server, `--time-build`) | {:.1} ms | |",
                scale.registry_ms
            );
            let _ = writeln!(
                out,
                "| 10,000 tools: startup to first answer | {:.1} ms | |",
                scale.startup_ms
            );
            let _ = writeln!(
                out,
                "| 10,000 tools: tools/call echo, 16 conn (vs 51 tools, paired rounds) | {:.0} req/s ({:.2}x of {:.0}) | |",
                scale.echo_10k, scale.ratio, scale.echo_50
            );
            let _ = writeln!(
                out,
                "| 10,000 tools: tools/list | {} pages of {} tools, largest {} bytes | |",
                scale.pages, scale.first_page_tools, scale.largest_page_bytes
            );
        }
        if let Some(tasks) = &self.tasks {
            out.push('\n');
            out.push_str(tasks);
        }
        if let Some(tracker) = &self.tracker {
            out.push('\n');
            out.push_str(tracker);
        }
        out
    }
}

/// One row of the ours-against-floor table: each side's medians, and the
/// paired ratios.
fn comparison_row(out: &mut String, workload: &str, load: &str, ours: &[Run], floor: &[Run]) {
    let ratio = paired(ours, floor);
    let (ours, floor) = (median_run(ours), median_run(floor));
    let _ = writeln!(
        out,
        "| {workload} | {load} | {:.0} | {:.0} | {:.2}x | {:.0} / {:.0} | {:.0} / {:.0} | {:.2}x |",
        ours.rate,
        floor.rate,
        ratio.rate,
        ours.p50_us,
        ours.p99_us,
        floor.p50_us,
        floor.p99_us,
        ratio.p50
    );
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

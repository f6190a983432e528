//! The Tasks stage: on one server (`bench-tasks`), `tasks/get` of a
//! completed task against a `tools/list` page (51 tools plus the task
//! tool), back to back in alternating order, and `tools/call` creating a
//! task. The acceptance measure is what `tasks/get` costs against a list
//! page: the median over rounds of the per-round ratio of their
//! throughputs (list / get), at 1 and 16 connections.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::{Paths, Run, Server, median, median_run, post, rounds, wrk};

const TASKS: &str = "io.modelcontextprotocol/tasks";
const CONNECTIONS: [u32; 2] = [1, 16];

/// A request declaring the Tasks extension.
fn request(method: &str, mut params: Value) -> String {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"extensions": {TASKS: {}}}
    });
    json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).to_string()
}

/// A wrk script POSTing `body` with `method` (and `Mcp-Name: name`).
fn script(path: &Path, method: &str, name: Option<&str>, body: &str) {
    let mut lua = String::from("wrk.method = \"POST\"\n");
    let _ = writeln!(lua, "wrk.body = [==[{body}]==]");
    let mut headers = vec![
        ("Content-Type", "application/json".to_owned()),
        ("Accept", "application/json, text/event-stream".to_owned()),
        ("MCP-Protocol-Version", "2026-07-28".to_owned()),
        ("Mcp-Method", method.to_owned()),
    ];
    if let Some(name) = name {
        headers.push(("Mcp-Name", name.to_owned()));
    }
    for (header, value) in headers {
        let _ = writeln!(lua, "wrk.headers[\"{header}\"] = \"{value}\"");
    }
    lua.push_str("response = function(status, headers, body)\n  if status ~= 200 then\n    io.stderr:write(\"unexpected status \" .. status .. \"\\n\")\n    os.exit(1)\n  end\nend\n");
    std::fs::write(path, lua).expect("lua");
}

/// Creates a task on `server` and polls it until it completes; its id.
fn completed_task(server: &Server) -> String {
    let create = request("tools/call", json!({"name": "bench_job", "arguments": {}}));
    let (status, body) = post(server.address, "tools/call", Some("bench_job"), &create);
    assert_eq!(status, 200, "create: {body}");
    let created: Value = serde_json::from_str(&body).expect("JSON");
    assert_eq!(created["result"]["resultType"], "task", "{body}");
    let id = created["result"]["taskId"]
        .as_str()
        .expect("a task id")
        .to_owned();
    let get = request("tasks/get", json!({"taskId": id}));
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let (status, body) = post(server.address, "tasks/get", Some(&id), &get);
        assert_eq!(status, 200, "get: {body}");
        let task: Value = serde_json::from_str(&body).expect("JSON");
        if task["result"]["status"] == "completed" {
            assert_eq!(task["result"]["result"]["content"][0]["text"], "job done");
            return id;
        }
        assert!(
            Instant::now() < deadline,
            "the task never completed: {body}"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Runs the stage; its Markdown table.
pub(super) fn stage(paths: &Paths) -> String {
    let list_lua = paths.results.join("tasks-list.lua");
    let get_lua = paths.results.join("tasks-get.lua");
    let create_lua = paths.results.join("tasks-create.lua");
    script(
        &list_lua,
        "tools/list",
        None,
        &request("tools/list", json!({})),
    );
    let create = request("tools/call", json!({"name": "bench_job", "arguments": {}}));
    script(&create_lua, "tools/call", Some("bench_job"), &create);
    let mut runs: BTreeMap<(&str, u32), Vec<Run>> = BTreeMap::new();
    for round in 0..rounds() {
        let mut server = Server::ours(paths, "bench-tasks");
        // Tasks live ten seconds: each run of gets polls a fresh one.
        for connections in CONNECTIONS {
            let order = if round % 2 == 0 {
                ["get", "list"]
            } else {
                ["list", "get"]
            };
            for what in order {
                let lua = if what == "get" {
                    let id = completed_task(&server);
                    let body = request("tasks/get", json!({"taskId": id}));
                    script(&get_lua, "tasks/get", Some(&id), &body);
                    &get_lua
                } else {
                    &list_lua
                };
                let run = wrk(&server.url(), lua, connections);
                eprintln!("   round {round} {what} c={connections}: {run:?}");
                runs.entry((what, connections)).or_default().push(run);
            }
            let run = wrk(&server.url(), &create_lua, connections);
            eprintln!("   round {round} create c={connections}: {run:?}");
            runs.entry(("create", connections)).or_default().push(run);
        }
        server.stop();
    }
    table(&runs)
}

fn table(runs: &BTreeMap<(&str, u32), Vec<Run>>) -> String {
    let mut out = String::from(
        "| Tasks (`bench-tasks`, ours only) | load | req/s | p50 / p99 (µs) | tasks/get costs, in list pages |\n| --- | --- | ---: | ---: | ---: |\n",
    );
    let rows = [
        ("get", "tasks/get, completed task (result inlined)"),
        ("list", "tools/list (52 tools), same server"),
        ("create", "tools/call creating a task"),
    ];
    for (what, label) in rows {
        for connections in CONNECTIONS {
            let Some(these) = runs.get(&(what, connections)) else {
                continue;
            };
            let typical = median_run(these);
            let cost = match (what, runs.get(&("list", connections))) {
                ("get", Some(lists)) => {
                    let mut ratios: Vec<f64> = lists
                        .iter()
                        .zip(these)
                        .map(|(list, get)| list.rate / get.rate)
                        .collect();
                    format!("{:.2}x", median(&mut ratios))
                }
                _ => String::new(),
            };
            let _ = writeln!(
                out,
                "| {label} | {connections} conn | {:.0} | {:.0} / {:.0} | {cost} |",
                typical.rate, typical.p50_us, typical.p99_us
            );
        }
    }
    out
}

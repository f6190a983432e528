//! The inspector built into the quickstart binary, driven as a user would:
//! subcommands with arguments, an answers file, another server over stdio
//! and over HTTP, and a form answered at a real (pseudo-)terminal.

use std::io::{Read as _, Write as _};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_quickstart");

fn run(args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("the binary runs")
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

const LISTING: &str = "\
Tools (5)
  add(a: integer, b: integer)  Adds two integers.
  confirm_delete(path: string)  Deletes a file once the user confirms (a demo: nothing is touched).
  countdown(from: integer, delay_ms?: integer)  Counts down from `from`, reporting progress every `delay_ms` milliseconds, then says \"liftoff\".
  divide(a: number, b: number)  Divides `a` by `b`. Dividing by zero is a tool error the model can read.
  echo(text: string)  Echoes the text back.
Resources (1)
  memo://readme [text/plain]  What this server is and how to use it.
Resource templates (1)
  memo://notes/{id} [text/plain]  A memo note by number (1 to 3).
Prompts (1)
  review(topic)  Asks for a careful review of a topic.
";

#[test]
fn list_call_read_prompt_discover() {
    let list = run(&["list"]);
    assert!(list.status.success(), "{}", stderr(&list));
    assert_eq!(stdout(&list), LISTING);

    let tools = run(&["list", "tools"]);
    assert!(stdout(&tools).starts_with("Tools (5)\n") && !stdout(&tools).contains("Prompts"));

    let add = run(&["call", "add", r#"{"a": 2, "b": 40}"#]);
    assert!(add.status.success());
    assert_eq!(
        stdout(&add),
        "42\nstructured content:\n{\n  \"sum\": 42\n}\n"
    );

    let raw = run(&["call", "add", r#"{"a": 2, "b": 40}"#, "--json"]);
    let value: serde_json::Value = serde_json::from_str(&stdout(&raw)).unwrap();
    assert_eq!(value["structuredContent"]["sum"], 42);

    let divide = run(&["call", "divide", r#"{"a": 1, "b": 0}"#]);
    assert_eq!(divide.status.code(), Some(1));
    assert_eq!(stdout(&divide), "cannot divide by zero\n");
    assert_eq!(stderr(&divide), "tool error:\n");

    let unknown = run(&["call", "nope"]);
    assert_eq!(unknown.status.code(), Some(1));
    assert_eq!(stderr(&unknown), "error -32602: Unknown tool: nope\n");

    let bad = run(&["call", "add", "not json"]);
    assert_eq!(bad.status.code(), Some(1));
    assert!(
        stderr(&bad).starts_with("error: the arguments are not JSON"),
        "{}",
        stderr(&bad)
    );

    let read = run(&["read", "memo://notes/1"]);
    assert_eq!(
        stdout(&read),
        "[memo://notes/1 (text/plain)]\nNote 1: Buy milk.\n"
    );

    let prompt = run(&["prompt", "review", r#"{"topic": "the plan"}"#]);
    assert_eq!(
        stdout(&prompt),
        "[user] Please review the plan carefully: what works, what does not, and what to change first.\n"
    );

    let discover = run(&["discover"]);
    assert!(stdout(&discover).starts_with(
        "quickstart 0.1.0\nprotocol versions: 2026-07-28\ncapabilities: tools, resources, prompts\n"
    ));

    let progress = run(&["call", "countdown", r#"{"from": 2, "delay_ms": 1}"#]);
    assert_eq!(stdout(&progress), "liftoff\n");
    assert_eq!(
        stderr(&progress),
        "progress 0/2 2...\nprogress 1/2 1...\nprogress 2/2\n"
    );
}

#[test]
fn the_contract_subcommand_prints_the_lock_file() {
    let contract = run(&["contract"]);
    let locked =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/mcp-contract.json")).unwrap();
    assert_eq!(stdout(&contract), locked);
}

#[test]
fn questions_are_answered_from_a_file_or_explained() {
    let dir = std::env::temp_dir().join(format!("quickstart-inspector-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let answers = dir.join("answers.json");
    std::fs::write(
        &answers,
        r#"{"answer": {"action": "accept", "content": {"confirm": true}}}"#,
    )
    .unwrap();
    let answered = run(&[
        "call",
        "confirm_delete",
        r#"{"path": "/tmp/x"}"#,
        "--answers",
        answers.to_str().unwrap(),
    ]);
    assert!(answered.status.success(), "{}", stderr(&answered));
    assert_eq!(stdout(&answered), "deleted /tmp/x\n");

    // Not a terminal, no answers file: the round is shown, exit status 2.
    let unanswered = run(&["call", "confirm_delete", r#"{"path": "/tmp/x"}"#]);
    assert_eq!(unanswered.status.code(), Some(2));
    assert_eq!(
        stderr(&unanswered),
        "the server needs input to continue:\n  answer: elicitation \"Delete /tmp/x?\", fields [\"confirm\"]\n\
         answer on a terminal, or pass --answers FILE with a JSON object mapping each key to its response\n"
    );

    std::fs::write(&answers, "{}").unwrap();
    let missing = run(&[
        "call",
        "confirm_delete",
        r#"{"path": "/tmp/x"}"#,
        "--answers",
        answers.to_str().unwrap(),
    ]);
    assert_eq!(missing.status.code(), Some(1));
    assert!(
        stderr(&missing).contains("the server asks `answer` (elicitation/create), but"),
        "{}",
        stderr(&missing)
    );
}

#[test]
fn other_servers_over_stdio_and_http() {
    // Over stdio: a second copy of this binary, as any server would be.
    let over_stdio = run(&["list", "prompts", "--stdio", &format!("{BIN} --stdio")]);
    assert!(over_stdio.status.success(), "{}", stderr(&over_stdio));
    assert_eq!(
        stdout(&over_stdio),
        "Prompts (1)\n  review(topic)  Asks for a careful review of a topic.\n"
    );
    // This binary's own (here: none) items are not what is inspected, so
    // nothing is said about them.
    assert_eq!(stderr(&over_stdio), "");

    // Over HTTP: a copy serving Streamable HTTP on a free port.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let address = format!("127.0.0.1:{port}");
    let mut server = Command::new(BIN)
        .args(["--http", &address])
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let url = format!("http://{address}/mcp");
    let deadline = Instant::now() + Duration::from_secs(10);
    let echoed = loop {
        let output = run(&["call", "echo", r#"{"text": "über HTTP"}"#, "--url", &url]);
        if output.status.success() || Instant::now() > deadline {
            break output;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let listed = run(&["list", "resources", "--url", &url]);
    server.kill().unwrap();
    server.wait().unwrap();
    assert!(echoed.status.success(), "{}", stderr(&echoed));
    assert_eq!(stdout(&echoed), "über HTTP\n");
    assert!(stdout(&listed).starts_with("Resources (1)\n  memo://readme"));
    assert_eq!(stderr(&listed), "");
}

/// Answers the form at a pseudo-terminal, as a person would.
#[test]
fn a_form_is_answered_at_the_terminal() {
    let pty = nix::pty::openpty(None, None).expect("a pseudo-terminal");
    let terminal = || Stdio::from(pty.slave.try_clone().unwrap());
    let mut child = Command::new(BIN)
        .args(["call", "confirm_delete", r#"{"path": "/tmp/report"}"#])
        .stdin(terminal())
        .stdout(terminal())
        .stderr(terminal())
        .spawn()
        .unwrap();
    drop(pty.slave);
    let mut master = std::fs::File::from(pty.master);
    let (sender, screen) = std::sync::mpsc::channel::<String>();
    let mut reader = master.try_clone().unwrap();
    std::thread::spawn(move || {
        let mut buffer = [0u8; 4096];
        while let Ok(n @ 1..) = reader.read(&mut buffer) {
            if sender
                .send(String::from_utf8_lossy(&buffer[..n]).into_owned())
                .is_err()
            {
                break;
            }
        }
    });
    let mut seen = String::new();
    let mut wait_for = |text: &str| {
        let deadline = Instant::now() + Duration::from_secs(10);
        while !seen.contains(text) {
            let left = deadline.saturating_duration_since(Instant::now());
            match screen.recv_timeout(left) {
                Ok(chunk) => seen.push_str(&chunk),
                Err(_) => panic!("timed out waiting for {text:?}; the terminal shows:\n{seen}"),
            }
        }
        std::mem::take(&mut seen)
    };
    let asked = wait_for("[a]ccept, [d]ecline, [c]ancel (default a): ");
    assert!(
        asked.contains("The server asks (answer): Delete /tmp/report?"),
        "{asked}"
    );
    master.write_all(b"a\n").unwrap();
    let field = wait_for("(y/n): ");
    assert!(field.contains("Delete it for good?"), "{field}");
    master.write_all(b"maybe\n").unwrap();
    assert!(wait_for("(y/n): ").contains("answer y or n"));
    master.write_all(b"y\n").unwrap();
    wait_for("deleted /tmp/report");
    assert!(child.wait().unwrap().success());
}

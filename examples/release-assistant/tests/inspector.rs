//! A two-round flow through the built-in inspector, answered from a file.

use std::process::{Command, Stdio};

#[test]
fn a_production_deploy_answered_from_a_file() {
    let dir = std::env::temp_dir().join(format!("release-inspector-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let answers = dir.join("answers.json");
    // Keys are stable: the first and second questions of the flow.
    std::fs::write(
        &answers,
        r#"{
            "elicitation_1": {"action": "accept", "content": {"environment": "production", "migrate": true}},
            "elicitation_2": {"action": "accept", "content": {"service": "web"}}
        }"#,
    )
    .unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_release-assistant"))
        .args([
            "call",
            "deploy",
            r#"{"service": "web"}"#,
            "--answers",
            answers.to_str().unwrap(),
        ])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&output.stdout),
        "deployed web to production (build 1042, migrations run)\n"
    );
}

#[test]
fn a_release_task_followed_to_its_end() {
    let dir = std::env::temp_dir().join(format!("release-task-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let answers = dir.join("answers.json");
    std::fs::write(
        &answers,
        r#"{"elicitation_1": {"action": "accept", "content": {"publish": true}}}"#,
    )
    .unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_release-assistant"))
        .args([
            "call",
            "ship_release",
            r#"{"version": "1.4.0", "step_ms": 50}"#,
            "--answers",
            answers.to_str().unwrap(),
        ])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert_eq!(String::from_utf8_lossy(&output.stdout), "published 1.4.0\n");
    // stderr is not a terminal: one plain line per change of status.
    let lines: Vec<&str> = stderr.lines().filter(|l| l.starts_with("task ")).collect();
    assert!(
        lines.iter().any(|l| l.ends_with("input_required 3/4 (75%): waiting for approval to publish 1.4.0")),
        "{stderr}"
    );
    assert!(lines.last().unwrap().contains(": completed"), "{stderr}");
}

#[test]
fn ctrl_c_cancels_the_task_being_followed() {
    use std::io::{BufRead as _, BufReader};
    let mut child = Command::new(env!("CARGO_BIN_EXE_release-assistant"))
        .args([
            "call",
            "ship_release",
            r#"{"version": "9.9.9", "step_ms": 60000}"#,
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut seen = Vec::new();
    // Wait until the task is being followed, then press Ctrl-C.
    loop {
        let mut line = String::new();
        assert!(stderr.read_line(&mut line).unwrap() > 0, "{seen:?}");
        let working = line.starts_with("task ") && line.contains(": working");
        seen.push(line);
        if working {
            break;
        }
    }
    let status = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let rest: Vec<String> = stderr.lines().map(Result::unwrap).collect();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(2), "{seen:?} {rest:?}");
    assert!(
        rest.iter()
            .any(|l| l.starts_with("cancelling task ") && l.ends_with("(Ctrl-C)")),
        "{rest:?}"
    );
    assert!(rest.iter().any(|l| l.contains(": cancelled")), "{rest:?}");
    assert_eq!(
        rest.last().map(String::as_str),
        Some("the task was cancelled"),
        "{rest:?}"
    );
}

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

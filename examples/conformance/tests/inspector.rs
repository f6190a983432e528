//! The inspector answering roots and sampling requests of the fixture
//! server non-interactively: roots from `--root`, the rest from a file.

use std::process::{Command, Output, Stdio};

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_conformance-server"))
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("the binary runs")
}

#[test]
fn roots_come_from_the_root_flags() {
    let output = run(&[
        "call",
        "test_input_required_result_list_roots",
        "--root",
        "/srv/data",
        "--root",
        "/srv/my logs",
    ]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&output.stdout),
        "The client has 2 root(s): file:///srv/data, file:///srv/my%20logs\n"
    );
}

#[test]
fn several_questions_in_one_round_from_a_file() {
    let dir = std::env::temp_dir().join(format!("conformance-inspector-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let answers = dir.join("answers.json");
    std::fs::write(
        &answers,
        r#"{
            "user_name": {"action": "accept", "content": {"name": "Ada"}},
            "greeting": {"role": "assistant", "content": {"type": "text", "text": "Hello"}, "model": "m"}
        }"#,
    )
    .unwrap();
    let output = run(&[
        "call",
        "test_input_required_result_multiple_inputs",
        "--answers",
        answers.to_str().unwrap(),
        "--root",
        "/tmp",
    ]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&output.stdout),
        "Hello Ada! (1 root(s) shared)\n"
    );
}

//! The skill the release assistant ships, as a host loads it: listed
//! without a file fetched, then loaded and read with every file verified
//! against its digest and size.

use mcp_runtime::testing::TestClient;

const SKILL: &str = "skill://release-workflow/SKILL.md";

fn client() -> TestClient {
    let server = release_assistant::builder()
        .build()
        .expect("the server builds");
    TestClient::with_server(server)
}

#[tokio::test]
async fn the_release_workflow_skill_is_listed_with_every_file() {
    let mut client = client();
    let skills = client.list_skills().await;
    let [skill] = skills.as_slice() else {
        panic!("one skill: {skills:?}");
    };
    assert_eq!(skill.uri, SKILL);
    assert_eq!(skill.name(), Some("release-workflow"));
    let files: Vec<&str> = skill
        .resources
        .iter()
        .flatten()
        .map(|file| file.uri.as_str())
        .collect();
    assert_eq!(
        files,
        [
            SKILL,
            "skill://release-workflow/checklists/production/preflight.md",
            "skill://release-workflow/references/rounds.md",
        ]
    );
}

#[tokio::test]
async fn the_skill_and_its_nested_files_load_verified() {
    let mut client = client();
    let skill = client.load_skill(SKILL).await;
    assert!(
        skill
            .text()
            .contains("Call `release_notes` with the `version`")
    );
    for file in ["references/rounds.md", "checklists/production/preflight.md"] {
        let content = client.read_skill_file(&skill, file).await;
        let text = content.text().expect("markdown is text");
        assert!(text.starts_with("# "), "{file}: {text}");
    }
    // Every tool the skill names is one the server serves.
    let tools: Vec<String> = client
        .list_tools()
        .await
        .into_iter()
        .map(|tool| tool.name)
        .collect();
    for named in ["deploy", "release_notes", "ship_release"] {
        assert!(skill.text().contains(&format!("`{named}`")), "{named}");
        assert!(tools.iter().any(|tool| tool == named), "{named}");
    }
}

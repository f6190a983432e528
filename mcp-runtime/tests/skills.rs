//! The Skills extension (SEP-2640) in process: skills embedded at compile
//! time and loaded at run time, answered with exact JSON (the digests are
//! those of the files in tests/skills), and the skills' files served as
//! resources.
#![cfg(feature = "skills")]

use mcp_runtime::skills::{Skill, Skills};
use mcp_runtime::{Server, ServerBuilder};
use mcp_test_support::{assert_valid, parse, request};
use serde_json::{Value, json};

fn server(skills: &Skills) -> Server {
    ServerBuilder::new("skills", "1.0.0")
        .skills(skills)
        .build()
        .unwrap()
}

/// The result of `method`, without the `_meta` every result carries; or
/// the error.
async fn send(server: &Server, method: &str, params: Value) -> Value {
    let mut response = parse(
        &server
            .exchange(request(1, method, params))
            .await
            .response
            .unwrap(),
    );
    if let Some(result) = response.get_mut("result") {
        let meta = result.as_object_mut().unwrap().remove("_meta").unwrap();
        assert_eq!(
            meta,
            json!({"io.modelcontextprotocol/serverInfo": {"name": "skills", "version": "1.0.0"}})
        );
        return result.clone();
    }
    response["error"].clone()
}

fn refunds() -> Value {
    json!({
        "uri": "skill://acme/billing/refunds/SKILL.md",
        "frontmatter": {"name": "refunds", "description": "Process customer refund requests per company policy"},
        "resources": [
            {"uri": "skill://acme/billing/refunds/SKILL.md", "digest": "sha256:f64d1ab78cff0a518cecdb32f5bf5273da78620ddab1612c7617c39ce30ccd54", "size": 144},
            {"uri": "skill://acme/billing/refunds/examples/email.md", "digest": "sha256:806ef78ac77a52eeee1afebc1eb9de54360f1fd97c7784b3f620ec71b5933e70", "size": 54}
        ]
    })
}

fn git_workflow() -> Value {
    json!({
        "uri": "skill://git-workflow/SKILL.md",
        "frontmatter": {"name": "git-workflow", "description": "Follow this team's Git conventions for branching and commits"},
        "resources": [
            {"uri": "skill://git-workflow/SKILL.md", "digest": "sha256:e44906809bfc06866d301785985160a240ae214f0d71bb9e4f19de901c12e847", "size": 232}
        ]
    })
}

fn pdf_processing() -> Value {
    json!({
        "uri": "skill://pdf-processing/SKILL.md",
        "frontmatter": {
            "name": "pdf-processing",
            "description": "Extract, fill, and assemble PDF documents",
            "license": "Apache-2.0",
            "metadata": {"version": "2.1.0"}
        },
        "resources": [
            {"uri": "skill://pdf-processing/SKILL.md", "digest": "sha256:ab80a23eeb4abd417aa79cebacc48ca9e6b708fa3bb6461450f571bab6cad352", "size": 240},
            {"uri": "skill://pdf-processing/references/FORMS.md", "digest": "sha256:37200122d69a0e325f3b69f0da8e25bb45277471d36b80de44a956e7eafb4c05", "size": 67},
            {"uri": "skill://pdf-processing/templates/invoice.md", "digest": "sha256:6a758fc03b740c7414149ad6b2a8ed90e812da61caf054ad738d207e4047d6e0", "size": 39},
            {"uri": "skill://pdf-processing/templates/regional/eu-invoice.md", "digest": "sha256:62b87e7069f5b84ba774cc10213bc3144f7024574ba932dc683143203e21d57d", "size": 68}
        ]
    })
}

#[tokio::test]
async fn the_extension_is_advertised_with_directory_reads_and_resources() {
    let server = server(&mcp_runtime::skills!("tests/skills"));
    let discovered = send(&server, "server/discover", json!({})).await;
    assert_eq!(
        discovered["capabilities"],
        json!({
            "resources": {"listChanged": true},
            "logging": {},
            "extensions": {"io.modelcontextprotocol/skills": {"directoryRead": true}}
        })
    );
}

#[tokio::test]
async fn skills_list_pages_whole_entries_with_digests_and_sizes() {
    let server = server(&mcp_runtime::skills!("tests/skills").page_size(2));
    let first = send(&server, "skills/list", json!({})).await;
    let cursor = first["nextCursor"].as_str().unwrap().to_owned();
    assert_eq!(
        first,
        json!({
            "resultType": "complete",
            "skills": [refunds(), git_workflow()],
            "nextCursor": cursor,
            "ttlMs": 0,
            "cacheScope": "private"
        })
    );
    let second = send(&server, "skills/list", json!({"cursor": cursor})).await;
    assert_eq!(
        second,
        json!({"resultType": "complete", "skills": [pdf_processing()], "ttlMs": 0, "cacheScope": "private"})
    );
    let forged = send(&server, "skills/list", json!({"cursor": "%%%"})).await;
    assert_eq!(forged, json!({"code": -32602, "message": "Invalid cursor"}));
}

#[tokio::test]
async fn skills_get_answers_any_skill_served_and_refuses_others() {
    // A listing of one page would not hold pdf-processing: get still does.
    let server = server(&mcp_runtime::skills!("tests/skills").page_size(1));
    let got = send(
        &server,
        "skills/get",
        json!({"uri": "skill://pdf-processing/SKILL.md"}),
    )
    .await;
    assert_eq!(
        got,
        json!({"resultType": "complete", "skill": pdf_processing(), "ttlMs": 0, "cacheScope": "private"})
    );
    let unknown = send(
        &server,
        "skills/get",
        json!({"uri": "skill://nope/SKILL.md"}),
    )
    .await;
    assert_eq!(
        unknown,
        json!({"code": -32602, "message": "Unknown skill: skill://nope/SKILL.md"})
    );
    let file = send(
        &server,
        "skills/get",
        json!({"uri": "skill://pdf-processing/templates/invoice.md"}),
    )
    .await;
    assert_eq!(file["code"], -32602);
}

#[tokio::test]
async fn directories_list_their_direct_children() {
    let server = server(&mcp_runtime::skills!("tests/skills"));
    let root = send(
        &server,
        "resources/directory/read",
        json!({"uri": "skill://pdf-processing"}),
    )
    .await;
    assert_eq!(
        root,
        json!({"resultType": "complete", "resources": [
            {"uri": "skill://pdf-processing/SKILL.md", "name": "pdf-processing", "description": "Extract, fill, and assemble PDF documents", "mimeType": "text/markdown", "size": 240},
            {"uri": "skill://pdf-processing/references", "name": "references", "mimeType": "inode/directory"},
            {"uri": "skill://pdf-processing/templates", "name": "templates", "mimeType": "inode/directory"}
        ]})
    );
    let templates = send(
        &server,
        "resources/directory/read",
        json!({"uri": "skill://pdf-processing/templates"}),
    )
    .await;
    assert_eq!(
        templates["resources"],
        json!([
            {"uri": "skill://pdf-processing/templates/invoice.md", "name": "invoice.md", "mimeType": "text/markdown", "size": 39},
            {"uri": "skill://pdf-processing/templates/regional", "name": "regional", "mimeType": "inode/directory"}
        ])
    );
    for not_a_directory in [
        "skill://pdf-processing/SKILL.md",
        "skill://nope",
        "skill://pdf-processing/",
    ] {
        let error = send(
            &server,
            "resources/directory/read",
            json!({"uri": not_a_directory}),
        )
        .await;
        assert_eq!(
            error,
            json!({"code": -32602, "message": format!("Not a directory: {not_a_directory}")})
        );
    }
}

#[tokio::test]
async fn directory_pages_follow_the_cursor() {
    let server = server(&mcp_runtime::skills!("tests/skills").page_size(2));
    let first = send(
        &server,
        "resources/directory/read",
        json!({"uri": "skill://pdf-processing"}),
    )
    .await;
    let names: Vec<&str> = first["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["pdf-processing", "references"]);
    let cursor = first["nextCursor"].clone();
    let second = send(
        &server,
        "resources/directory/read",
        json!({"uri": "skill://pdf-processing", "cursor": cursor}),
    )
    .await;
    assert_eq!(
        second,
        json!({"resultType": "complete", "resources": [
            {"uri": "skill://pdf-processing/templates", "name": "templates", "mimeType": "inode/directory"}
        ]})
    );
}

#[tokio::test]
async fn every_file_is_a_resource_and_skill_md_is_described_by_its_frontmatter() {
    let server = server(&mcp_runtime::skills!("tests/skills"));
    let listed = parse(
        &server
            .exchange(request(1, "resources/list", json!({})))
            .await
            .response
            .unwrap(),
    );
    assert_valid("ListResourcesResultResponse", &listed);
    let resources = listed["result"]["resources"].as_array().unwrap();
    assert_eq!(resources.len(), 7);
    assert_eq!(
        resources[0],
        json!({"uri": "skill://acme/billing/refunds/SKILL.md", "name": "refunds", "description": "Process customer refund requests per company policy", "mimeType": "text/markdown", "size": 144})
    );
    let read = parse(
        &server
            .exchange(request(
                2,
                "resources/read",
                json!({"uri": "skill://git-workflow/SKILL.md"}),
            ))
            .await
            .response
            .unwrap(),
    );
    assert_valid("ReadResourceResultResponse", &read);
    assert_eq!(
        read["result"]["contents"],
        json!([{"uri": "skill://git-workflow/SKILL.md", "mimeType": "text/markdown", "text": include_str!("skills/git-workflow/SKILL.md")}])
    );
}

#[tokio::test]
async fn skills_loaded_at_run_time_match_the_embedded_ones() {
    let loaded = Skills::load_dir("tests/skills").unwrap();
    let embedded = mcp_runtime::skills!("tests/skills");
    let (loaded, embedded) = (server(&loaded), server(&embedded));
    assert_eq!(
        send(&loaded, "skills/list", json!({})).await,
        send(&embedded, "skills/list", json!({})).await
    );
}

#[tokio::test]
async fn skills_added_while_the_server_runs_are_served_and_listed() {
    let skills = Skills::new();
    let server = server(&skills);
    assert_eq!(
        send(&server, "skills/list", json!({})).await["skills"],
        json!([])
    );
    let skill = Skill::from_files(
        "notes",
        [
            (
                "SKILL.md",
                &b"---\nname: notes\ndescription: Keep notes\n---\nWrite them down.\n"[..],
            ),
            ("how/to.md", b"x"),
        ],
    )
    .unwrap();
    skills.add(skill).unwrap();
    let listed = send(&server, "skills/list", json!({})).await;
    assert_eq!(listed["skills"][0]["uri"], "skill://notes/SKILL.md");
    assert_eq!(
        listed["skills"][0]["resources"][1],
        json!({"uri": "skill://notes/how/to.md", "digest": "sha256:2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881", "size": 1})
    );
    let resources = send(&server, "resources/list", json!({})).await;
    assert_eq!(resources["resources"].as_array().unwrap().len(), 2);
    assert!(skills.remove("skill://notes/SKILL.md"));
    assert_eq!(
        send(&server, "resources/list", json!({})).await["resources"],
        json!([])
    );
    let read = send(
        &server,
        "resources/read",
        json!({"uri": "skill://notes/SKILL.md"}),
    )
    .await;
    assert_eq!(read["code"], -32602);
}

#[test]
fn runtime_skills_are_checked_as_embedded_ones_are() {
    let error = |path: &str, files: &[(&str, &'static [u8])]| {
        Skill::from_files(path, files.iter().copied())
            .unwrap_err()
            .to_string()
    };
    assert_eq!(
        error(
            "notes",
            &[("SKILL.md", b"---\nname: other\ndescription: d\n---\n")]
        ),
        "notes/SKILL.md: the directory `notes` must be named after the skill: its frontmatter says `name: other`"
    );
    assert_eq!(
        error("notes", &[("SKILL.md", b"# no frontmatter")]),
        "notes/SKILL.md: SKILL.md must begin with YAML frontmatter: a `---` line, `name:` and `description:`, and a closing `---` line"
    );
    assert_eq!(
        error("notes", &[("README.md", b"x")]),
        "notes/README.md: this file is in no skill: `notes` and the directories above it have no SKILL.md"
    );
    let skill = b"---\nname: notes\ndescription: d\n---\n";
    let twice = Skills::new();
    twice
        .add(Skill::from_files("notes", [("SKILL.md", &skill[..])]).unwrap())
        .unwrap();
    assert!(
        twice
            .add(Skill::from_files("notes", [("SKILL.md", &skill[..])]).unwrap())
            .unwrap_err()
            .problem
            .contains("served at skill://notes/SKILL.md already")
    );
}

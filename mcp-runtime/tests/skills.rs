//! The Skills extension (SEP-2640) in process: skills embedded at compile
//! time and loaded at run time, answered with exact JSON (the digests are
//! those of the files in tests/skills), and the skills' files served as
//! resources.
#![cfg(feature = "skills")]

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use mcp_runtime::skills::{Skill, Skills};
use mcp_runtime::{ReadError, Server, ServerBuilder, StdioOptions};
use mcp_test_support::stdio::InMemory;
use mcp_test_support::{
    assert_valid, assert_valid_notification, assert_valid_skills, parse, request,
};
use serde_json::{Value, json};

fn server(skills: &Skills) -> Server {
    ServerBuilder::new("skills", "1.0.0")
        .with(skills)
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
        // The extension's results, held to the SEP's shapes.
        let definition = match method {
            "skills/list" => Some("ListSkillsResult"),
            "skills/get" => Some("GetSkillResult"),
            "resources/directory/read" => Some("ReadDirectoryResult"),
            _ => None,
        };
        if let Some(definition) = definition {
            assert_valid_skills(definition, result);
        }
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
    let settings = &discovered["capabilities"]["extensions"]["io.modelcontextprotocol/skills"];
    assert_valid_skills("SkillsSettings", settings);
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

/// A generated skill: its instructions written on each read, counting.
fn on_call(reads: Arc<AtomicU32>) -> Skill {
    let frontmatter = json!({
        "name": "on-call",
        "description": "Who is on call: page them with the page tool",
        "metadata": {"rota": "weekly", "team": "platform: core"}
    });
    Skill::generated("team/on-call", frontmatter, move |_ctx| {
        let read = reads.fetch_add(1, Ordering::SeqCst) + 1;
        async move {
            match read {
                1 => Ok(format!("Page Ada (read {read}).\n")),
                _ => Err(ReadError::Failed("the rota is unavailable".into())),
            }
        }
    })
    .unwrap()
}

#[tokio::test]
async fn generated_skills_have_no_resources_and_are_written_on_each_read() {
    let skills = Skills::new();
    let reads = Arc::new(AtomicU32::new(0));
    skills.add(on_call(reads.clone())).unwrap();
    let server = server(&skills);
    let entry = json!({
        "uri": "skill://team/on-call/SKILL.md",
        "frontmatter": {
            "name": "on-call",
            "description": "Who is on call: page them with the page tool",
            "metadata": {"rota": "weekly", "team": "platform: core"}
        }
    });
    let listed = send(&server, "skills/list", json!({})).await;
    assert_eq!(listed["skills"], json!([entry]));
    let got = send(
        &server,
        "skills/get",
        json!({"uri": "skill://team/on-call/SKILL.md"}),
    )
    .await;
    assert_eq!(got["skill"], entry);
    assert_eq!(reads.load(Ordering::SeqCst), 0, "listing generates nothing");

    let skill_md = json!({
        "uri": "skill://team/on-call/SKILL.md",
        "name": "on-call",
        "description": "Who is on call: page them with the page tool",
        "mimeType": "text/markdown"
    });
    let resources = send(&server, "resources/list", json!({})).await;
    assert_eq!(resources["resources"], json!([skill_md]));
    let directory = send(
        &server,
        "resources/directory/read",
        json!({"uri": "skill://team/on-call"}),
    )
    .await;
    assert_eq!(
        directory,
        json!({"resultType": "complete", "resources": [skill_md]})
    );

    let read = send(
        &server,
        "resources/read",
        json!({"uri": "skill://team/on-call/SKILL.md"}),
    )
    .await;
    let text = read["contents"][0]["text"].as_str().unwrap();
    assert_eq!(
        text,
        "---\nname: \"on-call\"\ndescription: \"Who is on call: page them with the page tool\"\nmetadata: {\"rota\":\"weekly\",\"team\":\"platform: core\"}\n---\n\nPage Ada (read 1).\n"
    );
    assert_eq!(read["contents"][0]["mimeType"], "text/markdown");
    // What a host parses out of it is the entry's frontmatter, exactly.
    let parsed = mcp_runtime_skill_format::parse_frontmatter(text.as_bytes()).unwrap();
    assert_eq!(Value::Object(parsed), entry["frontmatter"]);

    let failed = send(
        &server,
        "resources/read",
        json!({"uri": "skill://team/on-call/SKILL.md"}),
    )
    .await;
    assert_eq!(failed["code"], -32603);
    assert_eq!(
        failed["message"],
        "Failed to read resource skill://team/on-call/SKILL.md: the rota is unavailable"
    );
}

#[test]
fn generated_skills_are_checked_as_others_are() {
    let generated = |path: &str, frontmatter: Value| {
        Skill::generated(path, frontmatter, |_ctx| async { Ok(String::new()) })
            .unwrap_err()
            .to_string()
    };
    assert_eq!(
        generated("team/pager", json!({"name": "on-call", "description": "d"})),
        "team/pager/SKILL.md: the directory `pager` must be named after the skill: its frontmatter says `name: on-call`"
    );
    assert!(
        generated("on-call", json!({"name": "on-call"})).contains("description"),
        "a description is required"
    );
    assert_eq!(
        generated("on-call", json!("on-call")),
        "on-call/SKILL.md: the frontmatter must be a JSON object"
    );
}

#[tokio::test]
async fn subscribers_hear_when_skills_are_added_or_removed() {
    let skills = Skills::new();
    let server = server(&skills);
    let (mut client, (server_read, server_write)) = InMemory::pair();
    let serve = server.serve_streams(StdioOptions::new(), server_read, server_write);
    let script = async move {
        let listen = request(
            9,
            "subscriptions/listen",
            json!({"notifications": {"resourcesListChanged": true}}),
        );
        client.send(&listen).await;
        assert_valid_notification(&client.receive().await);
        skills.add(on_call(Arc::default())).unwrap();
        assert!(skills.remove("skill://team/on-call/SKILL.md"));
        for _ in 0..2 {
            let note = client.receive().await;
            assert_valid_notification(&note);
            assert_eq!(note["method"], "notifications/resources/list_changed");
        }
        client.close().await;
        assert_eq!(client.receive().await["method"], "notifications/cancelled");
    };
    let (served, ()) = tokio::join!(serve, script);
    served.unwrap();
}

#[cfg(feature = "legacy")]
#[tokio::test]
async fn legacy_clients_reach_the_skills_through_the_adapter() {
    use mcp_test_support::legacy::assert_valid_legacy_response;

    let server = server(&mcp_runtime::skills!("tests/skills"));
    let (mut client, (server_read, server_write)) = InMemory::pair();
    let serve = server.serve_streams(StdioOptions::new(), server_read, server_write);
    let script = async move {
        let mut call = async |id: i64, method: &str, params: Value, definition: &str| {
            let message = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
            client.send(&message.to_string()).await;
            let response = client.receive().await;
            assert_eq!(response["id"], id, "{response}");
            assert_valid_legacy_response(definition, &response);
            response
        };
        let initialize = json!({
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "legacy-host", "version": "1.0.0"}
        });
        let response = call(0, "initialize", initialize, "InitializeResult").await;
        assert_eq!(
            response["result"]["capabilities"]["extensions"],
            json!({"io.modelcontextprotocol/skills": {"directoryRead": true}})
        );
        let mut listed = call(1, "skills/list", json!({}), "Result").await;
        assert_valid_skills("ListSkillsResult", &listed["result"]);
        // The list-caching attributes and `resultType` are 2026-07-28's:
        // not on this wire.
        listed["result"].as_object_mut().unwrap().remove("_meta");
        assert_eq!(
            listed["result"],
            json!({"skills": [refunds(), git_workflow(), pdf_processing()]})
        );
        let uri = json!({"uri": "skill://git-workflow/SKILL.md"});
        let mut got = call(2, "skills/get", uri, "Result").await;
        got["result"].as_object_mut().unwrap().remove("_meta");
        assert_eq!(got["result"], json!({"skill": git_workflow()}));
        let unknown = call(
            3,
            "skills/get",
            json!({"uri": "skill://nope/SKILL.md"}),
            "Result",
        )
        .await;
        assert_eq!(unknown["error"]["code"], -32602);
        let directory = json!({"uri": "skill://pdf-processing/templates"});
        let read = call(4, "resources/directory/read", directory, "Result").await;
        assert_eq!(read["result"]["resources"].as_array().unwrap().len(), 2);
        let file = json!({"uri": "skill://acme/billing/refunds/examples/email.md"});
        let read = call(5, "resources/read", file, "ReadResourceResult").await;
        assert_eq!(read["result"]["contents"][0]["mimeType"], "text/markdown");
        client.close().await;
    };
    let (served, ()) = tokio::join!(serve, script);
    served.unwrap();
}

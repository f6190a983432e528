//! Readable output: results on stdout, progress, logs and errors on
//! stderr. `--json` prints results as the server sent them.

use std::process::ExitCode;

use serde::Serialize;
use serde_json::Value;

use crate::client::{ClientError, Discovery, InputRequest, InputRequired, Notifications};
use crate::protocol::{
    CallToolResult, Content, GetPromptResult, ReadResourceResult, ResourceContents,
};

fn json(value: &impl Serialize) {
    println!(
        "{}",
        serde_json::to_string_pretty(value).unwrap_or_default()
    );
}

pub(super) fn error(error: &ClientError) {
    match error {
        ClientError::Rpc(error) => {
            eprintln!("error {}: {}", error.code, error.message);
            if let Some(data) = &error.data {
                eprintln!("  data: {data}");
            }
        }
        other => eprintln!("error: {other}"),
    }
}

pub(super) fn notifications(notifications: &Notifications) {
    for update in notifications.progress() {
        let total = update.total.map(|t| format!("/{t}")).unwrap_or_default();
        let message = update.message.map(|m| format!(" {m}")).unwrap_or_default();
        eprintln!("progress {}{total}{message}", update.progress);
    }
    for entry in notifications.logs() {
        let logger = entry.logger.map(|l| format!(" {l}")).unwrap_or_default();
        eprintln!("log {:?}{logger}: {}", entry.level, entry.data);
    }
}

pub(super) fn discovery(discovery: &Discovery, raw: &Value, as_json: bool) {
    if as_json {
        return json(raw);
    }
    if let Some(info) = &discovery.server_info {
        println!("{} {}", info.name, info.version);
    }
    println!(
        "protocol versions: {}",
        discovery.supported_versions.join(", ")
    );
    let capabilities = serde_json::to_value(&discovery.capabilities).unwrap_or_default();
    let offers: Vec<String> = capabilities
        .as_object()
        .into_iter()
        .flatten()
        .map(|(name, settings)| match settings.as_object() {
            Some(settings) if !settings.is_empty() => {
                format!("{name} {}", Value::Object(settings.clone()))
            }
            _ => name.clone(),
        })
        .collect();
    println!("capabilities: {}", offers.join(", "));
    if let Some(instructions) = &discovery.instructions {
        println!("instructions: {instructions}");
    }
}

fn first_line(text: Option<&str>) -> &str {
    text.and_then(|t| t.lines().next()).unwrap_or("")
}

pub(super) fn listing(listed: &Value, as_json: bool) {
    if as_json {
        return json(listed);
    }
    let section = |key: &str, title: &str, id: &str, describe: &dyn Fn(&Value) -> String| {
        let Some(items) = listed.get(key).and_then(Value::as_array) else {
            return;
        };
        println!("{title} ({})", items.len());
        for item in items {
            let name = item[id].as_str().unwrap_or("?");
            let detail = describe(item);
            let description = first_line(item["description"].as_str());
            println!("  {name}{detail}  {description}");
        }
    };
    section("tools", "Tools", "name", &|tool| {
        let schema = &tool["inputSchema"];
        let required: Vec<&str> = schema["required"]
            .as_array()
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let arguments: Vec<String> = schema["properties"]
            .as_object()
            .into_iter()
            .flatten()
            .map(|(name, property)| {
                let optional = if required.contains(&name.as_str()) {
                    ""
                } else {
                    "?"
                };
                let kind = property["type"].as_str().unwrap_or("any");
                format!("{name}{optional}: {kind}")
            })
            .collect();
        format!("({})", arguments.join(", "))
    });
    section("resources", "Resources", "uri", &|resource| {
        resource["mimeType"]
            .as_str()
            .map(|m| format!(" [{m}]"))
            .unwrap_or_default()
    });
    section(
        "resourceTemplates",
        "Resource templates",
        "uriTemplate",
        &|template| {
            template["mimeType"]
                .as_str()
                .map(|m| format!(" [{m}]"))
                .unwrap_or_default()
        },
    );
    section("prompts", "Prompts", "name", &|prompt| {
        let arguments: Vec<String> = prompt["arguments"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|a| {
                let optional = if a["required"] == true { "" } else { "?" };
                format!("{}{optional}", a["name"].as_str().unwrap_or("?"))
            })
            .collect();
        format!("({})", arguments.join(", "))
    });
}

fn content(block: &Content) {
    match block {
        Content::Text(text) => println!("{}", text.text),
        Content::Image(image) => println!(
            "[image {}, {} base64 characters]",
            image.mime_type,
            image.data.len()
        ),
        Content::Audio(audio) => println!(
            "[audio {}, {} base64 characters]",
            audio.mime_type,
            audio.data.len()
        ),
        Content::ResourceLink(link) => println!("[link {} {}]", link.uri, link.name),
        Content::Resource(embedded) => resource_contents(&embedded.resource),
    }
}

fn resource_contents(contents: &ResourceContents) {
    match contents {
        ResourceContents::Text(text) => {
            let mime = text
                .mime_type
                .as_deref()
                .map(|m| format!(" ({m})"))
                .unwrap_or_default();
            println!("[{}{mime}]\n{}", text.uri, text.text);
        }
        ResourceContents::Blob(blob) => {
            let mime = blob
                .mime_type
                .as_deref()
                .map(|m| format!(" ({m})"))
                .unwrap_or_default();
            println!(
                "[{}{mime}: {} base64 characters]",
                blob.uri,
                blob.blob.len()
            );
        }
    }
}

/// Prints a tool result; a tool error exits with status 1.
pub(super) fn tool_result(result: &CallToolResult, as_json: bool) -> ExitCode {
    if as_json {
        json(result);
    } else {
        if result.is_error {
            eprintln!("tool error:");
        }
        for block in &result.content {
            content(block);
        }
        if let Some(structured) = &result.structured_content {
            println!("structured content:");
            json(structured);
        }
    }
    if result.is_error {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

pub(super) fn resource(result: &ReadResourceResult, as_json: bool) {
    if as_json {
        return json(result);
    }
    for contents in &result.contents {
        resource_contents(contents);
    }
}

pub(super) fn prompt(result: &GetPromptResult, as_json: bool) {
    if as_json {
        return json(result);
    }
    if let Some(description) = &result.description {
        println!("{description}");
    }
    for message in &result.messages {
        let role = serde_json::to_value(message.role).unwrap_or_default();
        print!("[{}] ", role.as_str().unwrap_or("?"));
        content(&message.content);
    }
}

/// A round nobody could answer: what it asks and how to answer it.
pub(super) fn unanswered<R>(round: &InputRequired<R>) {
    unanswered_requests(&round.requests);
}

/// The questions nobody could answer (no terminal, no answers file).
pub(super) fn unanswered_requests(requests: &[(String, InputRequest)]) {
    eprintln!("the server needs input to continue:");
    for (key, request) in requests {
        match request {
            InputRequest::Elicitation(e) if e.mode == "url" => {
                eprintln!(
                    "  {key}: elicitation (URL) {:?}: {}",
                    e.message,
                    e.url.as_deref().unwrap_or("")
                );
            }
            InputRequest::Elicitation(e) => {
                let fields: Vec<&str> = e.fields().into_iter().map(|(name, _)| name).collect();
                eprintln!("  {key}: elicitation {:?}, fields {fields:?}", e.message);
            }
            InputRequest::Sampling(s) => eprintln!("  {key}: sampling {:?}", s.prompt()),
            InputRequest::Roots => eprintln!("  {key}: roots"),
        }
    }
    eprintln!(
        "answer on a terminal, or pass --answers FILE with a JSON object mapping each key to its response"
    );
}

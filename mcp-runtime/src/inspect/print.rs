//! Readable output: results on stdout, progress, logs and errors on
//! stderr. `--json` prints results as the server sent them.
//!
//! Results are written to a `Write` and its errors returned, so that a
//! reader that goes away (`list | head -1`) ends the inspector quietly
//! instead of panicking in `println!`.

use std::io::{self, Write};
use std::process::ExitCode;

use serde::Serialize;
use serde_json::Value;

use crate::client::{ClientError, Discovery, InputRequest, InputRequired, Notifications};

fn json(out: &mut dyn Write, value: &impl Serialize) -> io::Result<()> {
    writeln!(
        out,
        "{}",
        serde_json::to_string_pretty(value).unwrap_or_default()
    )
}

/// Why the command failed (to stderr, by the caller).
pub(super) fn error(out: &mut dyn Write, error: &ClientError) -> io::Result<()> {
    match error {
        ClientError::Rpc(error) => {
            writeln!(out, "error {}: {}", error.code, error.message)?;
            if let Some(data) = &error.data {
                writeln!(out, "  data: {data}")?;
            }
        }
        ClientError::Authorization(refusal) => {
            writeln!(out, "error: {refusal}")?;
            // No token was sent (OAuth, when compiled in, is off or gave
            // up): say how to send one.
            if refusal.status == 401 && refusal.error().is_none() {
                writeln!(
                    out,
                    "  hint: send a token with --header \"Authorization: Bearer TOKEN\""
                )?;
            }
        }
        other => writeln!(out, "error: {other}")?,
    }
    Ok(())
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

pub(super) fn discovery(
    out: &mut dyn Write,
    discovery: &Discovery,
    raw: &Value,
    as_json: bool,
) -> io::Result<()> {
    if as_json {
        return json(out, raw);
    }
    if let Some(info) = &discovery.server_info {
        writeln!(out, "{} {}", info.name, info.version)?;
    }
    writeln!(
        out,
        "protocol versions: {}",
        discovery.supported_versions.join(", ")
    )?;
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
    writeln!(out, "capabilities: {}", offers.join(", "))?;
    if let Some(instructions) = &discovery.instructions {
        writeln!(out, "instructions: {instructions}")?;
    }
    Ok(())
}

/// The longest summary `list` prints after an item's name, in characters.
const SUMMARY_CHARS: usize = 100;

/// A one-line summary of a description: its first paragraph with the
/// lines joined (a doc comment wraps its sentences at line ends), as many
/// whole sentences as fit in [`SUMMARY_CHARS`], or, when even the first
/// does not fit, its words that do with an ellipsis: never half a
/// sentence that looks whole.
fn summary(text: Option<&str>) -> String {
    let paragraph = text
        .unwrap_or("")
        .lines()
        .map(str::trim)
        .skip_while(|line| line.is_empty())
        .take_while(|line| !line.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    if paragraph.chars().count() <= SUMMARY_CHARS {
        return paragraph;
    }
    let fits = |end: usize| paragraph[..end].chars().count() <= SUMMARY_CHARS;
    // Sentence ends: `.`, `!` or `?` before a space.
    let sentences = paragraph
        .match_indices(". ")
        .chain(paragraph.match_indices("! "))
        .chain(paragraph.match_indices("? "))
        .map(|(at, _)| at + 1)
        .filter(|&end| fits(end))
        .max();
    if let Some(end) = sentences {
        return paragraph[..end].to_owned();
    }
    let words = paragraph
        .match_indices(' ')
        .map(|(at, _)| at)
        .take_while(|&end| paragraph[..end].chars().count() < SUMMARY_CHARS)
        .last()
        .unwrap_or(0);
    format!("{}…", paragraph[..words].trim_end_matches([',', ';', ':']))
}

pub(super) fn listing(out: &mut dyn Write, listed: &Value, as_json: bool) -> io::Result<()> {
    if as_json {
        return json(out, listed);
    }
    let mut section = |key: &str, title: &str, id: &str, describe: &dyn Fn(&Value) -> String| {
        let Some(items) = listed.get(key).and_then(Value::as_array) else {
            return Ok(());
        };
        writeln!(out, "{title} ({})", items.len())?;
        for item in items {
            let name = item[id].as_str().unwrap_or("?");
            let detail = describe(item);
            let description = summary(item["description"].as_str());
            writeln!(out, "  {name}{detail}  {description}")?;
        }
        Ok::<(), io::Error>(())
    };
    section("tools", "Tools", "name", &tool_arguments)?;
    section("resources", "Resources", "uri", &mime_type)?;
    section(
        "resourceTemplates",
        "Resource templates",
        "uriTemplate",
        &mime_type,
    )?;
    section("prompts", "Prompts", "name", &prompt_arguments)
}

/// `(city: string, unit: celsius|fahrenheit, days?: integer)`.
fn tool_arguments(tool: &Value) -> String {
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
            format!("{name}{optional}: {}", value_kind(property, schema, 0))
        })
        .collect();
    format!("({})", arguments.join(", "))
}

/// What a value of `schema` may be, briefly: its type, its choices
/// (`celsius|fahrenheit`), `[item]` for arrays. `$ref`s are followed within
/// `root` (never fetched).
fn value_kind(schema: &Value, root: &Value, depth: usize) -> String {
    if depth > 8 {
        return "any".to_owned();
    }
    if let Some(target) = schema["$ref"]
        .as_str()
        .and_then(|r| r.strip_prefix('#'))
        .and_then(|pointer| root.pointer(pointer))
    {
        return value_kind(target, root, depth + 1);
    }
    if let Some(choices) = schema["enum"].as_array() {
        return choices.iter().map(choice).collect::<Vec<_>>().join("|");
    }
    if let Some(value) = schema.get("const") {
        return choice(value);
    }
    for key in ["oneOf", "anyOf"] {
        if let Some(alternatives) = schema[key].as_array() {
            let kinds: Vec<String> = alternatives
                .iter()
                .filter(|a| a["type"] != "null")
                .map(|a| value_kind(a, root, depth + 1))
                .collect();
            return kinds.join("|");
        }
    }
    let kind = |name: &str| match name {
        "array" => format!("[{}]", value_kind(&schema["items"], root, depth + 1)),
        other => other.to_owned(),
    };
    match &schema["type"] {
        Value::String(name) => kind(name),
        Value::Array(names) => names
            .iter()
            .filter_map(Value::as_str)
            .filter(|n| *n != "null")
            .map(kind)
            .collect::<Vec<_>>()
            .join("|"),
        _ => "any".to_owned(),
    }
}

/// An enum or const value as a choice: strings bare, others as JSON.
fn choice(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

fn mime_type(item: &Value) -> String {
    item["mimeType"]
        .as_str()
        .map(|m| format!(" [{m}]"))
        .unwrap_or_default()
}

fn prompt_arguments(prompt: &Value) -> String {
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
}

/// A content block, read from the JSON as sent (a kind this client does
/// not know is named, not refused).
fn content(out: &mut dyn Write, block: &Value) -> io::Result<()> {
    let text = |key: &str| block[key].as_str().unwrap_or_default();
    match block["type"].as_str().unwrap_or_default() {
        "text" => writeln!(out, "{}", text("text")),
        kind @ ("image" | "audio") => writeln!(
            out,
            "[{kind} {}, {} base64 characters]",
            text("mimeType"),
            text("data").len()
        ),
        "resource_link" => writeln!(out, "[link {} {}]", text("uri"), text("name")),
        "resource" => resource_contents(out, &block["resource"]),
        other => writeln!(out, "[{other:?} content]"),
    }
}

fn resource_contents(out: &mut dyn Write, contents: &Value) -> io::Result<()> {
    let uri = contents["uri"].as_str().unwrap_or_default();
    let mime = contents["mimeType"]
        .as_str()
        .map(|m| format!(" ({m})"))
        .unwrap_or_default();
    match (contents["text"].as_str(), contents["blob"].as_str()) {
        (Some(text), _) => writeln!(out, "[{uri}{mime}]\n{text}"),
        (None, Some(blob)) => writeln!(out, "[{uri}{mime}: {} base64 characters]", blob.len()),
        (None, None) => writeln!(out, "[{uri}{mime}: neither text nor blob]"),
    }
}

/// The array `key` of a result (absent: none).
fn items<'a>(result: &'a Value, key: &str) -> &'a [Value] {
    result[key].as_array().map_or(&[], Vec::as_slice)
}

/// Prints a tool result (`CallToolResult`, as sent); a tool error exits
/// with status 1.
pub(super) fn tool_result(
    out: &mut dyn Write,
    result: &Value,
    as_json: bool,
) -> io::Result<ExitCode> {
    let is_error = result["isError"] == true;
    if as_json {
        json(out, result)?;
    } else {
        if is_error {
            eprintln!("tool error:");
        }
        for block in items(result, "content") {
            content(out, block)?;
        }
        if let Some(structured) = result.get("structuredContent").filter(|s| !s.is_null()) {
            writeln!(out, "structured content:")?;
            json(out, structured)?;
        }
    }
    Ok(if is_error {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

/// Prints a `ReadResourceResult`, as sent.
pub(super) fn resource(out: &mut dyn Write, result: &Value, as_json: bool) -> io::Result<()> {
    if as_json {
        return json(out, result);
    }
    for contents in items(result, "contents") {
        resource_contents(out, contents)?;
    }
    Ok(())
}

/// Prints a `GetPromptResult`, as sent.
pub(super) fn prompt(out: &mut dyn Write, result: &Value, as_json: bool) -> io::Result<()> {
    if as_json {
        return json(out, result);
    }
    if let Some(description) = result["description"].as_str() {
        writeln!(out, "{description}")?;
    }
    for message in items(result, "messages") {
        write!(out, "[{}] ", message["role"].as_str().unwrap_or("?"))?;
        content(out, &message["content"])?;
    }
    Ok(())
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

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{listing, summary};

    #[test]
    fn tool_arguments_show_choices_items_and_references() {
        let listed = json!({"tools": [{
            "name": "forecast",
            "description": "The forecast.\nMore.",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "city": {"type": "string"},
                    "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
                    "speed": {"oneOf": [{"const": "fast", "description": "Fast."}, {"const": "slow"}]},
                    "days": {"type": ["integer", "null"]},
                    "places": {"type": "array", "items": {"$ref": "#/$defs/Place"}},
                    "tags": {"type": "array", "items": {"type": "string"}},
                    "region": {"$ref": "#/$defs/Region"},
                    "profile": {"$ref": "https://example.com/profile.json"}
                },
                "required": ["city", "unit"],
                "$defs": {
                    "Place": {"type": "object"},
                    "Region": {"anyOf": [{"const": 1}, {"const": 2}, {"type": "null"}]}
                }
            }
        }]});
        let mut out = Vec::new();
        listing(&mut out, &listed, false).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "Tools (1)\n  forecast(city: string, unit: celsius|fahrenheit, speed?: fast|slow, days?: integer, \
             places?: [object], tags?: [string], region?: 1|2, profile?: any)  The forecast. More.\n"
        );
    }

    #[test]
    fn a_summary_joins_the_first_paragraph_and_keeps_whole_sentences() {
        let wrapped = "Counts down from `from`, reporting progress every `delay_ms`\n\
                       milliseconds, then says \"liftoff\".\n\nMore about it.";
        assert_eq!(
            summary(Some(wrapped)),
            "Counts down from `from`, reporting progress every `delay_ms` milliseconds, then says \"liftoff\"."
        );
        let long = "Finds the notes that mention a word. The search is case-insensitive\n\
                    and looks at titles as well as bodies, newest first, fifty at most.";
        assert_eq!(summary(Some(long)), "Finds the notes that mention a word.");
        let one_long_sentence = "Finds the notes that mention a word in their titles, their bodies, \
                                 their tags or their attachments, newest first, fifty at most";
        assert_eq!(
            summary(Some(one_long_sentence)),
            "Finds the notes that mention a word in their titles, their bodies, their tags or their attachments…"
        );
        assert_eq!(summary(None), "");
    }

    #[test]
    fn a_closed_stdout_is_an_error_not_a_panic() {
        struct Closed;
        impl std::io::Write for Closed {
            fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
                Err(std::io::ErrorKind::BrokenPipe.into())
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        let listed = json!({"prompts": [{"name": "review"}]});
        let error = listing(&mut Closed, &listed, false).unwrap_err();
        assert_eq!(error.kind(), std::io::ErrorKind::BrokenPipe);
    }
}

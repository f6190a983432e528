//! Asking the person at the terminal: an elicitation form field by field,
//! with each value checked against its schema before it is sent, and
//! sampling requests answered by typing the model's reply. Prompts go to
//! stderr, so stdout keeps only results.

use std::io::{self, BufRead as _, Write as _};

use serde_json::{Map, Value, json};

use crate::client::{ElicitationRequest, SamplingAsk};

fn prompt(text: &str) -> io::Result<Option<String>> {
    let mut stderr = io::stderr().lock();
    write!(stderr, "{text}")?;
    stderr.flush()?;
    let mut line = String::new();
    if io::stdin().lock().read_line(&mut line)? == 0 {
        return Ok(None);
    }
    Ok(Some(line.trim_end_matches(['\n', '\r']).to_owned()))
}

fn say(text: &str) {
    eprintln!("{text}");
}

fn end_of_input() -> io::Error {
    io::Error::new(io::ErrorKind::UnexpectedEof, "the terminal closed")
}

/// The user's choice to accept, decline or cancel.
fn action(question: &str) -> io::Result<&'static str> {
    loop {
        let answer = prompt(&format!(
            "{question} [a]ccept, [d]ecline, [c]ancel (default a): "
        ))?
        .ok_or_else(end_of_input)?;
        match answer.trim().to_lowercase().as_str() {
            "" | "a" | "accept" => return Ok("accept"),
            "d" | "decline" => return Ok("decline"),
            "c" | "cancel" => return Ok("cancel"),
            _ => say("  please answer a, d or c"),
        }
    }
}

/// Asks one elicitation; returns its `ElicitResult`.
pub(super) fn elicit(key: &str, request: &ElicitationRequest) -> io::Result<Value> {
    say(&format!("\nThe server asks ({key}): {}", request.message));
    if request.mode == "url" {
        say(&format!(
            "  open: {}",
            request.url.as_deref().unwrap_or("(no URL)")
        ));
        let action = action("When you are done there:")?;
        return Ok(json!({"action": action}));
    }
    let action = action("Fill in the form?")?;
    if action != "accept" {
        return Ok(json!({"action": action}));
    }
    let mut content = Map::new();
    for (name, schema) in request.fields() {
        let required = request.requires(name);
        if let Some(value) = field(name, schema, required)? {
            content.insert(name.to_owned(), value);
        }
    }
    Ok(json!({"action": "accept", "content": content}))
}

/// Asks one field until the answer fits; `None` leaves it out.
fn field(name: &str, schema: &Value, required: bool) -> io::Result<Option<Value>> {
    let title = schema["title"].as_str().unwrap_or(name);
    let mut label = format!("  {title}");
    if let Some(description) = schema["description"].as_str() {
        label.push_str(&format!(" - {description}"));
    }
    let choices = choices(schema);
    let kind = schema["type"].as_str().unwrap_or("string");
    let mut hint = match (&choices, kind) {
        (Some(choices), "array") => {
            format!("one or more of {}, comma-separated", numbered(choices))
        }
        (Some(choices), _) => format!("one of {}", numbered(choices)),
        (None, "string") => match schema["format"].as_str() {
            Some(format) => format!("text, {format}"),
            None => "text".to_owned(),
        },
        (None, "boolean") => "y/n".to_owned(),
        (None, other) => other.to_owned(),
    };
    if let Some(default) = schema.get("default") {
        hint.push_str(&format!(", default {default}"));
    } else if !required {
        hint.push_str(", optional");
    }
    say(&label);
    loop {
        let answer = prompt(&format!("    ({hint}): "))?.ok_or_else(end_of_input)?;
        let answer = answer.trim();
        if answer.is_empty() {
            if let Some(default) = schema.get("default") {
                return Ok(Some(default.clone()));
            }
            if !required {
                return Ok(None);
            }
            say("    a value is required");
            continue;
        }
        match parse(answer, schema, kind, choices.as_deref()) {
            Ok(value) => return Ok(Some(value)),
            Err(problem) => say(&format!("    {problem}")),
        }
    }
}

/// `(value, label)` of each option of an enum field, single or multi.
fn choices(schema: &Value) -> Option<Vec<(String, String)>> {
    let source = if schema["type"] == "array" {
        &schema["items"]
    } else {
        schema
    };
    if let Some(values) = source["enum"].as_array() {
        return Some(
            values
                .iter()
                .filter_map(Value::as_str)
                .map(|v| (v.to_owned(), v.to_owned()))
                .collect(),
        );
    }
    let options = source["oneOf"]
        .as_array()
        .or_else(|| source["anyOf"].as_array())?;
    Some(
        options
            .iter()
            .filter_map(|o| {
                let value = o["const"].as_str()?;
                Some((
                    value.to_owned(),
                    o["title"].as_str().unwrap_or(value).to_owned(),
                ))
            })
            .collect(),
    )
}

fn numbered(choices: &[(String, String)]) -> String {
    choices
        .iter()
        .enumerate()
        .map(|(i, (value, label))| {
            if value == label {
                format!("{}) {value}", i + 1)
            } else {
                format!("{}) {value} ({label})", i + 1)
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// One answer as the field's type, or why it does not fit.
fn parse(
    answer: &str,
    schema: &Value,
    kind: &str,
    choices: Option<&[(String, String)]>,
) -> Result<Value, String> {
    let pick = |word: &str| -> Result<String, String> {
        let choices = choices.unwrap_or_default();
        if let Ok(index) = word.parse::<usize>()
            && let Some((value, _)) = index.checked_sub(1).and_then(|i| choices.get(i))
        {
            return Ok(value.clone());
        }
        choices
            .iter()
            .find(|(value, label)| value == word || label.eq_ignore_ascii_case(word))
            .map(|(value, _)| value.clone())
            .ok_or_else(|| format!("`{word}` is not one of the choices"))
    };
    let bound = |key: &str| schema.get(key).and_then(Value::as_f64);
    let check_range = |n: f64| -> Result<(), String> {
        if let Some(min) = bound("minimum").filter(|min| n < *min) {
            return Err(format!("must be at least {min}"));
        }
        if let Some(max) = bound("maximum").filter(|max| n > *max) {
            return Err(format!("must be at most {max}"));
        }
        Ok(())
    };
    match kind {
        "array" => {
            let picked = answer
                .split(',')
                .map(|w| pick(w.trim()))
                .collect::<Result<Vec<_>, _>>()?;
            if let Some(min) = bound("minItems").filter(|min| (picked.len() as f64) < *min) {
                return Err(format!("pick at least {min}"));
            }
            if let Some(max) = bound("maxItems").filter(|max| (picked.len() as f64) > *max) {
                return Err(format!("pick at most {max}"));
            }
            Ok(json!(picked))
        }
        _ if choices.is_some() => pick(answer).map(Value::String),
        "boolean" => match answer.to_lowercase().as_str() {
            "y" | "yes" | "true" | "1" => Ok(json!(true)),
            "n" | "no" | "false" | "0" => Ok(json!(false)),
            _ => Err("answer y or n".to_owned()),
        },
        "integer" => {
            let n: i64 = answer
                .parse()
                .map_err(|_| "a whole number is needed".to_owned())?;
            #[expect(
                clippy::cast_precision_loss,
                reason = "range bounds are compared approximately"
            )]
            check_range(n as f64)?;
            Ok(json!(n))
        }
        "number" => {
            let n: f64 = answer
                .parse()
                .map_err(|_| "a number is needed".to_owned())?;
            check_range(n)?;
            Ok(json!(n))
        }
        _ => {
            let length = answer.chars().count() as f64;
            if let Some(min) = bound("minLength").filter(|min| length < *min) {
                return Err(format!("must be at least {min} characters"));
            }
            if let Some(max) = bound("maxLength").filter(|max| length > *max) {
                return Err(format!("must be at most {max} characters"));
            }
            check_format(answer, schema["format"].as_str())?;
            Ok(json!(answer))
        }
    }
}

fn check_format(text: &str, format: Option<&str>) -> Result<(), String> {
    let digits = |s: &str, n: usize| s.len() == n && s.bytes().all(|b| b.is_ascii_digit());
    let date = |s: &str| {
        let parts: Vec<&str> = s.split('-').collect();
        parts.len() == 3 && digits(parts[0], 4) && digits(parts[1], 2) && digits(parts[2], 2)
    };
    let fits = match format {
        Some("email") => text
            .split_once('@')
            .is_some_and(|(user, host)| !user.is_empty() && host.contains('.')),
        Some("uri") => text.split_once(':').is_some_and(|(scheme, _)| {
            !scheme.is_empty()
                && scheme
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
        }),
        Some("date") => date(text),
        Some("date-time") => text
            .split_once(['T', 't'])
            .is_some_and(|(d, time)| date(d) && time.len() >= 8),
        _ => true,
    };
    if fits {
        Ok(())
    } else {
        Err(format!("not a valid {}", format.unwrap_or("value")))
    }
}

/// Asks the person to play the model; returns a `CreateMessageResult`.
pub(super) fn sample(key: &str, request: &SamplingAsk) -> io::Result<Value> {
    say(&format!(
        "\nThe server asks the model ({key}, at most {} tokens):",
        request.max_tokens
    ));
    if let Some(system) = &request.system_prompt {
        say(&format!("  [system] {system}"));
    }
    for message in &request.messages {
        say(&format!(
            "  [{}] {}",
            serde_json::to_value(message.role)
                .unwrap_or_default()
                .as_str()
                .unwrap_or("?"),
            message.text()
        ));
    }
    say("Type the reply; finish with an empty line:");
    let mut lines = Vec::new();
    loop {
        match prompt("> ")? {
            Some(line) if !line.is_empty() => lines.push(line),
            Some(_) if !lines.is_empty() => break,
            Some(_) => {}
            None => break,
        }
    }
    Ok(json!({
        "role": "assistant",
        "content": {"type": "text", "text": lines.join("\n")},
        "model": "human-at-the-terminal",
        "stopReason": "endTurn"
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_are_checked_against_the_field() {
        let int = json!({"type": "integer", "minimum": 1, "maximum": 10});
        assert_eq!(parse("3", &int, "integer", None), Ok(json!(3)));
        assert_eq!(
            parse("0", &int, "integer", None),
            Err("must be at least 1".into())
        );
        assert!(parse("x", &int, "integer", None).is_err());
        let email = json!({"type": "string", "format": "email"});
        assert!(parse("a@b.c", &email, "string", None).is_ok());
        assert_eq!(
            parse("nope", &email, "string", None),
            Err("not a valid email".into())
        );
        let colour = json!({"type": "string", "oneOf": [{"const": "r", "title": "Red"}, {"const": "b", "title": "Blue"}]});
        let options = choices(&colour).unwrap();
        assert_eq!(
            parse("2", &colour, "string", Some(&options)),
            Ok(json!("b"))
        );
        assert_eq!(
            parse("red", &colour, "string", Some(&options)),
            Ok(json!("r"))
        );
        assert!(parse("green", &colour, "string", Some(&options)).is_err());
        let sizes = json!({"type": "array", "items": {"type": "string", "enum": ["S", "M", "L"]}, "maxItems": 2});
        let options = choices(&sizes).unwrap();
        assert_eq!(
            parse("S, 3", &sizes, "array", Some(&options)),
            Ok(json!(["S", "L"]))
        );
        assert_eq!(
            parse("1,2,3", &sizes, "array", Some(&options)),
            Err("pick at most 2".into())
        );
        assert_eq!(
            parse("yes", &json!({"type": "boolean"}), "boolean", None),
            Ok(json!(true))
        );
        assert!(check_format("2026-11-30", Some("date")).is_ok());
        assert!(check_format("2026-11-30T10:00:00Z", Some("date-time")).is_ok());
        assert!(check_format("30/11/2026", Some("date")).is_err());
    }
}

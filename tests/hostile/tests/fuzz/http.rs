//! The fuzzer over Streamable HTTP: each case is one POST on a kept-alive
//! connection, its MCP headers (`MCP-Protocol-Version`, `Mcp-Method`,
//! `Mcp-Name`) and content headers sometimes mutated too. The server runs
//! without a rate limit (`--rate-limit 0`), so a 429 is a failure like a
//! 5xx.

use std::io;

use oorandom::Rand64;
use serde_json::Value;

use crate::common::keep_alive::KeepAlive;
use crate::common::{Http, Log, Response, kept_open, post};
use crate::corpus::{self, Seed};
use crate::judge::{self, Message, Sent};
use crate::run::{self, Case, Failure, HANG, Settings, Tally, below, chance, pick};

pub(crate) fn run(settings: &Settings) -> Tally {
    let mut tally = Tally::default();
    let mut server = Http::start(&["--rate-limit", "0"], Log::Watched);
    let mut connection = KeepAlive::new(server.address, HANG);
    let seeds = corpus::seeds();
    let mut panics_seen = 0;
    for index in settings.indices() {
        let mut case = run::case(settings, "http", index, seeds);
        if corpus::wants_state(&case.body) {
            match fresh_state(&mut connection, &server, index) {
                Ok(state) => corpus::put_state(&mut case.body, &state),
                Err(why) => {
                    tally.fail(Failure::Malformed, &case, &why);
                    continue;
                }
            }
        }
        let headers = headers(&mut case.rng, case.seed, &mut case.ops);
        let request = request(&server, &headers, &case.body);
        tally.cases += 1;
        if settings.only.is_some() {
            eprintln!(
                "case {index}: {:?}\n{}",
                case.ops,
                String::from_utf8_lossy(&request)
            );
        }
        match connection.exchange(&request) {
            Ok(response) => {
                if settings.only.is_some() {
                    eprintln!("answer: {}\n\n{}", response.head, response.body);
                }
                judge_response(&case, &response, &mut tally);
            }
            Err(error)
                if matches!(
                    error.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) =>
            {
                tally.fail(Failure::Hang, &case, &format!("no answer within {HANG:?}"));
            }
            Err(error) => match server.child.try_wait() {
                Ok(Some(status)) => {
                    tally.fail(
                        Failure::Panic,
                        &case,
                        &format!("the server exited ({status})"),
                    );
                    server = Http::start(&["--rate-limit", "0"], Log::Watched);
                    connection = KeepAlive::new(server.address, HANG);
                    panics_seen = 0;
                }
                _ => tally.fail(Failure::Malformed, &case, &format!("no response: {error}")),
            },
        }
        let panics = server.panics.count();
        if panics > panics_seen {
            let lines = server.panics.since(panics_seen).join("\n");
            tally.fail(Failure::Panic, &case, &format!("the log says: {lines}"));
            panics_seen = panics;
        }
    }
    tally
}

/// A fresh `requestState` for `confirm_delete`'s second round.
fn fresh_state(connection: &mut KeepAlive, server: &Http, index: usize) -> Result<String, String> {
    let head = format!("POST /mcp HTTP/1.1\r\nHost: {}", server.address);
    let body = corpus::first_round(&format!("state-{index}"));
    let request = kept_open(post(&head, "tools/call", Some("confirm_delete"), &body));
    let response = connection
        .exchange(&request)
        .map_err(|error| format!("no answer to the first round: {error}"))?;
    let answer: Value = serde_json::from_str(&response.body).unwrap_or_default();
    match answer["result"]["requestState"].as_str() {
        Some(state) => Ok(state.to_owned()),
        None => Err(format!("no requestState in {response:?}")),
    }
}

type Headers = Vec<(String, Vec<u8>)>;

/// The headers of a request for `seed`, mutated one time in three.
fn headers(rng: &mut Rand64, seed: &Seed, ops: &mut Vec<&'static str>) -> Headers {
    let mut headers: Headers = vec![
        ("Content-Type".into(), b"application/json".to_vec()),
        (
            "Accept".into(),
            b"application/json, text/event-stream".to_vec(),
        ),
        ("MCP-Protocol-Version".into(), b"2026-07-28".to_vec()),
        ("Mcp-Method".into(), seed.method.as_bytes().to_vec()),
    ];
    if let Some(target) = seed.target {
        headers.push(("Mcp-Name".into(), target.as_bytes().to_vec()));
    }
    if chance(rng, 33) {
        for _ in 0..=below(rng, 2) {
            ops.push(mutate_headers(rng, &mut headers));
        }
    }
    headers
}

/// Values a header may take instead of its own (visible ASCII and
/// obs-text only: a control byte would be a framing attack, which
/// `framing.rs` covers).
fn odd_value(rng: &mut Rand64, value: &[u8]) -> Vec<u8> {
    let text = String::from_utf8_lossy(value);
    match below(rng, 12) {
        0 => Vec::new(),
        1 => format!("  {text}  ").into_bytes(),
        2 => pick(
            rng,
            &[
                "2025-11-25",
                "2025-06-18",
                "2026-07-29",
                "2026-07-28, 2026-07-28",
            ],
        )
        .as_bytes()
        .to_vec(),
        3 => text.to_uppercase().into_bytes(),
        4 => (0..=below(rng, 40))
            .map(|_| b' ' + below(rng, 95) as u8)
            .collect(),
        5 => (0..=below(rng, 8))
            .map(|_| 0x80 + below(rng, 128) as u8)
            .collect(),
        6 => format!("=?base64?{}?=", base64(value)).into_bytes(),
        7 => pick(
            rng,
            &[
                "=?base64?ZWNobw?=",
                "=?base64?/w==?=",
                "=?base64??=",
                "=?base64?",
            ],
        )
        .as_bytes()
        .to_vec(),
        8 => "a".repeat(4_000).into_bytes(),
        9 => format!("{text}x").into_bytes(),
        10 => pick(rng, &["tools/call", "tools/list", "echo", "memo://readme"])
            .as_bytes()
            .to_vec(),
        _ => text
            .get(..text.len() / 2)
            .unwrap_or_default()
            .as_bytes()
            .to_vec(),
    }
}

fn mutate_headers(rng: &mut Rand64, headers: &mut Headers) -> &'static str {
    let at = below(rng, headers.len());
    match below(rng, 7) {
        0 => {
            headers.remove(at);
            "drop header"
        }
        1 => {
            headers[at].1 = odd_value(rng, &headers[at].1.clone());
            "odd header value"
        }
        2 => {
            let (name, value) = headers[at].clone();
            let value = match chance(rng, 50) {
                true => value,
                false => odd_value(rng, &value),
            };
            headers.push((name, value));
            "repeat header"
        }
        3 => {
            let name = &mut headers[at].0;
            *name = match chance(rng, 50) {
                true => name.to_lowercase(),
                false => name.to_uppercase(),
            };
            "header name case"
        }
        4 => {
            let accept = pick(
                rng,
                &[
                    "application/json",
                    "text/event-stream",
                    "*/*",
                    "application/*",
                    "text/html",
                    "",
                    "application/json;q=0",
                ],
            );
            headers.retain(|(name, _)| name != "Accept");
            headers.push(("Accept".into(), accept.as_bytes().to_vec()));
            "accept"
        }
        5 => {
            let media = pick(
                rng,
                &[
                    "application/json; charset=utf-8",
                    "text/plain",
                    "",
                    "application/jsonx",
                    "APPLICATION/JSON",
                    "application/json-seq",
                ],
            );
            headers.retain(|(name, _)| name != "Content-Type");
            headers.push(("Content-Type".into(), media.as_bytes().to_vec()));
            "content type"
        }
        _ => {
            let value = odd_value(rng, b"us-west1");
            headers.push(("Mcp-Param-Region".into(), value));
            "param header"
        }
    }
}

fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, &b)| n | u32::from(b) << (16 - 8 * i));
        for i in 0..4 {
            match i <= chunk.len() {
                true => out.push(char::from(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize])),
                false => out.push('='),
            }
        }
    }
    out
}

fn request(server: &Http, headers: &Headers, body: &[u8]) -> Vec<u8> {
    let mut request = format!("POST /mcp HTTP/1.1\r\nHost: {}\r\n", server.address).into_bytes();
    for (name, value) in headers {
        request.extend_from_slice(name.as_bytes());
        request.extend_from_slice(b": ");
        request.extend_from_slice(value);
        request.extend_from_slice(b"\r\n");
    }
    request.extend_from_slice(format!("Content-Length: {}\r\n\r\n", body.len()).as_bytes());
    request.extend_from_slice(body);
    request
}

fn judge_response(case: &Case, response: &Response, tally: &mut Tally) {
    match judge_status(&case.body, response, tally) {
        Ok(()) => {}
        Err((failure, why)) => {
            let shown = run::shorten(&format!("{}\n\n{}", response.head, response.body), 1_500);
            tally.fail(failure, case, &format!("{why}: {shown}"));
        }
    }
}

/// Whether `response` is a well-formed answer to a request with `body`.
pub(crate) fn judge_status(
    body: &[u8],
    response: &Response,
    tally: &mut Tally,
) -> Result<(), (Failure, String)> {
    let status = response.status;
    match status {
        500..=599 => return Err((Failure::ServerError, "a 5xx".into())),
        429 => return Err((Failure::Throttled, "a 429".into())),
        200..=299 | 400..=499 => {}
        _ => return Err((Failure::Malformed, "an unexpected status".into())),
    }
    let malformed = |why: String| (Failure::Malformed, why);
    let sent = Sent::read(body);
    let media = response
        .header("content-type")
        .and_then(|value| value.split(';').next())
        .map(|media| media.trim().to_ascii_lowercase());
    match (status, media.as_deref()) {
        (202, _) => {
            if !response.body.is_empty() || sent.id.is_some() {
                return Err(malformed(
                    "a 202 with a body, or for a message with an id".into(),
                ));
            }
            tally.accepted += 1;
        }
        (_, Some("application/json")) => {
            let (id, code) = response_of(&sent, response.body.as_bytes()).map_err(malformed)?;
            fits(status, code).map_err(malformed)?;
            check_id(&sent, &id).map_err(malformed)?;
            count(tally, code);
        }
        (200, Some("text/event-stream")) => {
            let (id, code) = stream(&sent, &response.body, tally).map_err(malformed)?;
            check_id(&sent, &id).map_err(malformed)?;
            count(tally, code);
            tally.streams += 1;
        }
        // The transport's own refusals of a body it will not read.
        (406 | 415, Some("text/plain")) if !response.body.is_empty() => tally.refusals += 1,
        _ => return Err(malformed("an unexpected status or content type".into())),
    }
    Ok(())
}

fn count(tally: &mut Tally, code: Option<i64>) {
    match code {
        Some(_) => tally.errors += 1,
        None => tally.results += 1,
    }
}

/// The one response `body` holds.
fn response_of(sent: &Sent, body: &[u8]) -> Result<(Value, Option<i64>), String> {
    match judge::message(body, |_| sent.method.clone())? {
        Message::Response { id, code } => Ok((id, code)),
        Message::Notification => Err("a notification instead of a response".into()),
    }
}

/// An SSE stream: notifications, then the response, then nothing.
fn stream(sent: &Sent, body: &str, tally: &mut Tally) -> Result<(Value, Option<i64>), String> {
    let mut answer = None;
    for event in body.split("\n\n") {
        let data: Vec<&str> = event
            .lines()
            .filter_map(|line| line.strip_prefix("data:"))
            .map(|data| data.strip_prefix(' ').unwrap_or(data))
            .collect();
        if data.is_empty() {
            continue;
        }
        if answer.is_some() {
            return Err("an event after the response".into());
        }
        match judge::message(data.join("\n").as_bytes(), |_| sent.method.clone())? {
            Message::Notification => tally.notifications += 1,
            Message::Response { id, code } => answer = Some((id, code)),
        }
    }
    answer.ok_or_else(|| "a stream without a response".into())
}

/// The answer's id is the request's, or `null` (for a request whose id
/// could not be read, or that was refused before it was).
fn check_id(sent: &Sent, id: &Value) -> Result<(), String> {
    match id.is_null() || sent.answerable() == Some(id) {
        true => Ok(()),
        false => Err(format!("id {id} does not answer {:?}", sent.id)),
    }
}

/// The status the spec (and the guide) give each outcome.
fn fits(status: u16, code: Option<i64>) -> Result<(), String> {
    let fits = match code {
        None => status == 200,
        Some(-32601) => status == 404,
        Some(-32700 | -32602 | -32020 | -32021 | -32022) => status == 400,
        Some(_) => (400..500).contains(&status),
    };
    match fits {
        true => Ok(()),
        false => Err(format!("status {status} for error code {code:?}")),
    }
}

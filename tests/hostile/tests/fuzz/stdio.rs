//! The fuzzer over stdio. Each case is written as it is (a newline in it
//! makes several messages of it), then a sentinel request: the server
//! answers lines in order unless a handler is still running, so once the
//! sentinel is answered, every line of the case was read and the only
//! answers still due are those of requests in flight. Notifications, which
//! get no answer, need nothing more.

use std::sync::mpsc::RecvTimeoutError;
use std::time::Instant;

use serde_json::Value;

use crate::common::stdio::StdioServer;
use crate::corpus::{self, Seed};
use crate::judge::{self, Message, Sent};
use crate::run::{self, Case, Failure, HANG, Settings, Tally};

/// The server under test and what it still owes.
struct Server {
    process: StdioServer,
    seeds: &'static [Seed],
    /// Requests of earlier cases whose answers may still come: those an
    /// answer with a `null` id may have stood for, or that a
    /// `notifications/cancelled` may have stopped.
    outstanding: Vec<(Value, Option<String>)>,
    panics_seen: usize,
}

impl Server {
    fn start() -> Server {
        Server {
            process: StdioServer::start(&[]),
            seeds: corpus::seeds(),
            outstanding: Vec::new(),
            panics_seen: 0,
        }
    }

    /// A fresh `requestState` for `confirm_delete`'s second round.
    fn fresh_state(&self, index: usize) -> Result<String, (Failure, String)> {
        let id = format!("state-{index}");
        let first = corpus::first_round(&id);
        self.process.send(format!("{first}\n").into_bytes());
        let deadline = Instant::now() + HANG;
        loop {
            let line = match self
                .process
                .next_line(deadline.saturating_duration_since(Instant::now()))
            {
                Ok(line) => line,
                Err(error) => {
                    return Err((
                        Failure::Hang,
                        format!("no answer to the first round ({error})"),
                    ));
                }
            };
            // An earlier case's late answer is let go: only this one matters.
            let answer: Value = serde_json::from_slice(&line).unwrap_or_default();
            if answer["id"] == id.as_str() {
                return match answer["result"]["requestState"].as_str() {
                    Some(state) => Ok(state.to_owned()),
                    None => Err((Failure::Malformed, format!("no requestState in {answer}"))),
                };
            }
        }
    }
}

pub(crate) fn run(settings: &Settings) -> Tally {
    let mut tally = Tally::default();
    let mut server = Server::start();
    for index in settings.indices() {
        let mut case = run::case(settings, "stdio", index, server.seeds);
        tally.cases += 1;
        if corpus::wants_state(&case.body) {
            match server.fresh_state(index) {
                Ok(state) => corpus::put_state(&mut case.body, &state),
                Err((failure, detail)) => {
                    tally.fail(failure, &case, &detail);
                    server = Server::start();
                    continue;
                }
            }
        }
        let verbose = settings.only.is_some();
        if verbose {
            eprintln!(
                "case {index}: {:?}\n{}",
                case.ops,
                String::from_utf8_lossy(&case.body)
            );
        }
        if let Err((failure, detail)) = exchange(&mut server, &case, &mut tally, verbose) {
            tally.fail(failure, &case, &detail);
            // Whatever it was doing, a fresh server for the next case.
            server = Server::start();
        }
        let panics = server.process.panics.count();
        if panics > server.panics_seen {
            let lines = server.process.panics.since(server.panics_seen).join("\n");
            tally.fail(Failure::Panic, &case, &format!("the log says: {lines}"));
            server.panics_seen = panics;
        }
    }
    tally
}

/// Sends one case and reads what it is owed; `Err` when the server must be
/// replaced (it hung or died).
fn exchange(
    server: &mut Server,
    case: &Case,
    tally: &mut Tally,
    verbose: bool,
) -> Result<(), (Failure, String)> {
    let sent: Vec<Sent> = case
        .body
        .split(|&byte| byte == b'\n')
        .map(Sent::read)
        .collect();
    let mut pending: Vec<Value> = sent
        .iter()
        .filter_map(|line| line.answerable().cloned())
        .collect();
    // A cancelled request is never answered.
    let cancels = sent
        .iter()
        .any(|line| line.method.as_deref() == Some("notifications/cancelled"));
    let sync = Value::from(format!("sync-{}", case.index));
    let mut bytes = case.body.clone();
    bytes.extend_from_slice(
        format!("\n{{\"jsonrpc\":\"2.0\",\"id\":{sync},\"method\":\"ping\"}}\n").as_bytes(),
    );
    server.process.send(bytes);
    let deadline = Instant::now() + HANG;
    let (mut synced, mut nulls) = (false, 0);
    while !(synced && (cancels || pending.len() <= nulls)) {
        let line = match server
            .process
            .next_line(deadline.saturating_duration_since(Instant::now()))
        {
            Ok(line) => line,
            Err(RecvTimeoutError::Timeout) => {
                let what = if synced { "" } else { "the sentinel and " };
                return Err((
                    Failure::Hang,
                    format!("no answer within {HANG:?}: waiting for {what}{pending:?}"),
                ));
            }
            Err(RecvTimeoutError::Disconnected) => {
                let status = server.process.exited();
                return Err((
                    Failure::Panic,
                    format!("the server's output ended (exit: {status:?})"),
                ));
            }
        };
        if verbose {
            eprintln!("answer: {}", String::from_utf8_lossy(&line));
        }
        let method_of = |id: &Value| {
            let sent_now = sent.iter().find(|line| line.id.as_ref() == Some(id));
            match sent_now {
                Some(line) => line.method.clone(),
                None => server
                    .outstanding
                    .iter()
                    .find(|(owed, _)| owed == id)?
                    .1
                    .clone(),
            }
        };
        let shown = || run::shorten(&String::from_utf8_lossy(&line), 1_500);
        let (id, code) = match judge::message(&line, method_of) {
            Err(why) => {
                tally.fail(Failure::Malformed, case, &format!("{why}: {}", shown()));
                continue;
            }
            Ok(Message::Notification) => {
                tally.notifications += 1;
                continue;
            }
            Ok(Message::Response { id, code }) => (id, code),
        };
        if id == sync {
            synced = true;
            continue;
        }
        match code {
            Some(_) => tally.errors += 1,
            None => tally.results += 1,
        }
        if id.is_null() {
            nulls += 1;
        } else if let Some(at) = pending.iter().position(|owed| *owed == id) {
            pending.remove(at);
        } else if let Some(at) = server.outstanding.iter().position(|(owed, _)| *owed == id) {
            server.outstanding.remove(at);
        } else {
            let why = match sent.iter().any(|line| line.id.as_ref() == Some(&id)) {
                true => "a second answer to one request",
                false => "an answer to an id that was never sent",
            };
            tally.fail(Failure::Malformed, case, &format!("{why}: {}", shown()));
        }
    }
    // Covered by `null` answers or cancelled: they may still come.
    for id in pending {
        let method = sent
            .iter()
            .find(|line| line.id.as_ref() == Some(&id))
            .and_then(|line| line.method.clone());
        server.outstanding.push((id, method));
    }
    let excess = server.outstanding.len().saturating_sub(1_000);
    server.outstanding.drain(..excess);
    Ok(())
}

/// Each seed of the corpus as it is, with the server's answer (`None` for
/// a notification) and, if it is not well formed, why.
pub(crate) fn unmutated() -> Vec<(&'static str, Option<Value>, Result<(), String>)> {
    let server = Server::start();
    let mut answers = Vec::new();
    for (index, seed) in server.seeds.iter().enumerate() {
        let id = Value::from(index);
        let mut request = seed.request(id.clone()).to_string().into_bytes();
        if corpus::wants_state(&request) {
            let state = server.fresh_state(index).expect("a requestState");
            corpus::put_state(&mut request, &state);
        }
        let request: Value = serde_json::from_slice(&request).expect("JSON");
        let method = request["method"].as_str().map(str::to_owned);
        let sync = r#"{"jsonrpc":"2.0","id":"sync","method":"ping"}"#;
        server
            .process
            .send(format!("{request}\n{sync}\n").into_bytes());
        let (mut synced, mut answer) = (false, None);
        while !synced || (answer.is_none() && request.get("id").is_some()) {
            let line = server.process.next_line(HANG).expect("an answer");
            let value: Value = serde_json::from_slice(&line).expect("JSON");
            if value["id"] == "sync" {
                synced = true;
            } else if value["id"] == id {
                let checked = judge::message(&line, |_| method.clone()).map(|_| ());
                answer = Some((value, checked));
            }
        }
        match answer {
            Some((value, checked)) => answers.push((seed.name, Some(value), checked)),
            None => answers.push((seed.name, None, Ok(()))),
        }
    }
    answers
}

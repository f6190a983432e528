//! One round of a multi round-trip request: the answers it can draw on and
//! the asks it could not answer, and the suspension that ends the round
//! when an ask is unanswered.
//!
//! A handler runs from the top on every round. Each ask looks for its
//! answer in the sealed state (earlier rounds) or in this request's
//! `inputResponses`; if there is none, the ask is recorded and the handler
//! is suspended (its future is dropped), and the dispatcher answers with
//! `input_required`. Answers used this round travel on in the new state,
//! so later rounds see them without the client re-sending them.
//!
//! An answer is bound to the question it answers: the state records the
//! digest of each question its round asked ([`Question::digest`]), and a
//! response counts only if the handler asks the same question under its
//! key again; an answer carried from an earlier round likewise. When the
//! question changed (the data it shows changed between rounds), the old
//! answer is dropped and the new question asked.
//!
//! When the handler's answers are bound to their round
//! (`StatePolicy::bound_answers`), a response counts only if the round
//! that sealed this request's state asked its key: one sent up front is
//! left unread, and its question is asked.

use std::collections::BTreeMap;
use std::future::Future;
use std::pin::pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Poll, Waker};

use tokio::sync::Notify;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};

/// This round's `inputResponses`, by key, each kept as its JSON text: an
/// answer is read from the text once, straight into its type.
pub(crate) type Responses = BTreeMap<String, Box<RawValue>>;

mod named;

use super::answer::{Answer, AskKind, Response, read_answer};
pub(crate) use super::question::Question;
use super::question::QuestionDigest;
use crate::protocol::ClientCapabilities;

#[derive(Debug)]
struct Round {
    capabilities: Arc<ClientCapabilities>,
    /// Values from earlier rounds (sealed state), by key.
    recorded: Map<String, Value>,
    /// This request's `inputResponses`.
    responses: Responses,
    /// What the round that sealed this request's state asked: whose
    /// responses count.
    asked: Asked,
    /// Responses and remembered values used this round, by key: few, so
    /// a list. They are written out as steps only if the round suspends.
    used: Vec<(String, Step)>,
    /// Asks without an answer: key and `{method, params}`.
    pending: Vec<(String, Value)>,
    /// The digests of the questions this round asks (the pending asks'),
    /// by key: sealed, so that the next round uses an answer only for the
    /// question it answered.
    asking: Vec<(String, QuestionDigest)>,
    /// Capabilities the client would need for the pending asks.
    missing: Option<Value>,
    /// An answer that does not fit its ask.
    invalid: Option<String>,
    /// The handler misused an ask (a bad inline ask key): a bug in the
    /// server, answered with an internal error.
    misused: Option<String>,
    /// Keys of the declared asks (`#[elicit]` parameters, ...) considered
    /// so far, with their kinds: inline asks cannot take them.
    declared: Vec<(&'static str, AskKind)>,
    /// Named inline asks so far: key and the digest of what it asks.
    named: Vec<(String, QuestionDigest)>,
    /// Steps taken so far (asks and remembered values), for generated keys.
    steps: usize,
    suspended: bool,
    /// Whether this request's method can ask; completion's input cannot.
    askable: bool,
    /// Which round this is: 0 for a request without `requestState`.
    number: u32,
    /// How an unanswered ask ends: the round, or a wait (a task).
    mode: Mode,
    /// Live asks waiting for their answers to arrive.
    waiters: Vec<Waker>,
}

/// How a handler's asks are resolved.
#[derive(Debug, Default)]
pub(crate) enum Mode {
    /// Multi round-trip: an unanswered ask ends the round.
    #[default]
    Rounds,
    /// A task's declared asks, answered in rounds before it is created:
    /// the handler stops once `remaining` more declared asks have their
    /// answers, before its body runs ([`Stop::Ready`]).
    Probe { remaining: usize },
    /// A running task: an unanswered ask waits for its answer, which
    /// `tasks/update` delivers to this same handler; `changed` wakes the
    /// task's driver to publish new asks.
    Live(Arc<Notify>),
}

/// What the round that sealed a request's state asked, as its state
/// says: the responses that count in this round.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct Asked {
    /// Each key that round asked, with the digest of the question it sent
    /// (`None`: a state sealed before digests were, whose answers cannot
    /// be matched to their questions and are asked again).
    pub(crate) questions: Vec<(String, Option<QuestionDigest>)>,
    /// Answers are bound to their round (`StatePolicy::bound_answers`):
    /// only the keys asked count. Otherwise a response under a key no
    /// round asked counts too, as an answer sent up front.
    pub(crate) bound: bool,
}

impl Asked {
    /// A request without a state: nothing was asked.
    pub(crate) fn no_state(bound: bool) -> Asked {
        Asked {
            questions: Vec::new(),
            bound,
        }
    }

    /// Whether a response under `key` counts for the question `digest`.
    fn counts(&self, key: &str, digest: QuestionDigest) -> bool {
        match self.questions.iter().find(|(asked, _)| asked == key) {
            Some((_, asked)) => *asked == Some(digest),
            None => !self.bound,
        }
    }
}

/// A value used this round, as the next round's state will carry it.
#[derive(Debug)]
enum Step {
    /// An answer, with the digest of the question it answers.
    Answer {
        digest: QuestionDigest,
        value: Box<RawValue>,
    },
    /// A remembered value.
    Memo(Value),
}

impl Step {
    /// The step as sealed: `{"f": digest, "v": answer}` or the value.
    fn sealed(&self) -> Value {
        match self {
            Step::Answer { digest, value } => json!({"f": digest.hex(), "v": value}),
            Step::Memo(value) => value.clone(),
        }
    }
}

/// The input of a method that cannot ask (completion).
impl Default for Round {
    fn default() -> Self {
        Round {
            askable: false,
            ..Round::new(
                Arc::default(),
                0,
                Map::new(),
                Responses::new(),
                Asked::default(),
            )
        }
    }
}

impl Round {
    /// Every field written out: `..Round::default()` would build (and
    /// drop) a capabilities allocation on every request.
    fn new(
        capabilities: Arc<ClientCapabilities>,
        number: u32,
        recorded: Map<String, Value>,
        responses: Responses,
        asked: Asked,
    ) -> Round {
        Round {
            capabilities,
            recorded,
            responses,
            asked,
            used: Vec::new(),
            pending: Vec::new(),
            asking: Vec::new(),
            missing: None,
            invalid: None,
            misused: None,
            declared: Vec::new(),
            named: Vec::new(),
            steps: 0,
            suspended: false,
            askable: true,
            number,
            mode: Mode::Rounds,
            waiters: Vec::new(),
        }
    }

    /// This request's response under `key`, if it counts for the
    /// question `digest`: each key is considered once per round, so its
    /// response moves out.
    fn take_response(&mut self, key: &str, digest: QuestionDigest) -> Option<Box<RawValue>> {
        if !self.asked.counts(key, digest) {
            return None;
        }
        self.responses.remove(key)
    }

    /// Whether an answer from an earlier round answers `key`'s question
    /// `digest` (and still fits it). One to another question (the data the
    /// question shows changed since, or a redeploy reordered asks) is
    /// dropped, so the question is asked again; so is a response the
    /// client sent again under the key, since it cannot have seen the new
    /// question yet. A running task's responses answer the asks it
    /// published, and stay.
    fn recorded_answers(
        &mut self,
        key: &str,
        digest: QuestionDigest,
        check: impl Fn(Response<'_>) -> Result<(), String>,
    ) -> bool {
        let Some(recorded) = self.recorded.get(key) else {
            return false;
        };
        let same = recorded
            .get("f")
            .and_then(Value::as_str)
            .is_some_and(|sealed| digest.is(sealed));
        if same && check(Response::Tree(&recorded["v"])).is_ok() {
            return true;
        }
        self.recorded.remove(key);
        if !matches!(self.mode, Mode::Live(_)) {
            self.responses.remove(key);
        }
        false
    }

    /// The answer under `key`, from this round or an earlier one.
    fn answer(&self, key: &str) -> Option<Response<'_>> {
        let used = self.used.iter().rev().find(|(k, _)| k == key);
        match used {
            Some((_, Step::Answer { value, .. })) => Some(Response::Text(value)),
            Some((_, Step::Memo(_))) => None,
            None => self.recorded.get(key)?.get("v").map(Response::Tree),
        }
    }
}

/// Why a handler stopped before finishing.
#[derive(Debug)]
pub(crate) enum Stop {
    /// Asks need answers: key and request, in order.
    Pending(Vec<(String, Value)>),
    /// The client lacks capabilities an ask needs.
    Missing(Value),
    /// An answer does not fit its ask.
    Invalid(String),
    /// The handler misused an ask: a bug in the server (`-32603`).
    Misused(String),
    /// Every declared ask has its answer: the handler's body may run (as a
    /// task).
    Ready,
}

/// Asks the client for input in the middle of a `tools/call`,
/// `prompts/get` or `resources/read`: elicitation, sampling, roots. Take
/// it as a `#[ctx] input: Input` parameter.
///
/// The handler is written straight through; behind the scenes each round
/// re-runs it, and an unanswered ask ends the round with `input_required`.
/// Code before an ask therefore runs again on every round: keep side
/// effects after the asks, declare the asks on parameters instead (they are
/// resolved before the body runs), or wrap work in [`remember`](Self::remember).
#[derive(Clone, Debug, Default)]
pub struct Input {
    round: Arc<Mutex<Round>>,
}

impl Input {
    /// `asked`: what the round that sealed the state asked, which decides
    /// the responses that count.
    pub(crate) fn new(
        capabilities: Arc<ClientCapabilities>,
        number: u32,
        recorded: Map<String, Value>,
        responses: Responses,
        asked: Asked,
    ) -> Self {
        Input {
            round: Arc::new(Mutex::new(Round::new(
                capabilities,
                number,
                recorded,
                responses,
                asked,
            ))),
        }
    }

    /// Whether the handler suspended on an unanswered ask.
    pub(crate) fn is_suspended(&self) -> bool {
        self.lock().suspended
    }

    fn lock(&self) -> MutexGuard<'_, Round> {
        self.round
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Which round this request is: 1 for a request without `requestState`,
    /// then 2, 3, ... for each retry that carries the state of the one
    /// before.
    pub fn round(&self) -> u32 {
        self.lock().number + 1
    }

    /// Whether the client can answer form elicitations on this request.
    pub fn can_elicit(&self) -> bool {
        self.lock().capabilities.supports_elicitation_form()
    }

    /// Whether the client can answer URL elicitations on this request.
    pub fn can_elicit_url(&self) -> bool {
        self.lock().capabilities.supports_elicitation_url()
    }

    /// Whether the client can sample from its model on this request.
    pub fn can_sample(&self) -> bool {
        self.lock().capabilities.supports_sampling()
    }

    /// Whether the client can list its roots on this request.
    pub fn can_list_roots(&self) -> bool {
        self.lock().capabilities.supports_roots()
    }

    /// Asks the user to fill in the form `T`. Its `inputRequests` key is
    /// generated (`elicitation_1`, ...); [`elicit_as`](Self::elicit_as)
    /// names it.
    pub async fn elicit<T: super::ElicitForm>(
        &self,
        message: impl Into<String>,
    ) -> super::Elicitation<T> {
        self.elicit_keyed(None, message.into()).await
    }

    async fn elicit_keyed<T: super::ElicitForm>(
        &self,
        key: Option<&str>,
        message: String,
    ) -> super::Elicitation<T> {
        let form = match super::form::form::<T>() {
            Ok(form) => form,
            Err(problem) => {
                // A programming error in the server; fail the request loudly.
                tracing::error!(%problem, "elicitation type cannot be a form");
                return self.fail(problem).await;
            }
        };
        self.ask(
            key,
            Question::Form {
                form: &form,
                message,
            },
        )
        .await
    }

    /// Sends the user to `url` for an interaction that must not pass
    /// through the client (credentials, payment), and waits for the user
    /// to come back.
    pub async fn elicit_url(
        &self,
        message: impl Into<String>,
        url: impl Into<String>,
    ) -> super::UrlElicitation {
        let request = json!({"mode": "url", "message": message.into(), "url": url.into()});
        self.ask(None, Question::Plain(request)).await
    }

    /// Asks the client's model for a completion.
    ///
    /// Sampling is deprecated as of 2026-07-28; prefer calling an LLM
    /// provider directly in new designs.
    pub async fn sample(&self, request: super::SamplingRequest) -> super::SamplingResult {
        self.ask(None, Question::Plain(request.to_params())).await
    }

    /// Asks the client for its roots.
    ///
    /// Roots are deprecated as of 2026-07-28; prefer taking directories as
    /// tool arguments in new designs.
    pub async fn roots(&self) -> Vec<super::Root> {
        self.ask(None, Question::Plain(Value::Null)).await
    }

    /// Computes a value once per request, however many rounds it takes:
    /// the first round runs `compute`, later rounds get the value back from
    /// the sealed `requestState`. Use it for expensive or side-effecting
    /// work that comes before an ask.
    pub async fn remember<T, F, Fut>(&self, compute: F) -> T
    where
        T: Serialize + DeserializeOwned,
        F: FnOnce() -> Fut,
        Fut: Future<Output = T>,
    {
        let key = self.next_key("memo");
        let recorded = self.lock().recorded.get(&key).cloned();
        if let Some(value) = recorded.and_then(|v| serde_json::from_value(v).ok()) {
            return value;
        }
        let value = compute().await;
        match crate::protocol::finite::to_value(&value) {
            Ok(json) => {
                self.lock().used.push((key, Step::Memo(json)));
            }
            Err(error) => {
                tracing::warn!(%error, "a remembered value cannot be serialized; it will be recomputed")
            }
        }
        value
    }

    fn next_key(&self, prefix: &str) -> String {
        let mut round = self.lock();
        round.steps += 1;
        format!("{prefix}_{}", round.steps)
    }

    /// One ask (under `key` when the handler names it): its answer if
    /// there is one; else the end of this round, or in a task, a wait for
    /// the answer `tasks/update` brings.
    pub(crate) async fn ask<A: Answer>(&self, key: Option<&str>, question: Question<'_>) -> A {
        let digest = question.digest(A::KIND);
        let key = match key {
            Some(key) => match self.check_named(key, digest) {
                Ok(()) => key.to_owned(),
                Err(problem) => return self.misuse(problem).await,
            },
            None => self.next_key(A::KIND.key_prefix()),
        };
        loop {
            let check = |r: Response<'_>| read_answer::<A>(r).map(|_| ());
            if self.consider_as(&key, A::KIND, digest, question.clone(), check) {
                let answer = self.lock().answer(&key).map(read_answer::<A>);
                if let Some(Ok(answer)) = answer {
                    return answer;
                }
            }
            if !self.waits_for(&key) {
                return self.suspend().await;
            }
            self.answer_arrives(&key).await;
        }
    }

    /// Notes a declared ask's key before it is considered.
    pub(crate) fn declare(&self, key: &'static str, kind: AskKind) {
        let mut round = self.lock();
        if !round.declared.iter().any(|(k, _)| *k == key) {
            round.declared.push((key, kind));
        }
    }

    /// Ends the request with an internal error for the handler's misuse.
    async fn misuse<T>(&self, problem: String) -> T {
        tracing::error!(%problem, "an ask is misused");
        self.lock().misused.get_or_insert(problem);
        self.suspend().await
    }

    /// Whether an unanswered `key` waits for its answer (a running task's
    /// ask, when nothing stopped the task's round) rather than ending the
    /// round.
    fn waits_for(&self, key: &str) -> bool {
        let round = self.lock();
        matches!(round.mode, Mode::Live(_))
            && round.invalid.is_none()
            && round.missing.is_none()
            && round.misused.is_none()
            && !round.responses.contains_key(key)
    }

    /// Completes once an answer under `key` has been delivered.
    async fn answer_arrives(&self, key: &str) {
        std::future::poll_fn(|cx| {
            let mut round = self.lock();
            if round.responses.contains_key(key) {
                return Poll::Ready(());
            }
            if !round.waiters.iter().any(|w| w.will_wake(cx.waker())) {
                round.waiters.push(cx.waker().clone());
            }
            Poll::Pending
        })
        .await;
    }

    /// Records what `key` needs: `true` if its answer is at hand (and
    /// valid). Never suspends, so several asks can be considered together
    /// and end one round.
    pub(crate) fn consider(
        &self,
        key: &str,
        kind: AskKind,
        question: Question<'_>,
        check: impl Fn(Response<'_>) -> Result<(), String>,
    ) -> bool {
        let digest = question.digest(kind);
        self.consider_as(key, kind, digest, question, check)
    }

    /// [`consider`](Self::consider) of a question whose digest is known.
    fn consider_as(
        &self,
        key: &str,
        kind: AskKind,
        digest: QuestionDigest,
        question: Question<'_>,
        check: impl Fn(Response<'_>) -> Result<(), String>,
    ) -> bool {
        let mut round = self.lock();
        // A named ask asked again in this round: answered the first time.
        let answered = round.used.iter().any(|(k, step)| {
            k == key && matches!(step, Step::Answer { digest: d, .. } if *d == digest)
        });
        if answered {
            return true;
        }
        if round.recorded_answers(key, digest, &check) {
            return true;
        }
        if let Some(response) = round.take_response(key, digest) {
            return match check(Response::Text(&response)) {
                Ok(()) => {
                    let answer = Step::Answer {
                        digest,
                        value: response,
                    };
                    round.used.push((key.to_owned(), answer));
                    true
                }
                Err(problem) => {
                    round
                        .invalid
                        .get_or_insert(format!("inputResponses.{key}: {problem}"));
                    false
                }
            };
        }
        if let Some(missing) = kind.missing(&round.capabilities) {
            let merged = round.missing.get_or_insert_with(|| json!({}));
            if let (Some(merged), Some(missing)) = (merged.as_object_mut(), missing.as_object()) {
                for (capability, value) in missing {
                    merged
                        .entry(capability.clone())
                        .or_insert_with(|| value.clone());
                }
            }
            return false;
        }
        let mut request = json!({"method": kind.method()});
        let params = question.into_params();
        if !params.is_null() {
            request["params"] = params;
        }
        round.pending.push((key.to_owned(), request));
        round.asking.push((key.to_owned(), digest));
        if let Mode::Live(changed) = &round.mode {
            changed.notify_one();
        }
        false
    }

    /// A declared ask's answer, once every declared ask was considered.
    pub(crate) async fn take<A: Answer>(&self, key: &str) -> A {
        let value = {
            let round = self.lock();
            if round.pending.is_empty() && round.missing.is_none() && round.invalid.is_none() {
                round.answer(key).map(read_answer::<A>)
            } else {
                None
            }
        };
        match value {
            Some(Ok(answer)) if !self.probe_done() => answer,
            _ => self.suspend().await,
        }
    }

    /// Counts a declared ask answered while probing; `true` once every one
    /// is: the handler stops before its body ([`Stop::Ready`]).
    fn probe_done(&self) -> bool {
        let mut round = self.lock();
        match &mut round.mode {
            Mode::Probe { remaining } => {
                *remaining = remaining.saturating_sub(1);
                *remaining == 0
            }
            _ => false,
        }
    }

    async fn fail<T>(&self, problem: String) -> T {
        self.refuse(problem);
        self.suspend().await
    }

    /// Records a problem that ends this round with an error.
    pub(crate) fn refuse(&self, problem: String) {
        self.lock().invalid.get_or_insert(problem);
    }

    async fn suspend<T>(&self) -> T {
        // Unreachable through the public API (only asking methods hand out
        // an `Input`); a loud failure beats a request that never ends.
        assert!(
            self.lock().askable,
            "only tools/call, resources/read and prompts/get can ask the client for input"
        );
        {
            let mut round = self.lock();
            round.suspended = true;
            if let Mode::Live(changed) = &round.mode {
                changed.notify_one();
            }
        }
        std::future::pending().await
    }

    /// Why the round stopped, once the handler suspended.
    pub(crate) fn stop(&self) -> Option<Stop> {
        let mut round = self.lock();
        if !round.suspended {
            return None;
        }
        if let Some(misused) = round.misused.take() {
            return Some(Stop::Misused(misused));
        }
        if let Some(invalid) = round.invalid.take() {
            return Some(Stop::Invalid(invalid));
        }
        if let Some(missing) = round.missing.take() {
            return Some(Stop::Missing(missing));
        }
        if let Mode::Probe { remaining: 0 } = round.mode {
            return Some(Stop::Ready);
        }
        Some(Stop::Pending(std::mem::take(&mut round.pending)))
    }

    /// The keys this round asks, with the digests of their questions: the
    /// next round's state carries them.
    pub(crate) fn asking(&self) -> Vec<(String, QuestionDigest)> {
        self.lock().asking.clone()
    }

    /// Everything the next round needs from this one.
    pub(crate) fn carried(&self) -> Map<String, Value> {
        let round = self.lock();
        let mut steps = round.recorded.clone();
        let used = round
            .used
            .iter()
            .map(|(key, step)| (key.clone(), step.sealed()));
        steps.extend(used);
        steps
    }
}

/// A running task's side of its handler's input.
impl Input {
    /// The input of a task's handler: asks wait for their answers, and
    /// `changed` is notified when there are new ones to publish (or the
    /// handler stopped). `recorded` holds the answers of the declared
    /// asks, from the rounds before the task was created.
    pub(crate) fn live(
        capabilities: Arc<ClientCapabilities>,
        recorded: Map<String, Value>,
        changed: Arc<Notify>,
    ) -> Self {
        let input = Input::new(
            capabilities,
            0,
            recorded,
            Responses::new(),
            Asked::default(),
        );
        input.lock().mode = Mode::Live(changed);
        input
    }

    /// Probes the handler's `declared` asks: it stops once they are all
    /// answered, before its body runs.
    pub(crate) fn probe(&self, declared: usize) {
        self.lock().mode = Mode::Probe {
            remaining: declared,
        };
    }

    /// Whether a probed handler stopped because every declared ask has its
    /// answer (without taking the reason, as [`stop`](Self::stop) does).
    pub(crate) fn is_ready(&self) -> bool {
        let round = self.lock();
        round.suspended
            && round.invalid.is_none()
            && round.missing.is_none()
            && round.misused.is_none()
            && matches!(round.mode, Mode::Probe { remaining: 0 })
    }

    /// Whether asks wait to be published.
    pub(crate) fn has_pending(&self) -> bool {
        !self.lock().pending.is_empty()
    }

    /// Why a running task's handler stopped, if it did.
    pub(crate) fn stopped(&self) -> Option<Stop> {
        self.stop()
    }

    /// The asks recorded since the last call, to publish.
    pub(crate) fn take_pending(&self) -> Vec<(String, Value)> {
        std::mem::take(&mut self.lock().pending)
    }

    /// Delivers answers to waiting asks (the task's driver, from
    /// `tasks/update`).
    pub(crate) fn deliver(&self, responses: Map<String, Value>) {
        let mut round = self.lock();
        for (key, value) in responses {
            if let Ok(raw) = RawValue::from_string(value.to_string()) {
                round.responses.insert(key, raw);
            }
        }
        for waiter in std::mem::take(&mut round.waiters) {
            waiter.wake();
        }
    }
}

/// Runs `future` until it finishes or suspends on an unanswered ask.
pub(crate) async fn run_round<F: Future>(input: &Input, future: F) -> Option<F::Output> {
    let mut future = pin!(future);
    std::future::poll_fn(|cx| match future.as_mut().poll(cx) {
        Poll::Ready(output) => Poll::Ready(Some(output)),
        Poll::Pending if input.lock().suspended => Poll::Ready(None),
        Poll::Pending => Poll::Pending,
    })
    .await
}

#[cfg(test)]
mod tests;

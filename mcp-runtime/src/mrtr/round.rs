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
//! When the handler's answers are bound to their round
//! (`StatePolicy::bound_answers`), a response counts only if the round
//! that sealed this request's state asked its key: one sent up front is
//! left unread, and its question is asked.

use std::collections::BTreeMap;
use std::future::Future;
use std::pin::pin;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
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

use super::answer::{Answer, AskKind, Response, fingerprint, read_answer};
use super::form::Form;
use crate::protocol::ClientCapabilities;

#[derive(Debug)]
struct Round {
    capabilities: Arc<ClientCapabilities>,
    /// Values from earlier rounds (sealed state), by key.
    recorded: Map<String, Value>,
    /// This request's `inputResponses`.
    responses: Responses,
    /// The keys whose responses count (those the previous round asked),
    /// when answers are bound to their round; `None`: every key's.
    asked: Option<Vec<String>>,
    /// Responses and remembered values used this round, by key: few, so
    /// a list. They are written out as steps only if the round suspends.
    used: Vec<(String, Step)>,
    /// Asks without an answer: key and `{method, params}`.
    pending: Vec<(String, Value)>,
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
    /// Named inline asks so far: key and the fingerprint of what it asks.
    named: Vec<(String, String)>,
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

/// A value used this round, as the next round's state will carry it.
#[derive(Debug)]
enum Step {
    /// An answer, with the fingerprint of the question it answers.
    Answer {
        fingerprint: String,
        value: Box<RawValue>,
    },
    /// A remembered value.
    Memo(Value),
}

impl Step {
    /// The step as sealed: `{"f": fingerprint, "v": answer}` or the value.
    fn sealed(&self) -> Value {
        match self {
            Step::Answer { fingerprint, value } => json!({"f": fingerprint, "v": value}),
            Step::Memo(value) => value.clone(),
        }
    }
}

/// The input of a method that cannot ask (completion).
impl Default for Round {
    fn default() -> Self {
        Round {
            askable: false,
            ..Round::new(Arc::default(), 0, Map::new(), Responses::new(), None)
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
        asked: Option<Vec<String>>,
    ) -> Round {
        Round {
            capabilities,
            recorded,
            responses,
            asked,
            used: Vec::new(),
            pending: Vec::new(),
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

    /// This request's response under `key`, if it counts: each key is
    /// considered once per round, so its response moves out.
    fn take_response(&mut self, key: &str) -> Option<Box<RawValue>> {
        let counts = self
            .asked
            .as_ref()
            .is_none_or(|asked| asked.iter().any(|asked| asked == key));
        if !counts {
            return None;
        }
        self.responses.remove(key)
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

/// What one ask asks. A form's request carries its whole schema, so it is
/// built only when the ask must be sent; its fingerprint was computed with
/// the schema, once per type.
#[derive(Clone)]
pub(crate) enum Question<'a> {
    /// A form elicitation: the prepared form and this round's message.
    Form { form: &'a Form, message: String },
    /// Any other ask: its request's params (`null` for none). Its kind
    /// alone identifies it.
    Plain(Value),
}

impl Question<'_> {
    fn fingerprint(&self, kind: AskKind) -> &str {
        match self {
            Question::Form { form, .. } => &form.fingerprint,
            Question::Plain(_) => {
                // Constant per kind: hashed once.
                static KINDS: [OnceLock<String>; 4] = [const { OnceLock::new() }; 4];
                let slot = match kind {
                    AskKind::ElicitForm => 0,
                    AskKind::ElicitUrl => 1,
                    AskKind::Sampling => 2,
                    AskKind::Roots => 3,
                };
                KINDS[slot].get_or_init(|| fingerprint(kind, None))
            }
        }
    }

    fn into_params(self) -> Value {
        match self {
            Question::Form { form, message } => {
                json!({"mode": "form", "message": message, "requestedSchema": form.schema})
            }
            Question::Plain(params) => params,
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
    /// `asked`: the keys whose responses count, when answers are bound to
    /// the round that asked them (`None`: every key's).
    pub(crate) fn new(
        capabilities: Arc<ClientCapabilities>,
        number: u32,
        recorded: Map<String, Value>,
        responses: Responses,
        asked: Option<Vec<String>>,
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
        let key = match key {
            Some(key) => match self.check_named(key, question.fingerprint(A::KIND)) {
                Ok(()) => key.to_owned(),
                Err(problem) => return self.misuse(problem).await,
            },
            None => self.next_key(A::KIND.key_prefix()),
        };
        loop {
            let check = |r: Response<'_>| read_answer::<A>(r).map(|_| ());
            if self.consider(&key, A::KIND, question.clone(), check) {
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
        let fingerprint = question.fingerprint(kind);
        let mut round = self.lock();
        // A named ask asked again in this round: answered the first time.
        let answered = round.used.iter().any(|(k, step)| {
            k == key && matches!(step, Step::Answer { fingerprint: f, .. } if f == fingerprint)
        });
        if answered {
            return true;
        }
        // An answer from an earlier round counts only for the same question:
        // after a redeploy that reorders asks, a stale answer is asked again
        // rather than misread.
        if let Some(recorded) = round.recorded.get(key) {
            if recorded["f"] == fingerprint && check(Response::Tree(&recorded["v"])).is_ok() {
                return true;
            }
            round.recorded.remove(key);
        }
        if let Some(response) = round.take_response(key) {
            return match check(Response::Text(&response)) {
                Ok(()) => {
                    let answer = Step::Answer {
                        fingerprint: fingerprint.to_owned(),
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
        let input = Input::new(capabilities, 0, recorded, Responses::new(), None);
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
mod tests {
    use super::*;

    /// A round whose client can list roots, with `responses` (JSON text by
    /// key) and `asked` as the previous round's state recorded them.
    fn round_with(responses: &[(&str, &str)], asked: Option<&[&str]>) -> Input {
        let capabilities: ClientCapabilities =
            serde_json::from_value(json!({"roots": {}})).unwrap();
        let responses = responses
            .iter()
            .map(|(key, json)| {
                (
                    (*key).to_owned(),
                    RawValue::from_string((*json).to_owned()).unwrap(),
                )
            })
            .collect();
        let asked = asked.map(|keys| keys.iter().map(|&key| key.to_owned()).collect());
        Input::new(Arc::new(capabilities), 1, Map::new(), responses, asked)
    }

    fn consider(input: &Input, key: &str) -> bool {
        input.consider(
            key,
            AskKind::Roots,
            Question::Plain(Value::Null),
            |_| Ok(()),
        )
    }

    fn pending_keys(input: &Input) -> Vec<String> {
        input
            .lock()
            .pending
            .iter()
            .map(|(key, _)| key.clone())
            .collect()
    }

    const ROOTS: &str = r#"{"roots": []}"#;

    #[test]
    fn any_response_counts_when_answers_are_not_bound() {
        let input = round_with(&[("a", ROOTS), ("b", ROOTS)], None);
        assert!(consider(&input, "a"));
        assert!(consider(&input, "b"));
        assert!(pending_keys(&input).is_empty());
    }

    #[test]
    fn bound_answers_count_only_for_the_keys_the_last_round_asked() {
        // The previous round asked `a`: its answer counts, `b`'s (sent up
        // front) is left unread and `b` is asked.
        let input = round_with(&[("a", ROOTS), ("b", ROOTS)], Some(&["a"]));
        assert!(consider(&input, "a"));
        assert!(!consider(&input, "b"));
        assert_eq!(pending_keys(&input), ["b"]);
        // Carried into the next state: `a` only.
        assert_eq!(input.carried().keys().collect::<Vec<_>>(), ["a"]);

        // No state yet: nothing was asked, so nothing is answered.
        let input = round_with(&[("a", ROOTS)], Some(&[]));
        assert!(!consider(&input, "a"));
        assert_eq!(pending_keys(&input), ["a"]);
    }

    #[test]
    fn an_unread_response_is_not_checked() {
        // A response that would not fit is not an error when it does not
        // count: the question is asked, as for any answer sent up front.
        let input = round_with(&[("a", "12345")], Some(&[]));
        let refuse = |_: Response<'_>| Err("does not fit".to_owned());
        assert!(!input.consider("a", AskKind::Roots, Question::Plain(Value::Null), refuse));
        assert!(input.lock().invalid.is_none());
        assert_eq!(pending_keys(&input), ["a"]);
    }
}

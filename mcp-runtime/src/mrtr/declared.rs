//! Asks declared on parameters (`#[elicit]`, `#[elicit_url]`, `#[sample]`,
//! `#[roots]`): what the generated code calls. All declared asks of a
//! handler are considered together before its body runs, so they take one
//! round, and the body runs once, with every answer in hand.
//!
//! The generated code names each ask's type once, in `form_ask::<T>()`
//! (or `url_ask`, ...), whose bound says what the attribute needs; the
//! resulting [`AskFns`] carries everything else as plain function
//! pointers, so a wrong type is one error at the parameter's type.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use serde_json::{Value, json};

use super::answer::{
    Answer, AskKind, ElicitForm, Elicitation, Root, SamplingRequest, SamplingResult,
    UrlElicitation, read_answer,
};
use super::form::{Form, form};
use super::round::{Input, Question};

/// A declared ask, as the registry checks it at startup.
#[derive(Debug)]
pub struct DeclaredAsk {
    /// The `inputRequests` key: the parameter's name.
    pub key: &'static str,
    /// What is asked.
    pub kind: AskKind,
    /// Checks the ask's type (a form must be flat), saying why not.
    pub check: fn() -> Result<(), String>,
}

/// `#[elicit]` parameters: `Elicitation<T>` for a form `T`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot take a `#[elicit]` answer",
    label = "not `Elicitation<T>`",
    note = "a `#[elicit(\"...\")]` parameter has type `Elicitation<T>`, where `T` is the form: a struct deriving `Deserialize` and `JsonSchema`"
)]
pub trait FormAsk: Answer {
    /// The form: its requested schema and fingerprint.
    fn form() -> Result<Arc<Form>, String>;
}

impl<T: ElicitForm> FormAsk for Elicitation<T> {
    fn form() -> Result<Arc<Form>, String> {
        form::<T>()
    }
}

/// `#[elicit_url]` parameters: `UrlElicitation`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot take a `#[elicit_url]` answer",
    label = "not `UrlElicitation`",
    note = "a `#[elicit_url(...)]` parameter has type `UrlElicitation`"
)]
pub trait UrlAsk: Answer {}
impl UrlAsk for UrlElicitation {}

/// `#[sample]` parameters: `SamplingResult`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot take a `#[sample]` answer",
    label = "not `SamplingResult`",
    note = "a `#[sample(...)]` parameter has type `SamplingResult`"
)]
pub trait SampleAsk: Answer {}
impl SampleAsk for SamplingResult {}

/// `#[roots]` parameters: `Vec<Root>`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot take a `#[roots]` answer",
    label = "not `Vec<Root>`",
    note = "a `#[roots]` parameter has type `Vec<Root>`"
)]
pub trait RootsAsk: Answer {}
impl RootsAsk for Vec<Root> {}

/// The future of a declared ask's answer.
pub type AskFuture<'a, A> = Pin<Box<dyn Future<Output = A> + 'a>>;

/// One declared ask's type, checked once.
pub struct AskFns<A> {
    kind: AskKind,
    check: fn() -> Result<(), String>,
    form: fn() -> Result<Arc<Form>, String>,
    consider: fn(&Input, &'static str, Question<'_>),
    take: for<'a> fn(&'a Input, &'static str) -> AskFuture<'a, A>,
}

const fn fns<A: Answer + 'static>(
    check: fn() -> Result<(), String>,
    form: fn() -> Result<Arc<Form>, String>,
) -> AskFns<A> {
    AskFns {
        kind: A::KIND,
        check,
        form,
        consider: consider::<A>,
        take: take::<A>,
    }
}

fn no_form() -> Result<Arc<Form>, String> {
    Err("not a form".into())
}

fn no_check() -> Result<(), String> {
    Ok(())
}

fn check_form<A: FormAsk>() -> Result<(), String> {
    A::form().map(|_| ())
}

fn consider<A: Answer>(input: &Input, key: &'static str, question: Question<'_>) {
    input.declare(key, A::KIND);
    input.consider(key, A::KIND, question, |r| read_answer::<A>(r).map(|_| ()));
}

fn take<'a, A: Answer + 'static>(input: &'a Input, key: &'static str) -> AskFuture<'a, A> {
    Box::pin(input.take(key))
}

/// `#[elicit]`.
pub const fn form_ask<A: FormAsk + 'static>() -> AskFns<A> {
    fns(check_form::<A>, A::form)
}

/// `#[elicit_url]`.
pub const fn url_ask<A: UrlAsk + 'static>() -> AskFns<A> {
    fns(no_check, no_form)
}

/// `#[sample]`.
pub const fn sample_ask<A: SampleAsk + 'static>() -> AskFns<A> {
    fns(no_check, no_form)
}

/// `#[roots]`.
pub const fn roots_ask<A: RootsAsk + 'static>() -> AskFns<A> {
    fns(no_check, no_form)
}

impl<A> std::fmt::Debug for AskFns<A> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AskFns")
            .field("kind", &self.kind)
            .finish_non_exhaustive()
    }
}

impl<A> AskFns<A> {
    /// The registry's view of this ask.
    pub const fn declared(&self, key: &'static str) -> DeclaredAsk {
        DeclaredAsk {
            key,
            kind: self.kind,
            check: self.check,
        }
    }

    /// Considers a form elicitation.
    pub fn consider_form(&self, input: &Input, key: &'static str, message: String) {
        // The registry refuses types without a form schema at startup; were
        // one to get here, the round fails as `elicit` fails for it.
        let form = match (self.form)() {
            Ok(form) => form,
            Err(problem) => return input.refuse(problem),
        };
        (self.consider)(
            input,
            key,
            Question::Form {
                form: &form,
                message,
            },
        );
    }

    /// Considers a URL elicitation.
    pub fn consider_url(&self, input: &Input, key: &'static str, message: String, url: String) {
        let params = json!({"mode": "url", "message": message, "url": url});
        (self.consider)(input, key, Question::Plain(params));
    }

    /// Considers a sampling request.
    pub fn consider_sample(&self, input: &Input, key: &'static str, request: SamplingRequest) {
        (self.consider)(input, key, Question::Plain(request.to_params()));
    }

    /// Considers a roots request.
    pub fn consider_roots(&self, input: &Input, key: &'static str) {
        (self.consider)(input, key, Question::Plain(Value::Null));
    }

    /// The answer, once every declared ask was considered; the round ends
    /// here if any is unanswered.
    pub fn take<'a>(&self, input: &'a Input, key: &'static str) -> AskFuture<'a, A> {
        (self.take)(input, key)
    }
}

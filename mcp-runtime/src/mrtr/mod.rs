//! Multi round-trip requests: asking the client for input (elicitation,
//! sampling, roots) in the middle of `tools/call`, `prompts/get` or
//! `resources/read`, across stateless rounds carried by a sealed
//! `requestState`.

mod answer;
mod declared;
pub(crate) mod form;
mod round;
pub(crate) mod state;

#[doc(hidden)]
pub use self::answer::assert_form_field;
pub use self::answer::{
    Answer, AskKind, ElicitForm, Elicitation, FormChoice, FormField, Root, SamplingRequest,
    SamplingResult, UrlElicitation,
};
#[doc(hidden)]
pub use self::declared::{
    AskFns, AskFuture, DeclaredAsk, FormAsk, RootsAsk, SampleAsk, UrlAsk, form_ask, roots_ask,
    sample_ask, url_ask,
};
pub use self::round::Input;
pub(crate) use self::round::{Responses, Stop, run_round};
pub use self::state::{Clock, InMemoryReplayGuard, MAX_STATE_BYTES, ReplayGuard};

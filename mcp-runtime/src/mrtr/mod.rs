//! Multi round-trip requests: asking the client for input (elicitation,
//! sampling, roots) in the middle of `tools/call`, `prompts/get` or
//! `resources/read`, across stateless rounds carried by a sealed
//! `requestState`.

pub(crate) mod answer;
mod content;
pub(crate) mod declared;
pub(crate) mod form;
mod round;
pub(crate) mod state;

pub use self::answer::{
    Answer, AskKind, ElicitForm, Elicitation, FormChoice, FormField, Root, SamplingRequest,
    SamplingResult, UrlElicitation,
};
pub use self::round::Input;
pub(crate) use self::round::{Responses, Stop, run_round};
pub use self::state::{
    Clock, GuardFuture, GuardUnavailable, InMemoryReplayGuard, MAX_STATE_BYTES, ReplayGuard,
    StateUse,
};

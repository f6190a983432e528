//! The dispatcher's side of multi round-trip requests: reading a retry's
//! `inputResponses` and `requestState`, and answering a suspended handler
//! with `input_required` (or the error that stopped it).

use std::borrow::Cow;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};

use bytes::Bytes;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::envelope::json_str;
use crate::context::Scope;
use crate::mrtr::state::{Binding, StatePolicy, StateSealer};
use crate::mrtr::{Asked, Input, Responses, Stop};
use crate::protocol::ErrorObject;
use crate::protocol::result::ResultMeta;

#[derive(Deserialize)]
struct RetryParams<'a> {
    #[serde(
        rename = "inputResponses",
        borrow,
        default,
        deserialize_with = "present"
    )]
    responses: Option<&'a RawValue>,
    #[serde(rename = "requestState", borrow, default, deserialize_with = "present")]
    state: Option<&'a RawValue>,
}

fn present<'de, D: Deserializer<'de>>(d: D) -> Result<Option<&'de RawValue>, D::Error> {
    <&RawValue>::deserialize(d).map(Some)
}

/// What a request brings from earlier rounds. The state is borrowed from
/// the request's body unless it has escapes (it never does when it comes
/// back as it was sent).
#[derive(Debug, Default)]
pub(super) struct Retry<'a> {
    responses: Responses,
    state: Option<Cow<'a, str>>,
}

/// Reads `inputResponses` (an object when present) and `requestState` (a
/// string when present); anything else is `-32602`.
pub(super) fn read_retry(params: &str) -> Result<Retry<'_>, ErrorObject> {
    let parsed: RetryParams<'_> = super::params(params)?;
    read_retry_members(
        parsed.responses.map(RawValue::get),
        parsed.state.map(RawValue::get),
    )
}

/// [`read_retry`] from the members' JSON text, as the request's head
/// located them.
pub(super) fn read_retry_members<'a>(
    responses: Option<&str>,
    state: Option<&'a str>,
) -> Result<Retry<'a>, ErrorObject> {
    let responses = match responses {
        None => Responses::new(),
        Some(json) => serde_json::from_str::<Responses>(json).map_err(|_| {
            ErrorObject::invalid_params("Invalid params: `inputResponses` must be an object mapping request keys to responses")
        })?,
    };
    let state = match state {
        None => None,
        Some(json) => Some(json_str(json).ok_or_else(|| {
            ErrorObject::invalid_params("Invalid params: `requestState` must be a string")
        })?),
    };
    Ok(Retry { responses, state })
}

/// What a request's state is bound to, computed only when a state is
/// opened or sealed (most requests never need it).
pub(super) struct Target<'a> {
    pub(super) method: &'static str,
    /// Tool or prompt name, or resource URI.
    pub(super) name: &'a str,
    /// The arguments' JSON text.
    pub(super) arguments: &'a str,
}

impl Target<'_> {
    fn binding<'b>(&'b self, principal: Option<&'b str>) -> Binding<'b> {
        Binding::new(self.method, self.name, self.arguments, principal)
    }
}

/// One request's rounds: what its state is bound to, and its round.
pub(super) struct Rounds<'a> {
    sealer: &'a StateSealer,
    target: Target<'a>,
    principal: Option<String>,
    round: u32,
}

/// A request's rounds as [`Rounds::start`] opened them: ready, or holding
/// a single-use state still to be claimed (a round trip to a shared replay
/// store, perhaps): [`ready`](Self::ready) says which.
pub(super) enum Started<'a> {
    Ready(Rounds<'a>, Input),
    Claim(Claiming<'a>),
}

/// The claim of a single-use state, then the rounds and the handler's
/// input (a replay, or a store that cannot tell, is the error). Boxed: kept
/// out of every request's future.
pub(super) type Claiming<'a> =
    Pin<Box<dyn Future<Output = Result<(Rounds<'a>, Input), ErrorObject>> + Send + 'a>>;

impl<'a> Started<'a> {
    /// The rounds and the handler's input, or the claim to await first.
    pub(super) fn ready(self) -> Result<(Rounds<'a>, Input), Claiming<'a>> {
        match self {
            Started::Ready(rounds, input) => Ok((rounds, input)),
            Started::Claim(claiming) => Err(claiming),
        }
    }
}

impl<'a> Rounds<'a> {
    /// Opens the request's state (if any) under `policy` and builds its
    /// [`Input`]; `claimed()` on the result gives both.
    pub(super) fn start(
        sealer: &'a StateSealer,
        target: Target<'a>,
        retry: Retry<'_>,
        scope: &Scope,
        policy: StatePolicy,
    ) -> Result<Started<'a>, ErrorObject> {
        let principal = scope
            .source
            .principal()
            .map(|principal| principal.id().to_owned());
        let (round, recorded, asked, claim) = match &retry.state {
            // Without a state no round asked anything yet: bound answers
            // take no response, others take those sent up front.
            None => (0, Map::new(), Asked::no_state(policy.bound_answers), None),
            Some(state) => {
                let binding = target.binding(principal.as_deref());
                let sealed = sealer.open(state, &binding, policy)?;
                (sealed.round, sealed.steps, sealed.asked, sealed.claim)
            }
        };
        let capabilities = scope.meta.client_capabilities.clone();
        let input = Input::new(capabilities, round, recorded, retry.responses, asked);
        let rounds = Rounds {
            sealer,
            target,
            principal,
            round,
        };
        Ok(match claim {
            None => Started::Ready(rounds, input),
            Some(claim) => Started::Claim(Box::pin(async move {
                rounds.sealer.claim(claim).await?;
                Ok((rounds, input))
            })),
        })
    }

    /// The answer to a handler that suspended.
    pub(super) fn stopped(
        self,
        input: &Input,
        server_info: Option<&RawValue>,
    ) -> Result<Bytes, ErrorObject> {
        match input.stop() {
            None | Some(Stop::Ready) => Err(ErrorObject::internal_error()),
            Some(Stop::Invalid(problem)) => Err(ErrorObject::invalid_params(format!(
                "Invalid input response: {problem}"
            ))),
            Some(Stop::Missing(required)) => Err(ErrorObject::missing_capability(required)),
            Some(Stop::Misused(problem)) => Err(misused(&problem)),
            Some(Stop::Pending(pending)) => {
                warn_once_if_random(self.sealer);
                let state = self.sealer.seal(
                    self.target.binding(self.principal.as_deref()),
                    self.round,
                    input.carried(),
                    &input.asking(),
                )?;
                let requests: Map<String, Value> = pending.into_iter().collect();
                let result = InputRequired {
                    result_type: "input_required",
                    input_requests: &requests,
                    request_state: &state,
                    meta: ResultMeta {
                        server_info,
                        extra: None,
                    },
                };
                Ok(Bytes::from(
                    serde_json::to_vec(&result).map_err(|_| ErrorObject::internal_error())?,
                ))
            }
        }
    }
}

/// `-32603` for a handler that misused an ask (a bad inline ask key): a
/// bug in the server, named so that its developer sees which ask.
pub(super) fn misused(problem: &str) -> ErrorObject {
    ErrorObject::new(
        crate::protocol::error_code::INTERNAL_ERROR,
        format!("Internal error: {problem}"),
    )
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct InputRequired<'a> {
    result_type: &'static str,
    input_requests: &'a Map<String, Value>,
    request_state: &'a str,
    #[serde(rename = "_meta", skip_serializing_if = "ResultMeta::is_empty")]
    meta: ResultMeta<'a>,
}

/// A random per-process key cannot open states sealed by another instance.
fn warn_once_if_random(sealer: &StateSealer) {
    static WARNED: AtomicBool = AtomicBool::new(false);
    if sealer.keys.is_random() && !WARNED.swap(true, Ordering::Relaxed) {
        tracing::warn!(
            "requestState is sealed with a random per-process key: rounds cannot continue on another instance or after a restart; \
             set MCP_STATE_KEY (32 bytes, base64) on every instance of a deployment"
        );
    }
}

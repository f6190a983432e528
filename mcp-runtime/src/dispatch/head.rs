//! What the envelope reader knows of MCP, in one place: the members of
//! `params` that several stages read (located, or for `_meta` read, in the
//! same pass as the envelope), and the one client notification that means
//! anything to a stateless server. The envelope reader itself
//! (`envelope`) knows JSON-RPC only.

use std::marker::PhantomData;
use std::ops::Range;

use serde::de::{self, IgnoredAny, MapAccess, Visitor};
use serde::{Deserialize, Deserializer};
use serde_json::value::RawValue;

use super::key::Key;
use super::meta::ReadMeta;
use crate::protocol::RequestId;

/// `params._meta`, as the envelope's parse left it.
#[derive(Debug)]
pub(crate) enum MetaMember {
    /// Read along with the envelope, in the same pass: the common case.
    Read(ReadMeta),
    /// Located but not read (the request took the two-pass path).
    Raw(Range<usize>),
}

/// Where the commonly read members of `params` are in the body, as the raw
/// JSON of each value (`_meta` is usually read already). Empty when
/// `params` is not an object that parses: each stage then parses `params`
/// itself and reports its own error.
#[derive(Debug, Default)]
pub(crate) struct Head {
    pub(crate) meta: Option<MetaMember>,
    pub(crate) name: Option<Range<usize>>,
    pub(crate) uri: Option<Range<usize>>,
    pub(crate) arguments: Option<Range<usize>>,
    pub(crate) input_responses: Option<Range<usize>>,
    pub(crate) request_state: Option<Range<usize>>,
}

impl Head {
    pub(super) fn read(body: &str, params: Option<Range<usize>>) -> Head {
        let Some(range) = params else {
            return Head::default();
        };
        match serde_json::from_str::<Members<'_>>(&body[range]) {
            Ok(members) => members.locate(body),
            Err(_) => Head::default(),
        }
    }
}

/// The members of `params` the head records, as raw JSON, except `_meta`,
/// which the one-pass parse reads in place (`M` is [`ReadMeta`] there, raw
/// JSON elsewhere). Read as a map only (a derived struct would also take an
/// array, positionally), with `null` meaning absent for `_meta`, `name` and
/// `uri`, and present for the others, as the stages that read them expect.
pub(super) struct Members<'a, M = &'a RawValue> {
    meta: Option<M>,
    name: Option<&'a RawValue>,
    uri: Option<&'a RawValue>,
    arguments: Option<&'a RawValue>,
    input_responses: Option<&'a RawValue>,
    request_state: Option<&'a RawValue>,
}

impl<M> Default for Members<'_, M> {
    fn default() -> Self {
        Members {
            meta: None,
            name: None,
            uri: None,
            arguments: None,
            input_responses: None,
            request_state: None,
        }
    }
}

/// How the head records `_meta`: read, or located.
pub(super) trait MetaSlot<'de>: Deserialize<'de> {
    fn member(self, body: &str) -> MetaMember;
}

impl<'de> MetaSlot<'de> for &'de RawValue {
    fn member(self, body: &str) -> MetaMember {
        MetaMember::Raw(offset_in(body, self.get()))
    }
}

impl MetaSlot<'_> for ReadMeta {
    fn member(self, _: &str) -> MetaMember {
        MetaMember::Read(self)
    }
}

impl<'de, M: MetaSlot<'de>> Members<'de, M> {
    pub(super) fn locate(self, body: &str) -> Head {
        let at = |raw: Option<&RawValue>| raw.map(|raw| offset_in(body, raw.get()));
        Head {
            meta: self.meta.map(|meta| meta.member(body)),
            name: at(self.name),
            uri: at(self.uri),
            arguments: at(self.arguments),
            input_responses: at(self.input_responses),
            request_state: at(self.request_state),
        }
    }
}

impl<'de, M: MetaSlot<'de>> Deserialize<'de> for Members<'de, M> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct MembersVisitor<M>(PhantomData<M>);
        impl<'de, M: MetaSlot<'de>> Visitor<'de> for MembersVisitor<M> {
            type Value = Members<'de, M>;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a params object")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Members<'de, M>, A::Error> {
                let mut members = Members::default();
                // Keys are compared by value: an escaped key names the same
                // member as its plain spelling.
                while let Some(key) = map.next_key::<Key<'de>>()? {
                    let (slot, null_is_absent) = match &*key {
                        "_meta" => {
                            if members.meta.is_some() {
                                return Err(de::Error::custom("duplicate member `_meta`"));
                            }
                            members.meta = map.next_value()?;
                            continue;
                        }
                        "name" => (&mut members.name, true),
                        "uri" => (&mut members.uri, true),
                        "arguments" => (&mut members.arguments, false),
                        "inputResponses" => (&mut members.input_responses, false),
                        "requestState" => (&mut members.request_state, false),
                        _ => {
                            map.next_value::<IgnoredAny>()?;
                            continue;
                        }
                    };
                    if slot.is_some() {
                        return Err(de::Error::custom(format_args!("duplicate member `{key}`")));
                    }
                    *slot = if null_is_absent {
                        map.next_value::<Option<&'de RawValue>>()?
                    } else {
                        Some(map.next_value::<&'de RawValue>()?)
                    };
                }
                Ok(members)
            }
        }
        deserializer.deserialize_map(MembersVisitor(PhantomData))
    }
}

/// A client notification. Only cancellation means anything to a stateless
/// server; everything else is accepted and ignored (and shown to the
/// notification observers, as cancellations are).
#[derive(Debug)]
pub(crate) struct Notification {
    pub(crate) method: Box<str>,
    pub(crate) params: Option<Box<RawValue>>,
    /// The request a valid `notifications/cancelled` names.
    pub(crate) cancels: Option<RequestId>,
}

pub(super) fn notification(method: &str, params: Option<&RawValue>) -> Notification {
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Cancelled {
        request_id: RequestId,
    }
    // Invalid cancellations are ignored, as the spec asks.
    let cancels = (method == "notifications/cancelled")
        .then(|| serde_json::from_str::<Cancelled>(params?.get()).ok())
        .flatten()
        .map(|cancelled| cancelled.request_id);
    Notification {
        method: method.into(),
        params: params.map(ToOwned::to_owned),
        cancels,
    }
}

/// Where `part` (a subslice of `whole`) sits inside it.
pub(super) fn offset_in(whole: &str, part: &str) -> Range<usize> {
    let start = part.as_ptr() as usize - whole.as_ptr() as usize;
    start..start + part.len()
}

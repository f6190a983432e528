//! What one ask asks, and the digest that binds an answer to it.
//!
//! A handler runs again on every round, so the question it asks under a
//! key can change between the round that sent it and the round that reads
//! its answer (the data it shows changed meanwhile: "change stock from 2
//! to -3?" becomes "from 1 to -4?"). An answer is therefore matched to
//! its ask by key *and* by the digest of everything sent to the client
//! under that key; the digest is sealed in `requestState` with the round
//! that asked, and an answer to another question is never used.

use std::sync::OnceLock;

use serde_json::{Value, json};
use sha2::{Digest as _, Sha256};

use super::answer::AskKind;
use super::form::Form;
use crate::security::seal::write_hex;

/// What one ask asks. A form's request carries its whole schema, so it is
/// built only when the ask must be sent; the schema's own fingerprint was
/// computed once per type.
#[derive(Clone)]
pub(crate) enum Question<'a> {
    /// A form elicitation: the prepared form and this round's message.
    Form { form: &'a Form, message: String },
    /// Any other ask: its request's params (`null` for none).
    Plain(Value),
}

impl Question<'_> {
    /// The digest of what this ask sends to the client: its kind, and its
    /// message and schema, URL, or sampling request. A form's schema
    /// enters through its per-type fingerprint, so a round hashes the
    /// message only, never the schema again.
    pub(crate) fn digest(&self, kind: AskKind) -> QuestionDigest {
        let mut hasher = Sha256::new();
        hasher.update(kind.attribute());
        hasher.update([0]);
        match self {
            Question::Form { form, message } => {
                hasher.update(&form.fingerprint);
                hasher.update([0]);
                hasher.update(message);
            }
            // No params (roots): constant per kind, hashed once.
            Question::Plain(Value::Null) => return plain_constant(kind),
            // Canonical: the same request built from a map in another
            // order (a row read again, say) is the same question.
            Question::Plain(params) => hasher.update(super::canonical::canonical_json(params)),
        }
        QuestionDigest::from_hash(&hasher.finalize())
    }

    /// The request's params, as sent under the ask's key.
    pub(crate) fn into_params(self) -> Value {
        match self {
            Question::Form { form, message } => {
                json!({"mode": "form", "message": message, "requestedSchema": form.schema})
            }
            Question::Plain(params) => params,
        }
    }
}

/// The digest of an ask without params (roots), computed once per kind.
fn plain_constant(kind: AskKind) -> QuestionDigest {
    static KINDS: [OnceLock<QuestionDigest>; 4] = [const { OnceLock::new() }; 4];
    let slot = match kind {
        AskKind::ElicitForm => 0,
        AskKind::ElicitUrl => 1,
        AskKind::Sampling => 2,
        AskKind::Roots => 3,
    };
    *KINDS[slot].get_or_init(|| {
        let mut hasher = Sha256::new();
        hasher.update(kind.attribute());
        hasher.update([0]);
        hasher.update(b"null");
        QuestionDigest::from_hash(&hasher.finalize())
    })
}

/// SHA-256 of a question, cut to 128 bits: the messages it covers can hold
/// text other clients write (an issue's title), and 128 bits keeps two
/// such texts from being made to collide, which 64 would not.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct QuestionDigest([u8; 16]);

impl QuestionDigest {
    fn from_hash(hash: &[u8]) -> QuestionDigest {
        let mut bytes = [0; 16];
        bytes.copy_from_slice(&hash[..16]);
        QuestionDigest(bytes)
    }

    /// The digest as sealed: 32 lowercase hex digits.
    pub(crate) fn hex(self) -> String {
        let mut out = [0; 32];
        write_hex(&self.0, &mut out);
        String::from_utf8_lossy(&out).into_owned()
    }

    /// Whether `hex` (as sealed) is this digest; compared without
    /// allocating, since every recorded answer is checked every round.
    pub(crate) fn is(self, hex: &str) -> bool {
        let mut out = [0; 32];
        write_hex(&self.0, &mut out);
        out == hex.as_bytes()
    }

    /// Reads a sealed digest; `None` if it is not one.
    pub(crate) fn parse(hex: &str) -> Option<QuestionDigest> {
        if hex.len() != 32 {
            return None;
        }
        let mut bytes = [0; 16];
        for (byte, pair) in bytes.iter_mut().zip(hex.as_bytes().chunks_exact(2)) {
            let pair = std::str::from_utf8(pair).ok()?;
            *byte = u8::from_str_radix(pair, 16).ok()?;
        }
        let digest = QuestionDigest(bytes);
        // Lowercase only, as sealed: one spelling per digest.
        digest.is(hex).then_some(digest)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mrtr::answer::fingerprint;

    fn form(schema: Value) -> Form {
        Form {
            fingerprint: fingerprint(AskKind::ElicitForm, Some(&schema)),
            schema,
        }
    }

    #[test]
    fn a_question_is_its_kind_message_and_request() {
        let confirm = form(json!({"type": "object", "properties": {"yes": {"type": "boolean"}}}));
        let other = form(json!({"type": "object", "properties": {"no": {"type": "boolean"}}}));
        let ask = |form, message: &str| {
            Question::Form {
                form,
                message: message.to_owned(),
            }
            .digest(AskKind::ElicitForm)
        };
        let asked = ask(&confirm, "Change stock from 2 to -3?");
        assert_eq!(asked, ask(&confirm, "Change stock from 2 to -3?"));
        assert_ne!(asked, ask(&confirm, "Change stock from 1 to -4?"));
        assert_ne!(asked, ask(&other, "Change stock from 2 to -3?"));

        let url = |url: &str| {
            Question::Plain(json!({"mode": "url", "message": "Sign in", "url": url}))
                .digest(AskKind::ElicitUrl)
        };
        assert_eq!(url("https://a.example"), url("https://a.example"));
        assert_ne!(url("https://a.example"), url("https://b.example"));
        // Key order does not make another question.
        let reordered = Question::Plain(
            json!({"url": "https://a.example", "message": "Sign in", "mode": "url"}),
        );
        assert_eq!(
            url("https://a.example"),
            reordered.digest(AskKind::ElicitUrl)
        );

        let roots = Question::Plain(Value::Null);
        assert_eq!(roots.digest(AskKind::Roots), roots.digest(AskKind::Roots));
        assert_ne!(
            roots.digest(AskKind::Roots),
            roots.digest(AskKind::Sampling)
        );
    }

    #[test]
    fn digests_read_back_only_as_sealed() {
        let digest = Question::Plain(json!({"a": 1})).digest(AskKind::Sampling);
        let hex = digest.hex();
        assert_eq!(hex.len(), 32);
        assert!(digest.is(&hex));
        assert_eq!(QuestionDigest::parse(&hex), Some(digest));
        assert_eq!(QuestionDigest::parse(&hex.to_uppercase()), None);
        for bad in [
            "",
            "zz",
            &hex[..31],
            &format!("{hex}0"),
            "é0000000000000000000000000000000",
        ] {
            assert_eq!(QuestionDigest::parse(bad), None, "{bad}");
        }
    }
}

//! Inline asks under keys the handler names (`input.elicit_as("close",
//! ..)`), so that answers files, tests and logs can rely on them; and the
//! checks that keep a named key from taking another ask's answers.

use serde_json::{Value, json};

use super::{Input, Question, QuestionDigest};
use crate::mrtr::{ElicitForm, Elicitation, Root, SamplingRequest, SamplingResult, UrlElicitation};

/// Asks under a key the handler names.
impl Input {
    /// [`elicit`](Self::elicit) under the `inputRequests` key `key`, which
    /// stays the same whatever the handler asked before: answers files,
    /// tests and logs can name it. The key must not be empty, nor be a
    /// declared ask's (a parameter's name), nor look like a generated key
    /// (`elicitation_1`, `memo_2`, ...), nor name another, different ask of
    /// this request: any of these is a bug, answered with `-32603` naming
    /// the key.
    ///
    /// ```
    /// # use mcp_runtime::{ElicitForm, Input, tool};
    /// #[derive(serde::Deserialize, schemars::JsonSchema, ElicitForm)]
    /// struct Confirm {
    ///     /// Close it?
    ///     close: bool,
    /// }
    ///
    /// /// Closes an issue once the user confirms.
    /// #[tool]
    /// async fn close_issue(id: u32, #[ctx] input: Input) -> Result<String, String> {
    ///     // inputRequests: {"close": {"method": "elicitation/create", ...}}
    ///     let answer = input.elicit_as::<Confirm>("close", format!("Close #{id}?")).await;
    ///     match answer.accepted() {
    ///         Some(Confirm { close: true }) => Ok(format!("closed #{id}")),
    ///         _ => Err("kept open".into()),
    ///     }
    /// }
    /// # fn main() {}
    /// ```
    pub async fn elicit_as<T: ElicitForm>(
        &self,
        key: &str,
        message: impl Into<String>,
    ) -> Elicitation<T> {
        self.elicit_keyed(Some(key), message.into()).await
    }

    /// [`elicit_url`](Self::elicit_url) under the `inputRequests` key
    /// `key`, checked as [`elicit_as`](Self::elicit_as) checks it.
    pub async fn elicit_url_as(
        &self,
        key: &str,
        message: impl Into<String>,
        url: impl Into<String>,
    ) -> UrlElicitation {
        let request = json!({"mode": "url", "message": message.into(), "url": url.into()});
        self.ask(Some(key), Question::Plain(request)).await
    }

    /// [`sample`](Self::sample) under the `inputRequests` key `key`,
    /// checked as [`elicit_as`](Self::elicit_as) checks it.
    pub async fn sample_as(&self, key: &str, request: SamplingRequest) -> SamplingResult {
        self.ask(Some(key), Question::Plain(request.to_params()))
            .await
    }

    /// [`roots`](Self::roots) under the `inputRequests` key `key`, checked
    /// as [`elicit_as`](Self::elicit_as) checks it.
    pub async fn roots_as(&self, key: &str) -> Vec<Root> {
        self.ask(Some(key), Question::Plain(Value::Null)).await
    }

    /// Why `key` cannot name an inline ask asking the question `digest`,
    /// if it cannot: the key is how the client's answer finds its ask, so
    /// two asks under one key (two messages, say) would take each other's
    /// answers.
    pub(super) fn check_named(&self, key: &str, digest: QuestionDigest) -> Result<(), String> {
        if key.is_empty() {
            return Err(
                "an inline ask's key cannot be empty; name it after what it asks, such as `confirm_close`"
                    .into(),
            );
        }
        if is_generated_key(key) {
            return Err(format!(
                "the inline ask key `{key}` has the form of a generated key (`elicitation_1`, `sampling_2`, `roots_3`, `memo_4`); choose another name"
            ));
        }
        let mut round = self.lock();
        if let Some((_, kind)) = round.declared.iter().find(|(k, _)| *k == key) {
            return Err(format!(
                "the inline ask key `{key}` is taken by the `#[{}]` parameter `{key}`; give the inline ask another key",
                kind.attribute()
            ));
        }
        match round.named.iter().find(|(k, _)| k == key) {
            Some((_, asked)) if *asked != digest => Err(format!(
                "the inline ask key `{key}` names two different asks; give each its own key"
            )),
            Some(_) => Ok(()),
            None => {
                round.named.push((key.to_owned(), digest));
                Ok(())
            }
        }
    }
}

/// Whether `key` is one the runtime generates for unnamed asks and
/// remembered values (`elicitation_1`, `memo_2`): a named ask under it
/// could take their answers.
fn is_generated_key(key: &str) -> bool {
    key.rsplit_once('_').is_some_and(|(prefix, number)| {
        matches!(prefix, "elicitation" | "sampling" | "roots" | "memo")
            && !number.is_empty()
            && number.bytes().all(|b| b.is_ascii_digit())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_keys_are_recognised() {
        for generated in ["elicitation_1", "sampling_12", "roots_3", "memo_4"] {
            assert!(is_generated_key(generated), "{generated}");
        }
        for named in [
            "close",
            "elicitation",
            "elicitation_",
            "elicitation_x",
            "my_memo_1",
        ] {
            assert!(!is_generated_key(named), "{named}");
        }
    }
}

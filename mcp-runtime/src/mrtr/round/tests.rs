//! Unit tests of one round: which responses count, and for which question.

use super::*;

/// A round whose client can list roots, with `responses` (JSON text by
/// key) and `asked` as the previous round's state recorded them (roots
/// asks, bound to their round), or `None` for answers not bound.
fn round_with(responses: &[(&str, &str)], asked: Option<&[&str]>) -> Input {
    let roots = Question::Plain(Value::Null).digest(AskKind::Roots);
    let asked = asked.map_or_else(Asked::default, |keys| Asked {
        questions: keys
            .iter()
            .map(|&key| (key.to_owned(), Some(roots)))
            .collect(),
        bound: true,
    });
    input_with(responses, Map::new(), asked)
}

fn input_with(responses: &[(&str, &str)], recorded: Map<String, Value>, asked: Asked) -> Input {
    let capabilities: ClientCapabilities =
        serde_json::from_value(json!({"roots": {}, "elicitation": {"url": {}}})).unwrap();
    let responses = responses
        .iter()
        .map(|(key, json)| {
            (
                (*key).to_owned(),
                RawValue::from_string((*json).to_owned()).unwrap(),
            )
        })
        .collect();
    Input::new(Arc::new(capabilities), 1, recorded, responses, asked)
}

/// A URL elicitation with `message`: its question changes with it.
fn sign_in(message: &str) -> Question<'static> {
    Question::Plain(json!({"mode": "url", "message": message, "url": "https://a.example"}))
}

fn consider_url(input: &Input, key: &str, message: &str) -> bool {
    input.consider(key, AskKind::ElicitUrl, sign_in(message), |_| Ok(()))
}

const ACCEPTED: &str = r#"{"action": "accept"}"#;

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

#[test]
fn a_response_counts_only_for_the_question_it_answers() {
    let asked = sign_in("Sign in as ann").digest(AskKind::ElicitUrl);
    for bound in [true, false] {
        let questions = vec![("a".to_owned(), Some(asked))];
        let input = input_with(&[("a", ACCEPTED)], Map::new(), Asked { questions, bound });
        // The same question: the response is its answer.
        assert!(
            consider_url(&input, "a", "Sign in as ann"),
            "bound: {bound}"
        );

        // The question changed between the rounds: the response
        // answered the old one; the new one is asked, and its digest
        // goes into the next state.
        let questions = vec![("a".to_owned(), Some(asked))];
        let input = input_with(&[("a", ACCEPTED)], Map::new(), Asked { questions, bound });
        assert!(
            !consider_url(&input, "a", "Sign in as bob"),
            "bound: {bound}"
        );
        assert_eq!(pending_keys(&input), ["a"]);
        let now = sign_in("Sign in as bob").digest(AskKind::ElicitUrl);
        assert_eq!(input.asking(), [("a".to_owned(), now)]);
        assert!(input.carried().is_empty());
    }
    // A state sealed before digests were: its answers are asked again.
    let questions = vec![("a".to_owned(), None)];
    let input = input_with(
        &[("a", ACCEPTED)],
        Map::new(),
        Asked {
            questions,
            bound: false,
        },
    );
    assert!(!consider_url(&input, "a", "Sign in as ann"));
}

#[test]
fn an_earlier_answer_counts_only_for_the_same_question() {
    let ann = sign_in("Sign in as ann").digest(AskKind::ElicitUrl);
    let mut recorded = Map::new();
    recorded.insert(
        "a".into(),
        json!({"f": ann.hex(), "v": {"action": "accept"}}),
    );
    let input = input_with(&[], recorded.clone(), Asked::default());
    assert!(consider_url(&input, "a", "Sign in as ann"));
    assert_eq!(input.carried()["a"]["f"], ann.hex());

    // Another question: the recorded answer and the same answer sent
    // again (up front, where that counts) are both dropped, and the
    // new question is asked; the old answer is not carried on.
    let input = input_with(&[("a", ACCEPTED)], recorded, Asked::default());
    assert!(!consider_url(&input, "a", "Sign in as bob"));
    assert_eq!(pending_keys(&input), ["a"]);
    assert!(input.carried().is_empty());
}

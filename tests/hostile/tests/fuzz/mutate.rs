//! The mutations: structural ones on a request's JSON (a member removed or
//! repeated, any node turned into any other type, odd numbers, odd strings,
//! deep nesting, long strings, wrong ids, versions, methods and `_meta`),
//! then byte ones on its text (bit flips, truncation, splicing, deletions,
//! duplications, invalid UTF-8).

use oorandom::Rand64;
use serde_json::{Map, Value, json};

use crate::run::{below, chance, pick};

/// Text a `serde_json::Value` cannot hold (odd numbers, duplicate keys,
/// invalid escapes), spliced in for a marker string once serialized.
#[derive(Default)]
struct Raw(Vec<String>);

impl Raw {
    /// A marker that renders as `text`.
    fn insert(&mut self, text: String) -> Value {
        self.0.push(text);
        Value::String(format!("\u{1}raw{}\u{1}", self.0.len() - 1))
    }

    /// `value` as text, each marker replaced by its text (the latest
    /// first: a later text may hold an earlier marker).
    fn render(&self, value: &Value) -> String {
        let mut text = value.to_string();
        for (index, raw) in self.0.iter().enumerate().rev() {
            text = text.replace(&format!("\"\\u0001raw{index}\\u0001\""), raw);
        }
        text
    }
}

type Structural = fn(&mut Rand64, &mut Value, &mut Raw);
type Bytes = fn(&mut Rand64, &mut Vec<u8>, &[u8]);

const STRUCTURAL: &[(&str, Structural)] = &[
    ("remove key", remove_key),
    ("duplicate key", duplicate_key),
    ("swap type", swap_type),
    ("odd number", odd_number),
    ("deep nesting", deep_nesting),
    ("long string", long_string),
    ("odd string", odd_string),
    ("wrong id", wrong_id),
    ("wrong jsonrpc", wrong_jsonrpc),
    ("random _meta", random_meta),
    ("swap method", swap_method),
    ("swap name", swap_name),
    ("drop id", drop_id),
    ("add key", add_key),
    ("batch", batch),
];

const BYTES: &[(&str, Bytes)] = &[
    ("flip bits", flip_bits),
    ("set bytes", set_bytes),
    ("insert bytes", insert_bytes),
    ("delete range", delete_range),
    ("truncate", truncate),
    ("duplicate range", duplicate_range),
    ("splice", splice),
];

/// A mutant of `seed` (sometimes `seed` itself), and the mutations made;
/// `other` is another seed to splice with.
pub(crate) fn mutate(
    rng: &mut Rand64,
    seed: &Value,
    other: &Value,
) -> (Vec<u8>, Vec<&'static str>) {
    let mut value = seed.clone();
    let mut raw = Raw::default();
    let mut ops = Vec::new();
    let count = match below(rng, 20) {
        0 => 0,
        1..=9 => 1,
        10..=16 => 2,
        _ => 3,
    };
    let mut later = Vec::new();
    for _ in 0..count {
        if chance(rng, 60) {
            let (name, op) = pick(rng, STRUCTURAL);
            op(rng, &mut value, &mut raw);
            ops.push(*name);
        } else {
            later.push(*pick(rng, BYTES));
        }
    }
    let mut body = raw.render(&value).into_bytes();
    let other = other.to_string().into_bytes();
    for (name, op) in later {
        op(rng, &mut body, &other);
        ops.push(name);
    }
    (body, ops)
}

/// Every node's JSON pointer (`""` for the root).
fn pointers(value: &Value, at: &str, into: &mut Vec<String>) {
    into.push(at.to_owned());
    match value {
        Value::Object(members) => {
            for (key, member) in members {
                let key = key.replace('~', "~0").replace('/', "~1");
                pointers(member, &format!("{at}/{key}"), into);
            }
        }
        Value::Array(items) => {
            for (index, item) in items.iter().enumerate() {
                pointers(item, &format!("{at}/{index}"), into);
            }
        }
        _ => {}
    }
}

/// A node picked at random, among those `fits` accepts (the root if none).
fn node<'v>(rng: &mut Rand64, value: &'v mut Value, fits: fn(&Value) -> bool) -> &'v mut Value {
    let mut all = Vec::new();
    pointers(value, "", &mut all);
    all.retain(|pointer| value.pointer(pointer).is_some_and(fits));
    match all.is_empty() {
        true => value,
        false => {
            let pointer = pick(rng, &all).clone();
            value.pointer_mut(&pointer).expect("a node")
        }
    }
}

fn anything(_: &Value) -> bool {
    true
}

fn non_empty_object(value: &Value) -> bool {
    value.as_object().is_some_and(|members| !members.is_empty())
}

/// The root's members (the root made an object if it is not one).
fn root(value: &mut Value) -> &mut Map<String, Value> {
    if !value.is_object() {
        *value = json!({});
    }
    value.as_object_mut().expect("an object")
}

/// `params` (made an object if it is not one).
fn params(value: &mut Value) -> &mut Map<String, Value> {
    let params = root(value).entry("params").or_insert_with(|| json!({}));
    if !params.is_object() {
        *params = json!({});
    }
    params.as_object_mut().expect("an object")
}

const WORDS: &[&str] = &[
    "",
    "echo",
    "add",
    "countdown",
    "confirm_delete",
    "review",
    "memo://readme",
    "memo://notes/{id}",
    "2026-07-28",
    "tools/call",
    "answer",
    "accept",
    "\u{0}",
    "é😀",
    "\u{202e}evil",
    "../../etc/passwd",
    "=?base64?ZWNobw==?=",
    "%00",
];

fn ascii(rng: &mut Rand64, max: usize) -> String {
    (0..below(rng, max + 1))
        .map(|_| char::from(b' ' + below(rng, 95) as u8))
        .collect()
}

/// Any JSON value, small.
fn any_value(rng: &mut Rand64, depth: usize) -> Value {
    match below(rng, 11) {
        0 => Value::Null,
        1 => Value::Bool(chance(rng, 50)),
        2 => json!(*pick(
            rng,
            &[
                0i64,
                1,
                -1,
                2,
                40,
                100,
                255,
                256,
                65_535,
                65_536,
                i64::MAX,
                i64::MIN
            ]
        )),
        3 => json!(*pick(
            rng,
            &[0.5, -1.5, 1e10, 1e300, -0.0, 5e-324, 2.5e-308]
        )),
        4 => json!(ascii(rng, 16)),
        5 => json!(*pick(rng, WORDS)),
        6 if depth < 3 => (0..below(rng, 4))
            .map(|_| any_value(rng, depth + 1))
            .collect(),
        7 if depth < 3 => {
            let mut members = Map::new();
            for _ in 0..below(rng, 4) {
                members.insert(ascii(rng, 8), any_value(rng, depth + 1));
            }
            Value::Object(members)
        }
        8 => json!(u64::MAX),
        9 => json!(rng.rand_u64() as i64),
        _ => json!([]),
    }
}

fn kind(value: &Value) -> u8 {
    match value {
        Value::Null => 0,
        Value::Bool(_) => 1,
        Value::Number(_) => 2,
        Value::String(_) => 3,
        Value::Array(_) => 4,
        Value::Object(_) => 5,
    }
}

fn remove_key(rng: &mut Rand64, value: &mut Value, _: &mut Raw) {
    if let Value::Object(members) = node(rng, value, non_empty_object) {
        let keys: Vec<String> = members.keys().cloned().collect();
        if !keys.is_empty() {
            members.shift_remove(pick(rng, &keys));
        }
    }
}

/// A member written twice, with the same value or another.
fn duplicate_key(rng: &mut Rand64, value: &mut Value, raw: &mut Raw) {
    let target = node(rng, value, non_empty_object);
    let Value::Object(members) = &*target else {
        return;
    };
    let keys: Vec<&String> = members.keys().collect();
    if keys.is_empty() {
        return;
    }
    let key = (*pick(rng, &keys)).clone();
    let again = match chance(rng, 50) {
        true => raw.render(&members[&key]),
        false => any_value(rng, 0).to_string(),
    };
    let text = raw.render(target);
    let open = text.len() - 1;
    let repeated = format!("{},{}:{again}}}", &text[..open], Value::from(key));
    *target = raw.insert(repeated);
}

fn swap_type(rng: &mut Rand64, value: &mut Value, _: &mut Raw) {
    let target = node(rng, value, anything);
    for _ in 0..8 {
        let other = any_value(rng, 1);
        if kind(&other) != kind(target) {
            *target = other;
            return;
        }
    }
}

const ODD_NUMBERS: &[&str] = &[
    "1e308",
    "-1e308",
    "1e309",
    "-1e309",
    "1.7976931348623157e308",
    "4.9e-324",
    "1e-400",
    "-0",
    "-0.0",
    "0.0",
    "1.0",
    "1E2",
    "1e+2",
    "9223372036854775807",
    "9223372036854775808",
    "-9223372036854775808",
    "-9223372036854775809",
    "18446744073709551615",
    "18446744073709551616",
    "123456789012345678901234567890123456789",
    "0.30000000000000004",
    "NaN",
    "-NaN",
    "Infinity",
    "-Infinity",
    "inf",
    "0x10",
    "01",
    "1.",
    ".5",
    "+1",
    "1e",
    "--1",
    "1_000",
];

fn odd_number(rng: &mut Rand64, value: &mut Value, raw: &mut Raw) {
    let target = node(rng, value, |v| v.is_number() || chance_free(v));
    *target = raw.insert((*pick(rng, ODD_NUMBERS)).to_owned());
}

/// Scalars other than numbers may become numbers too.
fn chance_free(value: &Value) -> bool {
    !value.is_object() && !value.is_array()
}

fn deep_nesting(rng: &mut Rand64, value: &mut Value, raw: &mut Raw) {
    let depth = *pick(rng, &[8, 64, 127, 128, 129, 1_000, 50_000]);
    let text = match chance(rng, 50) {
        true => format!("{}{}", "[".repeat(depth), "]".repeat(depth)),
        false => format!("{}0{}", "{\"a\":".repeat(depth), "}".repeat(depth)),
    };
    let target = node(rng, value, anything);
    *target = raw.insert(text);
}

fn long_string(rng: &mut Rand64, value: &mut Value, _: &mut Raw) {
    let length = match below(rng, 100) {
        0..=59 => 1_000,
        60..=97 => 70_000,
        _ => 1_000_000,
    };
    let piece = *pick(rng, &["a", "é", "😀", "\"", "\\", "\u{0}", "\n", "{"]);
    // About `length` bytes once escaped (`\u0000` is six).
    let cost = Value::from(piece).to_string().len() - 2;
    let target = node(rng, value, |v| v.is_string() || chance_free(v));
    *target = Value::String(piece.repeat(length / cost));
}

/// `text` with every character written as a `\u` escape.
fn escaped(text: &str) -> String {
    let mut out = String::from("\"");
    for unit in text.encode_utf16() {
        out.push_str(&format!("\\u{unit:04x}"));
    }
    out.push('"');
    out
}

const ODD_STRINGS: &[&str] = &[
    r#""\ud800""#,
    r#""\udfff""#,
    r#""\ud800\u0041""#,
    r#""\ud83d\ude00""#,
    r#""\u0000""#,
    r#""a\u0000b""#,
    r#""\x41""#,
    r#""\u12""#,
    r#""\uZZZZ""#,
    "\"tab\there\"",
    "\"new\nline\"",
    r#""\/\/""#,
    r#""\u202e\ufeff\uffff\ufffe""#,
    "\"é😀\"",
    r#""unterminated"#,
    r#"'single'"#,
    r#""\""#,
];

fn odd_string(rng: &mut Rand64, value: &mut Value, raw: &mut Raw) {
    let target = node(rng, value, |v| v.is_string() || chance_free(v));
    let text = match (&*target, chance(rng, 40)) {
        (Value::String(text), true) => escaped(text),
        _ => (*pick(rng, ODD_STRINGS)).to_owned(),
    };
    *target = raw.insert(text);
}

fn wrong_id(rng: &mut Rand64, value: &mut Value, raw: &mut Raw) {
    let id = match below(rng, 14) {
        0 => Value::Null,
        1 => raw.insert("1.5".into()),
        2 => raw.insert("1e2".into()),
        3 => raw.insert("-0".into()),
        4 => json!({}),
        5 => json!([1]),
        6 => json!(true),
        7 => json!(""),
        8 => json!(-1),
        9 => json!(i64::MAX),
        10 => raw.insert("9223372036854775808".into()),
        11 => json!("x".repeat(10_000)),
        12 => raw.insert(r#""\u0063ase""#.into()),
        _ => any_value(rng, 0),
    };
    root(value).insert("id".into(), id);
}

fn wrong_jsonrpc(rng: &mut Rand64, value: &mut Value, raw: &mut Raw) {
    let version = match below(rng, 10) {
        0 => json!("1.0"),
        1 => json!("2"),
        2 => raw.insert("2.0".into()),
        3 => Value::Null,
        4 => json!("2.0 "),
        5 => json!(""),
        6 => json!("2.0\u{0}"),
        7 => {
            root(value).shift_remove("jsonrpc");
            return;
        }
        8 => raw.insert(r#""\u0032.0""#.into()),
        _ => any_value(rng, 0),
    };
    root(value).insert("jsonrpc".into(), version);
}

const VERSION: &str = "io.modelcontextprotocol/protocolVersion";
const CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";

fn random_meta(rng: &mut Rand64, value: &mut Value, _: &mut Raw) {
    let params = params(value);
    let choice = below(rng, 9);
    if choice == 0 {
        params.shift_remove("_meta");
        return;
    }
    if choice == 1 {
        params.insert("_meta".into(), any_value(rng, 0));
        return;
    }
    let meta = params.entry("_meta").or_insert_with(|| json!({}));
    if !meta.is_object() {
        *meta = json!({});
    }
    let meta = meta.as_object_mut().expect("an object");
    match choice {
        2 => {
            meta.shift_remove(*pick(rng, &[VERSION, CAPABILITIES]));
        }
        3 => {
            let version = pick(
                rng,
                &["2025-11-25", "2025-06-18", "2026-07-29", "", "2026-07-28 "],
            );
            meta.insert(VERSION.into(), json!(version));
        }
        4 => {
            meta.insert(VERSION.into(), any_value(rng, 0));
        }
        5 => {
            let capabilities = match chance(rng, 50) {
                true => json!({"elicitation": any_value(rng, 1), "sampling": {}, "roots": {}}),
                false => any_value(rng, 1),
            };
            meta.insert(CAPABILITIES.into(), capabilities);
        }
        6 => {
            meta.insert("progressToken".into(), any_value(rng, 1));
        }
        7 => {
            let key = pick(
                rng,
                &[
                    "io.modelcontextprotocol/clientInfo",
                    "com.example/x",
                    "",
                    "progressToken",
                ],
            );
            meta.insert((*key).into(), any_value(rng, 1));
        }
        _ => {
            meta.insert(ascii(rng, 12), any_value(rng, 2));
        }
    }
}

const METHODS: &[&str] = &[
    "server/discover",
    "tools/list",
    "tools/call",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "resources/subscribe",
    "prompts/list",
    "prompts/get",
    "completion/complete",
    "subscriptions/listen",
    "logging/setLevel",
    "ping",
    "notifications/cancelled",
    "notifications/initialized",
    "notifications/progress",
    "notifications/",
    "",
    "TOOLS/LIST",
    "tools/list ",
    "rpc.discover",
];

fn swap_method(rng: &mut Rand64, value: &mut Value, _: &mut Raw) {
    let method = match chance(rng, 85) {
        true => json!(*pick(rng, METHODS)),
        false => json!(ascii(rng, 24)),
    };
    root(value).insert("method".into(), method);
}

const NAMES: &[&str] = &[
    "echo",
    "add",
    "divide",
    "countdown",
    "confirm_delete",
    "review",
    "nope",
    "",
    "ECHO",
    "echo ",
];
const URIS: &[&str] = &[
    "memo://readme",
    "memo://notes/1",
    "memo://notes/seven",
    "memo://notes/",
    "memo://",
    "file:///etc/passwd",
    "",
];

fn swap_name(rng: &mut Rand64, value: &mut Value, _: &mut Raw) {
    let params = params(value);
    match params.contains_key("uri") {
        true => params.insert("uri".into(), json!(*pick(rng, URIS))),
        false => params.insert("name".into(), json!(*pick(rng, NAMES))),
    };
}

fn drop_id(_: &mut Rand64, value: &mut Value, _: &mut Raw) {
    root(value).shift_remove("id");
}

const KEYS: &[&str] = &[
    "id",
    "jsonrpc",
    "method",
    "params",
    "result",
    "error",
    "_meta",
    "arguments",
    "name",
    "uri",
    "cursor",
    "inputResponses",
    "requestState",
    "__proto__",
];

fn add_key(rng: &mut Rand64, value: &mut Value, _: &mut Raw) {
    let key = match chance(rng, 70) {
        true => (*pick(rng, KEYS)).to_owned(),
        false => ascii(rng, 10),
    };
    let member = any_value(rng, 1);
    if let Value::Object(members) = node(rng, value, Value::is_object) {
        members.insert(key, member);
    }
}

/// The message in a JSON-RPC batch (which 2026-07-28 does not have).
fn batch(rng: &mut Rand64, value: &mut Value, raw: &mut Raw) {
    let text = raw.render(value);
    let batched = match below(rng, 3) {
        0 => format!("[{text}]"),
        1 => format!("[{text},{text}]"),
        _ => "[]".to_owned(),
    };
    *value = raw.insert(batched);
}

fn position(rng: &mut Rand64, body: &[u8]) -> usize {
    below(rng, body.len() + 1)
}

#[allow(
    clippy::ptr_arg,
    reason = "every byte mutation has the `Bytes` signature"
)]
fn flip_bits(rng: &mut Rand64, body: &mut Vec<u8>, _: &[u8]) {
    for _ in 0..=below(rng, 4) {
        if !body.is_empty() {
            let at = below(rng, body.len());
            body[at] ^= 1 << below(rng, 8);
        }
    }
}

const BYTE_VALUES: &[u8] = &[
    0x00, b'\n', b'\r', b'"', b'\\', b'{', b'}', b'[', b']', b',', b':', b' ', 0x7f, 0x80, 0xc0,
    0xff, b'0', b'-', b'e',
];

#[allow(
    clippy::ptr_arg,
    reason = "every byte mutation has the `Bytes` signature"
)]
fn set_bytes(rng: &mut Rand64, body: &mut Vec<u8>, _: &[u8]) {
    for _ in 0..=below(rng, 4) {
        if !body.is_empty() {
            let at = below(rng, body.len());
            body[at] = match chance(rng, 70) {
                true => *pick(rng, BYTE_VALUES),
                false => rng.rand_u64() as u8,
            };
        }
    }
}

const INSERTS: &[&[u8]] = &[
    &[0xff],
    &[0xc3],
    &[0xed, 0xa0, 0x80],
    &[0xc0, 0x80],
    &[0xf4, 0x90, 0x80, 0x80],
    &[0xef, 0xbb, 0xbf],
    b"\n",
    b"\r\n",
    b"\\u0000",
    b",",
    b"{}",
    b"null",
    b"\"",
];

fn insert_bytes(rng: &mut Rand64, body: &mut Vec<u8>, _: &[u8]) {
    let at = position(rng, body);
    let bytes: Vec<u8> = match chance(rng, 70) {
        true => pick(rng, INSERTS).to_vec(),
        false => (0..=below(rng, 8)).map(|_| rng.rand_u64() as u8).collect(),
    };
    body.splice(at..at, bytes);
}

fn delete_range(rng: &mut Rand64, body: &mut Vec<u8>, _: &[u8]) {
    let at = position(rng, body);
    let end = (at + 1 + below(rng, 64)).min(body.len());
    body.drain(at..end);
}

fn truncate(rng: &mut Rand64, body: &mut Vec<u8>, _: &[u8]) {
    let at = position(rng, body);
    body.truncate(at);
}

fn duplicate_range(rng: &mut Rand64, body: &mut Vec<u8>, _: &[u8]) {
    let from = position(rng, body);
    let end = (from + 1 + below(rng, 64)).min(body.len());
    let copy = body[from..end].to_vec();
    let at = position(rng, body);
    body.splice(at..at, copy);
}

/// A prefix of the mutant, then a suffix of another seed.
fn splice(rng: &mut Rand64, body: &mut Vec<u8>, other: &[u8]) {
    let at = position(rng, body);
    let from = below(rng, other.len() + 1);
    body.truncate(at);
    body.extend_from_slice(&other[from..]);
}

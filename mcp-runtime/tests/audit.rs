//! Audit events: one per tool call, resource read and prompt get, under
//! the `mcp::audit` target, with who, what (a keyed digest of the
//! arguments, never the arguments unless configured), the outcome and the
//! duration. A `tracing` layer collects them here as a subscriber would.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_runtime::{
    ElicitForm, Elicitation, KeyRing, Server, ServerBuilder, StdioOptions, prompt, resource, tool,
};
use mcp_test_support::stdio::InMemory;
use mcp_test_support::{call_tool, meta_with, request};
use serde_json::json;
use tracing::field::{Field, Visit};
use tracing_subscriber::layer::{Context, SubscriberExt as _};

/// Adds two numbers.
#[tool(annotations(read_only))]
fn add(a: i64, b: i64) -> String {
    (a + b).to_string()
}

/// Always fails, the model's way.
#[tool(annotations(read_only))]
fn refuse() -> Result<String, String> {
    Err("no".into())
}

/// Sleeps.
#[tool(annotations(read_only))]
async fn nap(millis: u64) -> String {
    tokio::time::sleep(Duration::from_millis(millis)).await;
    "rested".into()
}

#[derive(serde::Deserialize, schemars::JsonSchema, ElicitForm)]
struct Confirm {
    sure: bool,
}

/// Asks first.
#[tool(annotations(read_only))]
fn ask(#[elicit("Sure?")] answer: Elicitation<Confirm>) -> String {
    format!(
        "{}",
        matches!(answer, Elicitation::Accepted(Confirm { sure: true }))
    )
}

/// A note.
#[resource("notes://{id}", mime_type = "text/plain")]
fn note(id: u32) -> String {
    format!("note {id}")
}

/// A greeting.
#[prompt]
fn greet(name: String) -> String {
    format!("Greet {name}")
}

type Events = Arc<Mutex<Vec<BTreeMap<String, String>>>>;

/// Collects the fields of every `mcp::audit` event.
struct Collect(Events);

struct Fields<'a>(&'a mut BTreeMap<String, String>);

impl Visit for Fields<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.insert(field.name().into(), format!("{value:?}"));
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().into(), value.into());
    }
}

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for Collect {
    fn on_event(&self, event: &tracing::Event<'_>, _: Context<'_, S>) {
        if event.metadata().target() == "mcp::audit" {
            let mut fields = BTreeMap::new();
            event.record(&mut Fields(&mut fields));
            self.0.lock().unwrap().push(fields);
        }
    }
}

/// Runs `script` with audit events collected, and returns them.
async fn audited<F: Future<Output = ()>>(script: F) -> Vec<BTreeMap<String, String>> {
    let events = Events::default();
    let subscriber = tracing_subscriber::registry().with(Collect(events.clone()));
    let _guard = tracing::subscriber::set_default(subscriber);
    script.await;
    events.lock().unwrap().clone()
}

fn server(builder: ServerBuilder) -> Server {
    builder
        .request_state(mcp_runtime::RequestStateOptions::new().keys(KeyRing::new([7; 32])))
        .build()
        .unwrap()
}

/// An event without its duration (which varies), checked to be there.
fn without_duration(mut event: BTreeMap<String, String>) -> BTreeMap<String, String> {
    let duration: f64 = event
        .remove("duration_ms")
        .expect("a duration")
        .parse()
        .unwrap();
    assert!(duration >= 0.0);
    event
}

fn fields(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

#[tokio::test]
async fn each_call_read_and_get_emits_one_event_without_the_arguments() {
    let server = server(ServerBuilder::new("audit", "1.0.0"));
    let events = audited(async {
        for message in [
            call_tool(1, "add", json!({"a": 2, "b": 40})),
            call_tool(2, "add", json!({"b": 40, "a": 2})),
            call_tool(3, "add", json!({"a": 2, "b": 41})),
            call_tool(4, "refuse", json!({})),
            call_tool(5, "nope", json!({})),
            request(
                6,
                "tools/call",
                json!({"name": "ask", "_meta": meta_with(json!({"elicitation": {}}))}),
            ),
            request(7, "resources/read", json!({"uri": "notes://3"})),
            request(
                8,
                "prompts/get",
                json!({"name": "greet", "arguments": {"name": "Ada"}}),
            ),
            request(9, "tools/list", json!({})),
        ] {
            server.exchange(message).await;
        }
    })
    .await;
    let events: Vec<_> = events.into_iter().map(without_duration).collect();
    assert_eq!(events.len(), 8, "{events:#?}");
    let digest = |i: usize| events[i]["arguments_digest"].clone();
    assert_eq!(digest(0).len(), 32);
    // Keys in another order: the same arguments, the same digest.
    assert_eq!(digest(0), digest(1));
    assert_ne!(digest(0), digest(2));
    let common = [
        ("message", "audit"),
        ("transport", "in-process"),
        ("client", "test-client"),
    ];
    let expect = |extra: &[(&str, &str)], digest: Option<String>| {
        let mut expected = fields(&common);
        expected.extend(fields(extra));
        if let Some(digest) = digest {
            expected.insert("arguments_digest".into(), digest);
        }
        expected
    };
    assert_eq!(
        events[0],
        expect(
            &[
                ("method", "tools/call"),
                ("name", "add"),
                ("request_id", "1"),
                ("outcome", "ok")
            ],
            Some(digest(0))
        )
    );
    assert_eq!(
        events[3],
        expect(
            &[
                ("method", "tools/call"),
                ("name", "refuse"),
                ("request_id", "4"),
                ("outcome", "tool_error")
            ],
            Some(digest(3))
        )
    );
    assert_eq!(
        events[4],
        expect(
            &[
                ("method", "tools/call"),
                ("name", "nope"),
                ("request_id", "5"),
                ("outcome", "error"),
                ("error_code", "-32602")
            ],
            Some(digest(4))
        )
    );
    assert_eq!(events[5]["outcome"], "input_required");
    assert_eq!(
        events[6],
        expect(
            &[
                ("method", "resources/read"),
                ("name", "notes://3"),
                ("request_id", "7"),
                ("outcome", "ok")
            ],
            None
        )
    );
    assert_eq!(
        events[7],
        expect(
            &[
                ("method", "prompts/get"),
                ("name", "greet"),
                ("request_id", "8"),
                ("outcome", "ok")
            ],
            Some(digest(7))
        )
    );
    // Nothing logged the arguments themselves.
    assert!(events.iter().all(|e| !e.contains_key("arguments")));
}

#[tokio::test]
async fn arguments_are_logged_only_when_configured() {
    let server = server(ServerBuilder::new("audit", "1.0.0").audit_arguments());
    let events = audited(async {
        server
            .exchange(call_tool(1, "add", json!({"a": 2, "b": 40})))
            .await;
    })
    .await;
    assert_eq!(events[0]["arguments"], r#"{"a":2,"b":40}"#);
    assert_eq!(events[0]["arguments_digest"].len(), 32);
}

#[tokio::test]
async fn a_cancelled_call_is_audited_as_cancelled() {
    let server = server(ServerBuilder::new("audit", "1.0.0"));
    let events = audited(async {
        let (mut client, (server_read, server_write)) = InMemory::pair();
        let serve = server.serve_streams(StdioOptions::new(), server_read, server_write);
        let script = async move {
            client.send(&call_tool(1, "nap", json!({"millis": 5000}))).await;
            tokio::time::sleep(Duration::from_millis(100)).await;
            client
                .send(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}"#)
                .await;
            tokio::time::sleep(Duration::from_millis(100)).await;
            client.close().await;
            assert!(client.next_line().await.is_none(), "no response");
        };
        let (served, ()) = tokio::join!(serve, script);
        served.unwrap();
    })
    .await;
    assert_eq!(events.len(), 1);
    assert_eq!(events[0]["outcome"], "cancelled");
    assert_eq!(events[0]["transport"], "stdio");
    assert_eq!(events[0]["name"], "nap");
}

/// A `MakeWriter` into a shared buffer, for the formatted lines.
#[derive(Clone, Default)]
struct Lines(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Lines {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(bytes);
        Ok(bytes.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for Lines {
    type Writer = Lines;
    fn make_writer(&'a self) -> Lines {
        self.clone()
    }
}

/// The `client` field of the line the fmt layer writes for a call from a
/// client named `name`.
async fn formatted_client(server: &Server, name: &str) -> String {
    let lines = Lines::default();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(lines.clone())
        .with_ansi(false)
        .with_max_level(tracing::Level::INFO)
        .finish();
    let _guard = tracing::subscriber::set_default(subscriber);
    let mut meta = meta_with(json!({}));
    meta["io.modelcontextprotocol/clientInfo"]["name"] = json!(name);
    let call = request(
        1,
        "tools/call",
        json!({"name": "add", "arguments": {"a": 1, "b": 2}, "_meta": meta}),
    );
    server.exchange(call).await;
    let text = String::from_utf8(lines.0.lock().unwrap().clone()).unwrap();
    assert_eq!(text.lines().count(), 1, "{text}");
    let start = text.find(" client=").expect("a client field");
    let end = text[start..]
        .find(" transport=")
        .expect("the transport next");
    text[start + 1..start + end].to_owned()
}

#[tokio::test]
async fn the_client_name_is_quoted_once_and_escaped() {
    let server = server(ServerBuilder::new("audit", "1.0.0"));
    assert_eq!(
        formatted_client(&server, "mcp-runtime-inspector").await,
        r#"client="mcp-runtime-inspector""#
    );
    // A name that tries to start a forged line stays on this one.
    assert_eq!(
        formatted_client(&server, "x\nINFO mcp::audit: forged").await,
        r#"client="x\\nINFO mcp::audit: forged""#
    );
}

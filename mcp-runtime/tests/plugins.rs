//! The plugin seam (`ServerBuilder::with`): what a plugin adds takes its
//! place among the builder's own calls, start-up steps run in order and
//! shutdown steps in reverse, and a plugin that cannot install itself
//! stops the build with an error naming it.

use std::sync::{Arc, Mutex};

use mcp_runtime::middleware::{self, Next, Request, Response};
use mcp_runtime::plugin::{self, Plugin, PluginError, Setup};
use mcp_runtime::{BuildError, ServerBuilder, Startup, tool};
use serde_json::{Value, json};

/// What the layers and steps did, in order.
#[derive(Clone, Debug, Default)]
struct Trail(Arc<Mutex<Vec<String>>>);

impl Trail {
    fn push(&self, line: impl Into<String>) {
        self.0.lock().unwrap().push(line.into());
    }

    fn take(&self) -> Vec<String> {
        std::mem::take(&mut *self.0.lock().unwrap())
    }
}

/// Always works.
#[tool]
fn works() -> String {
    "yes".to_owned()
}

/// The future a marking layer answers with.
type Answer = middleware::BoxFuture<Response>;

/// A request layer that writes `name` on the trail on the way in.
fn marking(
    trail: &Trail,
    name: &'static str,
) -> middleware::FromFnLayer<impl Fn(Request, Next<Request>) -> Answer + Send + Sync + 'static> {
    let trail = trail.clone();
    middleware::from_fn(move |request: Request, next: Next<Request>| -> Answer {
        trail.push(name);
        Box::pin(next.run(request))
    })
}

/// A plugin adding a request layer, a start-up step and a shutdown step,
/// each writing `name` on the trail.
struct Marker {
    trail: Trail,
    name: &'static str,
}

impl Plugin for Marker {
    fn install(self, server: &mut Setup<'_>) -> Result<(), PluginError> {
        let (on_start, on_stop, name) = (self.trail.clone(), self.trail.clone(), self.name);
        server
            .request_layer(marking(&self.trail, name))
            .on_startup(move |startup: Startup| {
                on_start.push(format!("start {name}"));
                async move { Ok::<_, PluginError>(startup.state(name.len())) }
            })
            .on_shutdown(move |_| {
                on_stop.push(format!("stop {name}"));
                async {}
            });
        Ok(())
    }
}

fn call() -> String {
    json!({
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {
            "name": "works",
            "arguments": {},
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": mcp_runtime::protocol::PROTOCOL_VERSION,
                "io.modelcontextprotocol/clientCapabilities": {},
            },
        },
    })
    .to_string()
}

#[tokio::test]
async fn what_a_plugin_adds_takes_its_place_among_the_builders_calls() {
    let trail = Trail::default();
    let server = ServerBuilder::new("plugins", "1.0.0")
        .request_layer(marking(&trail, "builder first"))
        .with(Marker {
            trail: trail.clone(),
            name: "a",
        })
        .request_layer(marking(&trail, "builder second"))
        .with(Marker {
            trail: trail.clone(),
            name: "b",
        })
        .on_startup({
            let trail = trail.clone();
            move |startup: Startup| {
                trail.push("start builder");
                async move { Ok::<_, PluginError>(startup) }
            }
        })
        .start()
        .await
        .unwrap();
    assert_eq!(trail.take(), ["start a", "start b", "start builder"]);

    let answer = server.exchange(call()).await.response.unwrap();
    let answer: Value = serde_json::from_str(&answer).unwrap();
    assert_eq!(answer["result"]["content"][0]["text"], "yes", "{answer}");
    assert_eq!(trail.take(), ["builder first", "a", "builder second", "b"]);

    server.stop().await;
    server.stop().await; // once only
    assert_eq!(trail.take(), ["stop b", "stop a"]);
}

/// Refuses to install, as a plugin whose backend is unreachable does.
struct Unreachable;

impl Plugin for Unreachable {
    fn install(self, _: &mut Setup<'_>) -> Result<(), PluginError> {
        Err("cannot reach the backend at 127.0.0.1:1".into())
    }

    fn name(&self) -> String {
        "the unreachable backend".to_owned()
    }
}

#[test]
fn a_plugin_that_cannot_install_stops_the_build_naming_it() {
    let error = ServerBuilder::new("plugins", "1.0.0")
        .with(Unreachable)
        .build()
        .unwrap_err();
    assert!(
        matches!(&error, BuildError::Plugin { plugin, .. } if plugin == "the unreachable backend"),
        "{error:?}"
    );
    assert_eq!(
        error.to_string(),
        "plugin the unreachable backend: cannot reach the backend at 127.0.0.1:1"
    );
}

#[tokio::test]
async fn a_closure_plugin_adds_states_and_extensions() {
    let server = ServerBuilder::new("plugins", "1.0.0")
        .with(plugin::from_fn(|server| {
            server
                .state(7_u32)
                .extension(mcp_runtime::extension::Extension::new("com.example/seven"));
        }))
        .build()
        .unwrap();
    let discover = json!({
        "jsonrpc": "2.0",
        "id": 1,
        "method": "server/discover",
        "params": {"_meta": {
            "io.modelcontextprotocol/protocolVersion": mcp_runtime::protocol::PROTOCOL_VERSION,
            "io.modelcontextprotocol/clientCapabilities": {},
        }},
    });
    let answer = server
        .exchange(discover.to_string())
        .await
        .response
        .unwrap();
    let answer: Value = serde_json::from_str(&answer).unwrap();
    assert_eq!(
        answer["result"]["capabilities"]["extensions"]["com.example/seven"],
        json!({}),
        "{answer}"
    );
}

#[tokio::test]
async fn a_start_up_hook_that_never_ends_fails_at_the_deadline_naming_it() {
    let line = line!() + 3;
    let error = ServerBuilder::new("plugins", "1.0.0")
        .startup_timeout(std::time::Duration::from_millis(50))
        .on_startup(|_: Startup| std::future::pending::<Result<Startup, PluginError>>())
        .start()
        .await
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        format!(
            "start-up: the start-up hook at mcp-runtime/tests/plugins.rs:{line} did not finish \
             within 0.05 s (a backend that never answers?); the server does not serve without it. \
             Raise the limit with `ServerBuilder::startup_timeout`"
        )
    );
}

#[tokio::test]
async fn a_plugins_start_up_step_is_named_after_the_plugin() {
    let error = ServerBuilder::new("plugins", "1.0.0")
        .with(plugin::from_fn(|server| {
            server.on_startup(|_: Startup| async { Err::<Startup, _>("the pool refused") });
        }))
        .start()
        .await
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "start-up: the plugin plugin::from_fn(..): the pool refused"
    );
}

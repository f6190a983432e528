//! `layer = ...` and `timeout_ms = ...` on each kind of item: the
//! expression sees the module's imports (it is evaluated once per server,
//! when the server is built), a tuple of layers is a layer, and so is an
//! `ItemLayer`.

use mcp_runtime::middleware::{self, BoxError, Invocation, Next, Output};
use mcp_runtime::{prompt, resource, tool};

/// Passes every invocation on.
async fn pass(call: Invocation, next: Next<Invocation>) -> Result<Output, BoxError> {
    next.run(call).await
}

async fn fully_qualified(
    call: mcp_runtime::middleware::Invocation,
    next: mcp_runtime::middleware::Next<mcp_runtime::middleware::Invocation>,
) -> Result<mcp_runtime::middleware::Output, mcp_runtime::middleware::BoxError> {
    next.run(call).await
}

/// Guarded and limited.
#[tool(layer = middleware::from_fn(pass), timeout_ms = 250)]
async fn guarded() -> String {
    String::new()
}

/// A layer generic over the service it wraps, as tower's are.
#[derive(Clone)]
struct Passthrough;

impl<S> middleware::Layer<S> for Passthrough {
    type Service = S;

    fn layer(&self, inner: S) -> S {
        inner
    }
}

/// Three layers, outermost first: a `from_fn` layer may sit anywhere.
#[tool(
    timeout_ms = 5_000,
    layer = (
        middleware::from_fn(pass),
        Passthrough,
        mcp_runtime::middleware::from_fn(fully_qualified),
    )
)]
fn stacked() -> String {
    String::new()
}

/// A layer boxed already.
#[tool(layer = middleware::ItemLayer::new(Passthrough))]
fn boxed() -> String {
    String::new()
}

/// Limited only.
#[resource("memo://limited", timeout_ms = 1000)]
fn limited() -> &'static str {
    "limited"
}

/// Layered only.
#[prompt(layer = middleware::from_fn(pass))]
fn layered() -> String {
    String::new()
}

/// Neither.
#[tool]
fn plain() -> String {
    String::new()
}

fn main() {
    use mcp_runtime::__private::{PROMPTS, RESOURCES, TOOLS};
    let tool = |name: &str| TOOLS.iter().find(|entry| entry.name == name).unwrap();
    assert_eq!(tool("guarded").timeout_ms, Some(250));
    assert!(tool("guarded").layer.is_some());
    assert_eq!(tool("stacked").timeout_ms, Some(5000));
    assert!(tool("stacked").layer.is_some());
    assert_eq!(tool("plain").timeout_ms, None);
    assert!(tool("plain").layer.is_none());
    let resource = RESOURCES
        .iter()
        .find(|e| e.uri == "memo://limited")
        .unwrap();
    assert_eq!(
        (resource.timeout_ms, resource.layer.is_some()),
        (Some(1000), false)
    );
    let prompt = PROMPTS.iter().find(|e| e.name == "layered").unwrap();
    assert_eq!((prompt.timeout_ms, prompt.layer.is_some()), (None, true));
    // The layers are made when the server is built.
    assert_eq!(tool("boxed").timeout_ms, None);
    for make in [
        tool("guarded").layer,
        tool("stacked").layer,
        tool("boxed").layer,
        prompt.layer,
    ] {
        let _: middleware::ItemLayer = make.unwrap()();
    }
    mcp_runtime::server!()
        .build()
        .expect("the layered items build");
}

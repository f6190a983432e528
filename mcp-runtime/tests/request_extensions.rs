//! Requests that carry context: a request layer attaches typed extensions
//! that handlers read as `#[ctx] Extension<T>`, changes the params and the
//! `_meta` the handler sees, or answers early; a handler whose extension
//! no layer attached does not run, and the request gets `-32603` naming
//! the type.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use mcp_runtime::middleware::{self, BoxError, Extension, Next, Request, Response};
use mcp_runtime::{
    Context, ErrorObject, GetPromptResult, PromptMessage, ServerBuilder, State, prompt, resource,
    tool,
};
use mcp_test_support::{assert_valid_response, call_tool, parse, request};
use serde_json::{Value, json};

/// The caller's tenant, as a request layer resolved it.
#[derive(Clone, Debug)]
struct Tenant(String);

/// A second extension, attached only for some callers.
#[derive(Clone, Debug)]
struct Plan(&'static str);

/// How many times a handler ran.
#[derive(Clone, Default)]
struct Runs(Arc<AtomicU32>);

/// Whose data this call sees.
#[tool]
fn whoami(#[ctx] tenant: Extension<Tenant>, #[ctx] runs: State<Runs>) -> String {
    runs.0.0.fetch_add(1, Ordering::SeqCst);
    format!("tenant {}", tenant.0.0)
}

/// The tenant and its plan: the plan is attached only for `acme`.
#[tool]
fn plan(#[ctx] tenant: Extension<Tenant>, #[ctx] plan: Extension<Plan>) -> String {
    format!("{} is on {}", tenant.0.0, plan.0.0)
}

/// Echoes its argument and the client's name, as the handler sees them.
#[tool]
fn echo(text: String, #[ctx] ctx: &Context) -> String {
    let client = ctx
        .client_info()
        .map_or("nobody", |info| info.name.as_str());
    format!("{text} (for {client})")
}

/// Whose data this task sees: its worker runs after the call is answered.
#[tool(task, annotations(read_only))]
async fn whoami_later(#[ctx] tenant: Extension<Tenant>) -> String {
    format!("later, tenant {}", tenant.0.0)
}

/// The tenant's home page.
#[resource("tenant://home")]
fn home(#[ctx] tenant: Extension<Tenant>) -> String {
    format!("home of {}", tenant.0.0)
}

/// Greets the tenant.
#[prompt]
fn welcome(#[ctx] tenant: Extension<Tenant>) -> GetPromptResult {
    GetPromptResult::new([PromptMessage::user(format!("Welcome, {}", tenant.0.0))])
}

/// Resolves the tenant from the client's name (a real server reads a
/// header or a token claim), and refuses a caller without one.
async fn resolve(mut request: Request, next: Next<Request>) -> Result<Response, BoxError> {
    let client = request.meta().client_info.as_ref().map(|c| c.name.clone());
    let Some(client) = client else {
        return Err(ErrorObject::invalid_params("who are you?").into());
    };
    if client == "acme" {
        request.extensions_mut().insert(Plan("gold"));
    }
    request.extensions_mut().insert(Tenant(client));
    next.run(request).await
}

/// Rewrites calls of `shout` into calls of `echo` with the text in capitals,
/// and says the client is `rewriter`; a list's cursor is replaced by a
/// bogus one.
async fn rewrite(mut request: Request, next: Next<Request>) -> Result<Response, BoxError> {
    if request.name().as_deref() == Some("shout") {
        let params: Value = request.params_as()?;
        let text = params["arguments"]["text"].as_str().unwrap_or_default();
        request.set_params(&json!({"name": "echo", "arguments": {"text": text.to_uppercase()}}))?;
        let meta = request.meta_mut();
        meta.client_info.as_mut().expect("sent").name = "rewriter".to_owned();
    }
    if request.method() == "tools/list" {
        request.set_params(&json!({"cursor": "not-a-cursor"}))?;
    }
    if request.method() == "prompts/list" {
        let refused = request.set_params(&json!(["not", "an", "object"]));
        let error = refused.expect_err("params must be an object");
        return Err(ErrorObject::invalid_params(error.to_string()).into());
    }
    next.run(request).await
}

fn meta(client: Option<&str>) -> Value {
    let mut meta = mcp_test_support::meta();
    let key = "io.modelcontextprotocol/clientInfo";
    match client {
        Some(client) => meta[key] = json!({"name": client, "version": "1.0"}),
        None => _ = meta.as_object_mut().unwrap().remove(key),
    }
    meta
}

/// `method` with `params`, as `client` sends it.
fn from(client: Option<&str>, id: u32, method: &str, mut params: Value) -> String {
    params["_meta"] = meta(client);
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string()
}

async fn answer(server: &mcp_runtime::Server, message: String, result: &str) -> Value {
    let response = parse(&server.exchange(message).await.response.unwrap());
    assert_valid_response(result, &response);
    response
}

fn text(id: u32, text: &str) -> Value {
    let content = json!([{"type": "text", "text": text}]);
    json!({"jsonrpc": "2.0", "id": id, "result": {"resultType": "complete", "content": content}})
}

fn builder() -> ServerBuilder {
    ServerBuilder::new("extensions", "1.0.0")
        .without_server_info_in_results()
        .state(Runs::default())
}

#[tokio::test]
async fn a_layer_attaches_what_handlers_read_as_extension() {
    let server = builder()
        .request_layer(middleware::from_fn(resolve))
        .build()
        .unwrap();
    let call = |client, id, name| from(client, id, "tools/call", json!({"name": name}));
    let result = "CallToolResultResponse";
    let who = answer(&server, call(Some("globex"), 1, "whoami"), result).await;
    assert_eq!(who, text(1, "tenant globex"));
    let acme = answer(&server, call(Some("acme"), 2, "plan"), result).await;
    assert_eq!(acme, text(2, "acme is on gold"));

    let read = from(
        Some("acme"),
        3,
        "resources/read",
        json!({"uri": "tenant://home"}),
    );
    let home = answer(&server, read, "ReadResourceResultResponse").await;
    assert_eq!(home["result"]["contents"][0]["text"], "home of acme");
    let get = from(Some("acme"), 4, "prompts/get", json!({"name": "welcome"}));
    let welcome = answer(&server, get, "GetPromptResultResponse").await;
    assert_eq!(
        welcome["result"]["messages"][0]["content"]["text"],
        "Welcome, acme"
    );

    // Answered early: no tenant, no call.
    let refused = answer(&server, call(None, 5, "whoami"), result).await;
    assert_eq!(
        refused,
        json!({"jsonrpc": "2.0", "id": 5, "error": {"code": -32602, "message": "who are you?"}})
    );
}

#[tokio::test]
async fn a_handler_without_its_extension_does_not_run() {
    let runs = Runs::default();
    let server = builder().state(runs.clone()).build().unwrap();
    let call = from(Some("globex"), 1, "tools/call", json!({"name": "whoami"}));
    let refused = answer(&server, call, "CallToolResultResponse").await;
    let message = "Internal error: tool whoami takes `#[ctx] Extension<request_extensions::Tenant>`, and no request layer attached a `request_extensions::Tenant` to this request";
    assert_eq!(
        refused,
        json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32603, "message": message}})
    );
    assert_eq!(runs.0.load(Ordering::SeqCst), 0);

    // The layer attaches a plan only for `acme`: the second extension is
    // checked as well as the first.
    let server = builder()
        .request_layer(middleware::from_fn(resolve))
        .build()
        .unwrap();
    let call = from(Some("globex"), 2, "tools/call", json!({"name": "plan"}));
    let refused = answer(&server, call, "CallToolResultResponse").await;
    assert_eq!(refused["error"]["code"], -32603);
    assert_eq!(
        refused["error"]["message"],
        "Internal error: tool plan takes `#[ctx] Extension<request_extensions::Plan>`, and no request layer attached a `request_extensions::Plan` to this request"
    );

    let server = builder().build().unwrap();
    let read = from(
        Some("acme"),
        3,
        "resources/read",
        json!({"uri": "tenant://home"}),
    );
    let refused = answer(&server, read, "ReadResourceResultResponse").await;
    assert_eq!(refused["error"]["code"], -32603);
    let get = from(Some("acme"), 4, "prompts/get", json!({"name": "welcome"}));
    let refused = answer(&server, get, "GetPromptResultResponse").await;
    assert_eq!(
        refused["error"]["message"],
        "Internal error: prompt welcome takes `#[ctx] Extension<request_extensions::Tenant>`, and no request layer attached a `request_extensions::Tenant` to this request"
    );
}

#[tokio::test]
async fn a_layer_changes_the_params_and_meta_the_handler_sees() {
    let server = builder()
        .request_layer(middleware::from_fn(rewrite))
        .build()
        .unwrap();
    let shout = from(
        Some("alice"),
        1,
        "tools/call",
        json!({"name": "shout", "arguments": {"text": "hello"}}),
    );
    let echoed = answer(&server, shout, "CallToolResultResponse").await;
    assert_eq!(echoed, text(1, "HELLO (for rewriter)"));
    // Unchanged requests reach the handler as sent.
    let echo = call_tool(2, "echo", json!({"text": "hi"}));
    let echoed = answer(&server, echo, "CallToolResultResponse").await;
    assert_eq!(echoed, text(2, "hi (for test-client)"));

    // An answer known at once is found again from the changed params.
    let list = request(3, "tools/list", json!({}));
    let listed = answer(&server, list, "ListToolsResultResponse").await;
    assert_eq!(listed["error"]["code"], -32602);
    assert_eq!(listed["error"]["message"], "Invalid cursor");
    // Params that are not an object are refused to the layer.
    let prompts = request(4, "prompts/list", json!({}));
    let refused = answer(&server, prompts, "ListPromptsResultResponse").await;
    assert_eq!(refused["error"]["message"], "params must be a JSON object");
}

#[tokio::test]
async fn a_tasks_worker_sees_the_extensions_of_the_call_that_made_it() {
    let server = builder()
        .request_layer(middleware::from_fn(resolve))
        .build()
        .unwrap();
    let send = |id: u32, method: &str, mut params: Value| {
        let capabilities = json!({"extensions": {"io.modelcontextprotocol/tasks": {}}});
        params["_meta"] = mcp_test_support::meta_with(capabilities);
        params["_meta"]["io.modelcontextprotocol/clientInfo"] =
            json!({"name": "acme", "version": "1"});
        json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string()
    };
    let created = send(1, "tools/call", json!({"name": "whoami_later"}));
    let created = parse(&server.exchange(created).await.response.unwrap());
    assert_eq!(created["result"]["resultType"], "task", "{created}");
    let id = created["result"]["taskId"].clone();
    for round in 2.. {
        let get = send(round, "tasks/get", json!({"taskId": id}));
        let task = parse(&server.exchange(get).await.response.unwrap());
        if task["result"]["status"] == "working" && round < 500 {
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
            continue;
        }
        mcp_test_support::assert_valid_task("GetTaskResult", &task["result"]);
        assert_eq!(task["result"]["status"], "completed", "{task}");
        let content = json!([{"type": "text", "text": "later, tenant acme"}]);
        assert_eq!(task["result"]["result"]["content"], content);
        break;
    }
}

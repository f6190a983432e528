//! Application state and item sets: `ServerBuilder::state` reaching every
//! kind of handler, the start-up check for a missing state, the start-up
//! and shutdown hooks, and servers that serve chosen groups, two of them
//! mounted on one axum router.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use mcp_runtime::catalog::{Catalog, NoArguments, RuntimeTool};
use mcp_runtime::extension::{Extension, ExtensionMethod, MethodResult};
use mcp_runtime::{
    BuildError, CompletionRequest, Context, Items, Server, ServerBuilder, State, prompt, resource,
    tool,
};
use mcp_test_support::{assert_valid_response, call_tool, parse, request};
use serde_json::{Value, json};

/// A stand-in for a pool: which database it reaches.
#[derive(Clone, Debug)]
struct Db(&'static str);

/// The application's configuration.
#[derive(Clone, Debug)]
struct Config {
    greeting: String,
}

/// Which database answers.
#[tool(annotations(read_only))]
async fn which_db(#[ctx] db: State<Db>) -> String {
    db.0.0.to_owned()
}

/// Greets from the configuration and the database.
#[tool(annotations(read_only))]
fn greet(name: String, #[ctx] config: State<Config>, #[ctx] db: State<Db>) -> String {
    format!("{} {name} from {}", config.greeting, db.0.0)
}

/// Drops a table: admin only.
#[tool(group = "admin", annotations(destructive))]
fn drop_table(table: String, #[ctx] db: State<Db>) -> String {
    format!("dropped {table} on {}", db.0.0)
}

/// The database's name, from a task's worker (answered directly when
/// quick).
#[tool(task(answer_within_ms = 5000), annotations(read_only))]
async fn db_task(#[ctx] db: State<Db>) -> String {
    format!("task on {}", db.0.0)
}

/// The database's name as a resource.
#[resource("app://db", group = "admin")]
fn db_resource(#[ctx] db: State<Db>) -> String {
    db.0.0.to_owned()
}

/// The greeting as a prompt, with a completer reading the state.
#[prompt(group = "admin", complete(name = complete_name))]
fn greeting(name: String, #[ctx] config: State<Config>) -> String {
    format!("{} {name}", config.greeting)
}

fn complete_name(request: &CompletionRequest) -> Vec<String> {
    let db = request.context().state::<Db>().map_or("none", |db| db.0);
    vec![format!("{}-{db}", request.value())]
}

fn states() -> ServerBuilder {
    ServerBuilder::new("app-state", "1.0.0")
        .state(Db("main"))
        .state(Config {
            greeting: "hello".into(),
        })
}

async fn call(server: &Server, name: &str, arguments: Value) -> Value {
    let exchange = server.exchange(call_tool(1, name, arguments)).await;
    let response = parse(exchange.response.as_deref().unwrap());
    assert_valid_response("CallToolResultResponse", &response);
    response
}

fn text(response: &Value) -> &str {
    response["result"]["content"][0]["text"].as_str().unwrap()
}

async fn tool_names(server: &Server) -> Vec<String> {
    let exchange = server.exchange(request(1, "tools/list", json!({}))).await;
    let response = parse(exchange.response.as_deref().unwrap());
    assert_valid_response("ListToolsResultResponse", &response);
    let tools = response["result"]["tools"].as_array().unwrap();
    tools
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn states_reach_tools_resources_prompts_and_completers() {
    let server = states().build().unwrap();
    assert_eq!(text(&call(&server, "which_db", json!({})).await), "main");
    let greeted = call(&server, "greet", json!({"name": "ada"})).await;
    assert_eq!(text(&greeted), "hello ada from main");
    let read = server
        .exchange(request(1, "resources/read", json!({"uri": "app://db"})))
        .await;
    let read = parse(read.response.as_deref().unwrap());
    assert_eq!(read["result"]["contents"][0]["text"], "main");
    let got = server
        .exchange(request(
            1,
            "prompts/get",
            json!({"name": "greeting", "arguments": {"name": "bo"}}),
        ))
        .await;
    let got = parse(got.response.as_deref().unwrap());
    assert_eq!(got["result"]["messages"][0]["content"]["text"], "hello bo");
    let completion = server
        .exchange(request(
            1,
            "completion/complete",
            json!({
                "ref": {"type": "ref/prompt", "name": "greeting"},
                "argument": {"name": "name", "value": "al"},
            }),
        ))
        .await;
    let completion = parse(completion.response.as_deref().unwrap());
    assert_eq!(
        completion["result"]["completion"]["values"],
        json!(["al-main"])
    );
}

#[tokio::test]
async fn task_workers_read_states() {
    let server = states().build().unwrap();
    let mut params = json!({"name": "db_task", "arguments": {}});
    params["_meta"] =
        mcp_test_support::meta_with(json!({"extensions": {"io.modelcontextprotocol/tasks": {}}}));
    let message = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params});
    let exchange = server.exchange(message.to_string()).await;
    let response = parse(exchange.response.as_deref().unwrap());
    assert_eq!(text(&response), "task on main", "{response}");
}

#[tokio::test]
async fn extension_methods_and_runtime_items_read_states_from_the_context() {
    let method = ExtensionMethod::new("app/db", |_: Value, ctx: Context| async move {
        let db = ctx.state::<Db>().map_or("none", |db| db.0);
        Ok(MethodResult::complete(json!({"db": db})))
    })
    .open_to_all_clients();
    let catalog = Catalog::new();
    catalog
        .add_tool(RuntimeTool::new(
            "runtime_db",
            |_: NoArguments, ctx: Context| async move {
                ctx.state::<Db>().map_or("none", |db| db.0).to_owned()
            },
        ))
        .unwrap();
    let server = states()
        .with(Extension::new("com.example/app").method(method))
        .catalog(&catalog)
        .build()
        .unwrap();
    let answer = server.exchange(request(1, "app/db", json!({}))).await;
    let answer = parse(answer.response.as_deref().unwrap());
    assert_eq!(answer["result"]["db"], "main");
    assert_eq!(text(&call(&server, "runtime_db", json!({})).await), "main");
}

#[test]
fn a_missing_state_stops_the_build_naming_the_handler_and_the_type() {
    let error = ServerBuilder::new("app-state", "1.0.0")
        .state(Db("main"))
        .build()
        .unwrap_err();
    let BuildError::MissingState {
        kind, name, state, ..
    } = &error
    else {
        panic!("not a missing state: {error}");
    };
    assert_eq!((*kind, name.as_str()), ("tool", "greet"));
    assert_eq!(*state, "app_state::Config");
    let message = error.to_string();
    assert!(
        message.starts_with("tool `greet` (at mcp-runtime/tests/app_state.rs:"),
        "{message}"
    );
    assert!(
        message.ends_with(
            "takes the state `app_state::Config`, which this server was not given; add it with \
             `ServerBuilder::state(...)` or in the start-up hook (it has: app_state::Db)"
        ),
        "{message}"
    );
    // A server that does not serve the items that need it builds.
    let only_db = ServerBuilder::new("app-state", "1.0.0")
        .state(Db("main"))
        .items(
            Items::tool("which_db").with(Items::group("admin").without(Items::prompt("greeting"))),
        );
    assert!(only_db.build().is_ok());
}

#[tokio::test]
async fn items_select_groups_and_names() {
    let public = states().items(Items::ungrouped()).build().unwrap();
    assert_eq!(tool_names(&public).await, ["db_task", "greet", "which_db"]);
    let called = call(&public, "drop_table", json!({"table": "t"})).await;
    assert_eq!(called["error"]["code"], -32602);
    let admin = states().items(Items::group("admin")).build().unwrap();
    assert_eq!(tool_names(&admin).await, ["drop_table"]);
    let error = states().items(Items::group("admins")).build().unwrap_err();
    assert_eq!(
        error.to_string(),
        "items: `Items::group(admins)` matches no linked item (groups linked: admin)"
    );
    let by_module = states().items(Items::module("app_state")).build().unwrap();
    assert_eq!(
        tool_names(&by_module).await,
        ["db_task", "drop_table", "greet", "which_db"]
    );
}

#[tokio::test]
async fn the_start_up_hook_builds_states_and_the_shutdown_hook_runs_once() {
    let closed = Arc::new(AtomicUsize::new(0));
    let counter = closed.clone();
    let builder = ServerBuilder::new("app-state", "1.0.0")
        .state(Config {
            greeting: "hi".into(),
        })
        .on_startup(|startup| async move {
            tokio::task::yield_now().await;
            assert_eq!(startup.transport(), &mcp_runtime::Launched::Embedded);
            Ok::<_, std::io::Error>(startup.state(Db("started")))
        })
        .on_shutdown(move |states| {
            let counter = counter.clone();
            async move {
                assert_eq!(states.get::<Db>().map(|db| db.0), Some("started"));
                counter.fetch_add(1, Ordering::SeqCst);
            }
        });
    let refused = builder.clone().build().unwrap_err();
    assert!(
        refused
            .to_string()
            .starts_with("start-up: this server has a start-up hook"),
        "{refused}"
    );
    let server = builder.start().await.unwrap();
    let greeted = call(&server, "greet", json!({"name": "cy"})).await;
    assert_eq!(text(&greeted), "hi cy from started");
    server.clone().stop().await;
    server.stop().await;
    assert_eq!(closed.load(Ordering::SeqCst), 1);

    let failing = ServerBuilder::new("app-state", "1.0.0").on_startup(|_| async {
        Err::<mcp_runtime::Startup, _>(std::io::Error::other("database unreachable"))
    });
    assert_eq!(
        failing.start().await.unwrap_err().to_string(),
        "start-up: database unreachable"
    );
}

#[cfg(feature = "http")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_servers_with_their_own_items_and_states_on_one_router() {
    use mcp_runtime::HttpOptions;
    use mcp_test_support::http;

    let public = states()
        .items(Items::ungrouped())
        .build()
        .unwrap()
        .http_service(HttpOptions::new().workers(1))
        .unwrap();
    let admin = ServerBuilder::new("admin", "1.0.0")
        .state(Db("admin-db"))
        .items(Items::group("admin").without(Items::prompt("greeting")))
        .build()
        .unwrap()
        .http_service(HttpOptions::new().workers(1).path("/admin/mcp"))
        .unwrap();
    let app = axum::Router::new()
        .route_service("/mcp", public)
        .route_service("/admin/mcp", admin);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });

    let post = |path: &'static str, message: String| async move {
        let headers = http::mcp_headers(&message);
        http::request(address, "POST", path, &headers, message)
            .await
            .json()
    };
    let names = |listed: Value| -> Vec<Value> {
        assert_valid_response("ListToolsResultResponse", &listed);
        let tools = listed["result"]["tools"].as_array().unwrap();
        tools.iter().map(|t| t["name"].clone()).collect()
    };
    let public_tools = names(post("/mcp", request(1, "tools/list", json!({}))).await);
    assert_eq!(public_tools, ["db_task", "greet", "which_db"]);
    let admin_tools = names(post("/admin/mcp", request(1, "tools/list", json!({}))).await);
    assert_eq!(admin_tools, ["drop_table"]);
    let public_db = post("/mcp", call_tool(2, "which_db", json!({}))).await;
    assert_eq!(public_db["result"]["content"][0]["text"], "main");
    let dropped = post(
        "/admin/mcp",
        call_tool(2, "drop_table", json!({"table": "t"})),
    )
    .await;
    assert_eq!(
        dropped["result"]["content"][0]["text"],
        "dropped t on admin-db"
    );
}

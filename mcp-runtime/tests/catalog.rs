//! Runtime catalogs, in process and over stdio: tools, prompts, resources
//! and providers added and removed while the server runs, called through
//! the same paths as static items (context, asks, error mapping), listed
//! with them in one sorted, paginated list, colliding names refused, and
//! every change announced. Every message is checked against the schema.

use std::sync::{Arc, Mutex};

use mcp_runtime::catalog::{
    Catalog, CatalogError, Kind, NoArguments, ResourceFuture, ResourceProvider, RuntimePrompt,
    RuntimeResource, RuntimeTool,
};
use mcp_runtime::protocol::{Resource, ToolAnnotations};
use mcp_runtime::{
    CacheHint, CacheScope, Context, ElicitForm, Elicitation, FromContext, Input, Json,
    ReadResourceResult, ResourceContents, Server, ServerBuilder, StdioOptions, prompt, resource,
    tool,
};
use mcp_test_support::stdio::InMemory;
use mcp_test_support::{assert_valid, assert_valid_notification, meta_with, parse, request};
use serde_json::{Value, json};

/// A static tool: runtime tools sort around it.
#[tool(annotations(read_only))]
fn m_static() -> &'static str {
    "static"
}

/// A static prompt.
#[prompt]
fn p_static() -> &'static str {
    "static prompt"
}

/// A static resource.
#[resource("mem://b-static", mime_type = "text/plain")]
fn b_static() -> &'static str {
    "static resource"
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Sum {
    /// The first addend.
    a: i64,
    /// The second addend.
    b: i64,
}

#[derive(serde::Serialize, schemars::JsonSchema)]
struct Total {
    total: i64,
}

#[derive(serde::Deserialize, schemars::JsonSchema, ElicitForm)]
struct Confirm {
    sure: bool,
}

fn add_tool() -> RuntimeTool {
    RuntimeTool::new("add", |args: Sum, _ctx: Context| async move {
        Json(Total {
            total: args.a + args.b,
        })
    })
    .description("Adds two integers")
    .annotations(ToolAnnotations::new().read_only(true))
}

/// A runtime tool that asks, inline, through the same `Input` as a
/// `#[tool]`.
fn confirm_tool() -> RuntimeTool {
    RuntimeTool::new("confirm", |_: NoArguments, ctx: Context| async move {
        let input = Input::from_context(&ctx);
        match input.elicit::<Confirm>("Sure?").await {
            Elicitation::Accepted(Confirm { sure }) => Ok(format!("sure: {sure}")),
            _ => Err("not confirmed"),
        }
    })
}

fn server(catalog: &Catalog) -> Server {
    ServerBuilder::new("catalog", "1.0.0")
        .page_size(2)
        .catalog(catalog)
        .build()
        .unwrap()
}

async fn send(server: &Server, message: String, definition: &str) -> Value {
    let response = parse(&server.exchange(message).await.response.unwrap());
    assert_valid(definition, &response);
    response
}

/// Every item of a list, page after page, as `key` names them.
async fn list_all(server: &Server, method: &str, member: &str, key: &str) -> Vec<String> {
    let definition = match method {
        "tools/list" => "ListToolsResultResponse",
        "prompts/list" => "ListPromptsResultResponse",
        _ => "ListResourcesResultResponse",
    };
    let mut names = Vec::new();
    let mut cursor = None::<String>;
    loop {
        let params = cursor.map_or_else(|| json!({}), |c| json!({"cursor": c}));
        let page = send(server, request(1, method, params), definition).await;
        let items = page["result"][member].as_array().unwrap().clone();
        assert!(items.len() <= 2, "pages of 2");
        names.extend(items.iter().map(|i| i[key].as_str().unwrap().to_owned()));
        match page["result"]["nextCursor"].as_str() {
            Some(next) => cursor = Some(next.to_owned()),
            None => return names,
        }
    }
}

fn call(id: u32, name: &str, arguments: Value) -> String {
    request(
        id,
        "tools/call",
        json!({"name": name, "arguments": arguments}),
    )
}

#[tokio::test]
async fn runtime_tools_are_listed_with_static_ones_and_called_the_same_way() {
    let catalog = Catalog::new();
    catalog.add_tool(add_tool()).unwrap();
    let server = server(&catalog);
    catalog.add_tool(confirm_tool()).unwrap();
    catalog
        .add_tool(RuntimeTool::new("zz", |_: NoArguments, _ctx| async { "z" }))
        .unwrap();
    // One sorted list across pages: add, confirm, m_static, zz.
    assert_eq!(
        list_all(&server, "tools/list", "tools", "name").await,
        ["add", "confirm", "m_static", "zz"]
    );
    let listed = send(
        &server,
        request(1, "tools/list", json!({})),
        "ListToolsResultResponse",
    )
    .await;
    let add = &listed["result"]["tools"][0];
    assert_eq!(add["description"], "Adds two integers");
    assert_eq!(add["inputSchema"]["required"], json!(["a", "b"]));
    assert_eq!(
        add["outputSchema"]["properties"]["total"]["type"],
        "integer"
    );
    // Called like a #[tool]: structured output, argument errors naming
    // the field, error results, asks.
    let sum = send(
        &server,
        call(2, "add", json!({"a": 2, "b": 40})),
        "CallToolResultResponse",
    )
    .await;
    assert_eq!(sum["result"]["structuredContent"], json!({"total": 42}));
    let bad = send(
        &server,
        call(3, "add", json!({"a": 2})),
        "CallToolResultResponse",
    )
    .await;
    assert_eq!(bad["result"]["isError"], true);
    assert_eq!(
        bad["result"]["content"][0]["text"],
        "Invalid arguments for tool add: missing field `b`"
    );
    let asking = request(
        4,
        "tools/call",
        json!({"name": "confirm", "_meta": meta_with(json!({"elicitation": {}}))}),
    );
    let round = send(&server, asking, "CallToolResultResponse").await;
    assert_eq!(round["result"]["resultType"], "input_required");
    let requests = round["result"]["inputRequests"].as_object().unwrap();
    let (key, asked) = requests.iter().next().unwrap();
    assert_eq!(asked["params"]["message"], "Sure?");
    let state = round["result"]["requestState"].as_str().unwrap();
    let answer = request(
        5,
        "tools/call",
        json!({"name": "confirm", "requestState": state,
               "inputResponses": {key: {"action": "accept", "content": {"sure": true}}},
               "_meta": meta_with(json!({"elicitation": {}}))}),
    );
    let done = send(&server, answer, "CallToolResultResponse").await;
    assert_eq!(done["result"]["content"][0]["text"], "sure: true");
    // Removed: gone from the list and from calls.
    assert!(catalog.remove_tool("add"));
    assert!(!catalog.remove_tool("add"));
    let gone = send(
        &server,
        call(6, "add", json!({"a": 1, "b": 1})),
        "JSONRPCErrorResponse",
    )
    .await;
    assert_eq!(gone["error"]["message"], "Unknown tool: add");
}

#[tokio::test]
async fn collisions_with_static_or_runtime_names_are_errors_when_they_happen() {
    let catalog = Catalog::new();
    catalog.add_tool(add_tool()).unwrap();
    assert_eq!(
        catalog.add_tool(add_tool()).unwrap_err().to_string(),
        "tool `add` already exists (a runtime tool); remove it first or pick another name"
    );
    // Before the server is built, a static name is checked at build.
    catalog
        .add_tool(RuntimeTool::new("m_static", |_: NoArguments, _ctx| async {
            "x"
        }))
        .unwrap();
    let error = ServerBuilder::new("c", "1")
        .catalog(&catalog)
        .build()
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "catalog: tool `m_static` already exists (a #[tool]); remove it first or pick another name"
    );
    catalog.remove_tool("m_static");
    let server = ServerBuilder::new("c", "1")
        .catalog(&catalog)
        .build()
        .unwrap();
    // After, at once.
    let clash = RuntimeTool::new("m_static", |_: NoArguments, _ctx| async { "x" });
    assert!(matches!(
        catalog.add_tool(clash),
        Err(CatalogError::Duplicate { kind: "tool", .. })
    ));
    let prompt = RuntimePrompt::new("p_static", |_, _ctx| async { "x" });
    assert!(catalog.add_prompt(prompt).is_err());
    let resource = RuntimeResource::new(Resource::new("mem://b-static", "b"), |_| async { "x" });
    assert!(catalog.add_resource(resource).is_err());
    // Rules a static item would be held to.
    let named = RuntimeTool::new("bad name", |_: NoArguments, _ctx| async { "x" });
    assert!(matches!(
        catalog.add_tool(named),
        Err(CatalogError::Invalid { .. })
    ));
    let scoped = RuntimeTool::new("scoped", |_: NoArguments, _ctx| async { "x" }).scopes(["a b"]);
    assert_eq!(
        catalog.add_tool(scoped).unwrap_err().to_string(),
        "`scoped`: `a b` is not an OAuth scope (RFC 6749 scope-token)"
    );
    // A catalog serves one server.
    let again = ServerBuilder::new("c", "1")
        .catalog(&catalog)
        .build()
        .unwrap_err();
    assert!(
        again.to_string().contains("already serves another server"),
        "{again}"
    );
    // A catalog of resources only refuses tools, and the server offers
    // no tools for it.
    let resources = Catalog::of([Kind::Resources]);
    assert_eq!(
        resources.add_tool(add_tool()).unwrap_err(),
        CatalogError::NotServed(Kind::Tools)
    );
    drop(server);
}

#[tokio::test]
async fn static_pages_are_untouched_until_a_runtime_item_of_their_kind_exists() {
    let plain = ServerBuilder::new("catalog", "1.0.0")
        .page_size(2)
        .build()
        .unwrap();
    let catalog = Catalog::new();
    let with_catalog = server(&catalog);
    let list = || request(1, "tools/list", json!({}));
    let before = with_catalog.exchange(list()).await.response;
    assert_eq!(before, plain.exchange(list()).await.response);
    catalog.add_tool(add_tool()).unwrap();
    assert_ne!(with_catalog.exchange(list()).await.response, before);
    catalog.remove_tool("add");
    assert_eq!(with_catalog.exchange(list()).await.response, before);
}

#[tokio::test]
async fn a_cursor_from_before_a_change_is_invalid() {
    let catalog = Catalog::new();
    let server = server(&catalog);
    catalog.add_tool(add_tool()).unwrap();
    catalog
        .add_tool(RuntimeTool::new("zz", |_: NoArguments, _ctx| async { "z" }))
        .unwrap();
    let first = send(
        &server,
        request(1, "tools/list", json!({})),
        "ListToolsResultResponse",
    )
    .await;
    let cursor = first["result"]["nextCursor"].as_str().unwrap().to_owned();
    catalog.add_tool(confirm_tool()).unwrap();
    let stale = send(
        &server,
        request(2, "tools/list", json!({"cursor": cursor})),
        "JSONRPCErrorResponse",
    )
    .await;
    assert_eq!(stale["error"]["code"], -32602);
}

#[tokio::test]
async fn runtime_prompts_and_resources() {
    let catalog = Catalog::new();
    let server = server(&catalog);
    let review = RuntimePrompt::new("review", |args, _ctx| async move {
        format!("Review {}.", args["topic"])
    })
    .argument("topic", "What to review", true)
    .description("Asks for a review");
    catalog.add_prompt(review).unwrap();
    #[derive(serde::Deserialize, schemars::JsonSchema)]
    struct Greeting {
        /// Who to greet.
        name: String,
        /// How.
        tone: Option<String>,
    }
    let greet = RuntimePrompt::typed("greet", |g: Greeting, _ctx| async move {
        format!(
            "Greet {} {}",
            g.name,
            g.tone.unwrap_or_else(|| "warmly".into())
        )
    });
    catalog.add_prompt(greet).unwrap();
    assert_eq!(
        list_all(&server, "prompts/list", "prompts", "name").await,
        ["greet", "p_static", "review"]
    );
    let prompts = send(
        &server,
        request(1, "prompts/list", json!({})),
        "ListPromptsResultResponse",
    )
    .await;
    assert_eq!(
        prompts["result"]["prompts"][0]["arguments"],
        json!([{"name": "name", "description": "Who to greet.", "required": true},
               {"name": "tone", "description": "How."}])
    );
    let got = send(
        &server,
        request(
            2,
            "prompts/get",
            json!({"name": "review", "arguments": {"topic": "the plan"}}),
        ),
        "GetPromptResultResponse",
    )
    .await;
    assert_eq!(
        got["result"]["messages"][0]["content"]["text"],
        "Review the plan."
    );
    let missing = send(
        &server,
        request(3, "prompts/get", json!({"name": "review"})),
        "JSONRPCErrorResponse",
    )
    .await;
    assert_eq!(
        missing["error"]["message"],
        "Missing required argument `topic` for prompt review"
    );
    let typed = send(
        &server,
        request(
            4,
            "prompts/get",
            json!({"name": "greet", "arguments": {"name": "Ada"}}),
        ),
        "GetPromptResultResponse",
    )
    .await;
    assert_eq!(
        typed["result"]["messages"][0]["content"]["text"],
        "Greet Ada warmly"
    );

    let notes = RuntimeResource::new(
        Resource::new("mem://a-note", "note").mime_type("text/plain"),
        |_ctx| async { "a note" },
    )
    .cache(CacheHint::new(1000, CacheScope::Public));
    catalog.add_resource(notes).unwrap();
    assert_eq!(
        list_all(&server, "resources/list", "resources", "uri").await,
        ["mem://a-note", "mem://b-static"]
    );
    let read = send(
        &server,
        request(5, "resources/read", json!({"uri": "mem://a-note"})),
        "ReadResourceResultResponse",
    )
    .await;
    assert_eq!(
        (
            &read["result"]["contents"][0],
            &read["result"]["ttlMs"],
            &read["result"]["cacheScope"]
        ),
        (
            &json!({"uri": "mem://a-note", "mimeType": "text/plain", "text": "a note"}),
            &json!(1000),
            &json!("public")
        )
    );
}

/// Files in memory: a provider whose collection changes.
#[derive(Clone, Default)]
struct Memory(Arc<Mutex<Vec<(String, String)>>>);

impl ResourceProvider for Memory {
    fn list(&self) -> Vec<Resource> {
        let files = self.0.lock().unwrap();
        files
            .iter()
            .map(|(name, _)| {
                Resource::new(format!("mem://files/{name}"), name.clone()).mime_type("text/plain")
            })
            .collect()
    }

    fn read(&self, uri: &str, _context: Context) -> ResourceFuture {
        let files = self.0.lock().unwrap();
        let found = files
            .iter()
            .find(|(name, _)| uri.ends_with(&format!("/{name}")));
        let result = found
            .map(|(_, text)| ReadResourceResult::new([ResourceContents::text(uri, text.clone())]));
        Box::pin(async move { result.ok_or(mcp_runtime::ReadError::NotFound) })
    }
}

#[tokio::test]
async fn a_provider_lists_reads_and_refreshes() {
    let catalog = Catalog::of([Kind::Resources]);
    let files = Memory::default();
    files.0.lock().unwrap().push(("one.txt".into(), "1".into()));
    let handle = catalog
        .add_provider("memory", files.clone(), ["files:read"])
        .unwrap();
    let server = ServerBuilder::new("catalog", "1.0.0")
        .page_size(2)
        .catalog(&catalog)
        .build()
        .unwrap();
    // Resources only: no tools or prompts are offered for this catalog.
    let discover = send(
        &server,
        request(1, "server/discover", json!({})),
        "DiscoverResultResponse",
    )
    .await;
    let capabilities = &discover["result"]["capabilities"];
    assert_eq!(capabilities["resources"], json!({"listChanged": true}));
    // The static tools and prompts, without `listChanged`.
    assert_eq!(capabilities["tools"], json!({}));
    assert_eq!(capabilities["prompts"], json!({}));
    let read = send(
        &server,
        request(2, "resources/read", json!({"uri": "mem://files/one.txt"})),
        "ReadResourceResultResponse",
    )
    .await;
    assert_eq!(read["result"]["contents"][0]["text"], "1");
    files.0.lock().unwrap().push(("two.txt".into(), "2".into()));
    handle.refresh().unwrap();
    assert_eq!(
        list_all(&server, "resources/list", "resources", "uri").await,
        [
            "mem://b-static",
            "mem://files/one.txt",
            "mem://files/two.txt"
        ]
    );
    assert!(handle.remove());
    assert_eq!(
        list_all(&server, "resources/list", "resources", "uri").await,
        ["mem://b-static"]
    );
}

#[tokio::test]
async fn changes_are_announced_to_subscriptions_on_stdio() {
    let catalog = Catalog::new();
    let server = server(&catalog);
    let (mut client, (server_read, server_write)) = InMemory::pair();
    let serve = server.serve_streams(StdioOptions::new(), server_read, server_write);
    let script = async move {
        // The builder did not ask for list changes: the catalog's kinds
        // are offered anyway.
        let listen = request(
            9,
            "subscriptions/listen",
            json!({"notifications": {"toolsListChanged": true, "promptsListChanged": true, "resourcesListChanged": true}}),
        );
        client.send(&listen).await;
        let ack = client.receive().await;
        assert_valid_notification(&ack);
        assert_eq!(
            ack["params"]["notifications"],
            json!({"toolsListChanged": true, "promptsListChanged": true, "resourcesListChanged": true})
        );
        catalog.add_tool(add_tool()).unwrap();
        catalog.remove_tool("add");
        catalog
            .add_prompt(RuntimePrompt::new("p", |_, _ctx| async { "p" }))
            .unwrap();
        let resource = RuntimeResource::new(Resource::new("mem://x", "x"), |_| async { "x" });
        catalog.add_resource(resource).unwrap();
        for method in [
            "notifications/tools/list_changed",
            "notifications/tools/list_changed",
            "notifications/prompts/list_changed",
            "notifications/resources/list_changed",
        ] {
            let note = client.receive().await;
            assert_valid_notification(&note);
            assert_eq!(note["method"], method);
            assert_eq!(
                note["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
                9
            );
        }
        client.close().await;
        assert_eq!(client.receive().await["method"], "notifications/cancelled");
    };
    let (served, ()) = tokio::join!(serve, script);
    served.unwrap();
}

#[cfg(feature = "client")]
#[tokio::test]
async fn the_contract_lock_covers_static_items_only_and_says_so() {
    let catalog = Catalog::new();
    let server = server(&catalog);
    catalog.add_tool(add_tool()).unwrap();
    let resource = RuntimeResource::new(Resource::new("mem://a-note", "note"), |_| async { "x" });
    catalog.add_resource(resource).unwrap();
    let manifest = mcp_runtime::contract::manifest(&server).await.unwrap();
    let keys = |section: &str| -> Vec<String> {
        manifest[section]
            .as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect()
    };
    assert_eq!(keys("tools"), ["m_static"]);
    assert_eq!(keys("resources"), ["mem://b-static"]);
    assert_eq!(keys("prompts"), ["p_static"]);
    assert!(
        manifest["runtimeItems"]
            .as_str()
            .unwrap()
            .starts_with("not covered: this lock records the static items only")
    );
    // The same through a client (what the inspector's `contract` prints
    // for another server): everything listed.
    let mut client = mcp_runtime::testing::TestClient::with_server(server);
    let listed: Vec<String> = client
        .list_tools()
        .await
        .into_iter()
        .map(|t| t.name)
        .collect();
    assert_eq!(listed, ["add", "m_static"]);
}

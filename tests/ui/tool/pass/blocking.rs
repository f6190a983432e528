//! `blocking` on each kind of item: a synchronous body, any context
//! parameter (borrowed ones borrow the context on the pool), arguments,
//! and the other options.

use mcp_runtime::{
    CancellationToken, ClientCapabilities, Context, FromContext, Implementation, Input, Logger, Progress,
    RequestMeta, RequestSource, State, prompt, resource, tool,
};

#[derive(Clone)]
struct Pool;

/// A context parameter that cannot leave its thread: it is made on the
/// pool, from the context that moved there.
struct Local(std::rc::Rc<String>);

impl FromContext<'_> for Local {
    fn from_context(ctx: &Context) -> Self {
        Local(std::rc::Rc::new(ctx.method().to_owned()))
    }
}

/// Takes every kind of context parameter, on the blocking pool.
#[tool(blocking, timeout_ms = 5000, annotations(read_only))]
#[allow(clippy::too_many_arguments)]
fn everything(
    #[ctx] ctx_ref: &Context,
    before: String,
    #[ctx] ctx_owned: Context,
    #[ctx] progress: Progress,
    #[ctx] logger: Logger,
    #[ctx] cancel: CancellationToken,
    #[ctx] meta: &RequestMeta,
    #[ctx] capabilities: &ClientCapabilities,
    #[ctx] client: Option<&Implementation>,
    #[ctx] source: &RequestSource,
    #[ctx] input: Input,
    #[ctx] pool: State<Pool>,
    #[ctx] local: Local,
    after: Option<u8>,
) -> Result<String, String> {
    progress.report(1.0);
    logger.info("working");
    std::thread::sleep(std::time::Duration::from_millis(1));
    let _ = (meta, capabilities, client, source, input, &ctx_owned, pool, local.0);
    Ok(format!("{before} {after:?} {} {}", cancel.is_cancelled(), ctx_ref.method()))
}

/// A template read on the pool.
#[resource("memo://notes/{id}", blocking, mime_type = "text/plain")]
fn note(id: u32, #[ctx] ctx: &Context) -> String {
    format!("note {id} for {}", ctx.method())
}

/// A prompt rendered on the pool.
#[prompt(blocking)]
fn greet(name: String) -> String {
    format!("Hello, {name}")
}

/// `blocking` is the default's opposite only for sync fns: this one stays
/// on the worker.
#[tool]
fn quick() -> &'static str {
    "quick"
}

fn main() {
    mcp_runtime::server!()
        .state(Pool)
        .build()
        .expect("the blocking items build");
}

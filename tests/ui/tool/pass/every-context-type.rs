use mcp_runtime::{
    CancellationToken, ClientCapabilities, Context, Implementation, Logger, Progress, RequestMeta,
    State, tool,
};

#[derive(Clone)]
struct Pool;

/// Takes every kind of context parameter, mixed with arguments.
#[tool]
#[allow(clippy::too_many_arguments)]
async fn everything(
    #[ctx] ctx_ref: &Context,
    before: String,
    #[ctx] ctx_owned: Context,
    #[ctx] progress: Progress,
    #[ctx] logger: Logger,
    #[ctx] cancel: CancellationToken,
    #[ctx] meta: &RequestMeta,
    #[ctx] capabilities: &ClientCapabilities,
    #[ctx] client: Option<&Implementation>,
    #[ctx] pool: State<Pool>,
    #[ctx] shared: State<std::sync::Arc<String>>,
    after: u8,
) -> String {
    progress.report(1.0);
    logger.info("working");
    let _ = (meta, capabilities, client, &ctx_owned, pool, shared);
    ctx_ref.cancelled().await;
    format!("{before} {after} {}", cancel.is_cancelled())
}

/// Context through a fully qualified path.
#[tool]
fn qualified(#[ctx] ctx: &mcp_runtime::Context) -> String {
    ctx.method().to_owned()
}

fn main() {}

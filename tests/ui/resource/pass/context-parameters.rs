use mcp_runtime::{
    CancellationToken, ClientCapabilities, Context, HttpRequest, Implementation, Logger, Progress,
    RequestMeta, resource,
};

/// Takes every kind of context parameter, mixed with template variables.
#[resource("memo://{user}/notes/{id}")]
#[allow(clippy::too_many_arguments)]
async fn everything(
    #[ctx] ctx_ref: &Context,
    user: String,
    #[ctx] ctx_owned: Context,
    #[ctx] progress: Progress,
    #[ctx] logger: Logger,
    #[ctx] cancel: CancellationToken,
    #[ctx] meta: &RequestMeta,
    #[ctx] capabilities: &ClientCapabilities,
    #[ctx] client: Option<&Implementation>,
    #[ctx] http: Option<&HttpRequest>,
    id: u64,
) -> String {
    progress.report(1.0);
    logger.info("reading");
    let _ = (meta, capabilities, client, http, &ctx_owned);
    ctx_ref.cancelled().await;
    format!("{user} {id} {}", cancel.is_cancelled())
}

/// A static resource may take context parameters.
#[resource("memo://whoami")]
fn whoami(#[ctx] client: Option<&Implementation>) -> String {
    client.map(|c| c.name.clone()).unwrap_or_default()
}

/// Context through a fully qualified path.
#[resource("memo://method")]
fn qualified(#[ctx] ctx: &mcp_runtime::Context) -> String {
    ctx.method().to_owned()
}

fn main() {}

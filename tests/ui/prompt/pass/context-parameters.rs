use mcp_runtime::{
    CancellationToken, ClientCapabilities, Context, HttpRequest, Implementation, Logger, Progress,
    RequestMeta, prompt,
};

/// Takes every kind of context parameter, mixed with arguments.
#[prompt]
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
    #[ctx] http: Option<&HttpRequest>,
    after: Option<u8>,
) -> String {
    progress.report(1.0);
    logger.info("rendering");
    let _ = (meta, capabilities, client, http, &ctx_owned);
    ctx_ref.cancelled().await;
    format!("{before} {after:?} {}", cancel.is_cancelled())
}

/// Only context.
#[prompt]
fn method(#[ctx] ctx: &mcp_runtime::Context) -> String {
    ctx.method().to_owned()
}

fn main() {}

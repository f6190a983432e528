//! Running synchronous code on tokio's blocking pool: what
//! `#[tool(blocking)]`, `#[resource(..., blocking)]` and
//! `#[prompt(blocking)]` generate, and what an async handler calls for a
//! blocking step of its own.

/// Runs `body` on tokio's blocking thread pool and waits for its result,
/// so that a handler that blocks its thread (file or database I/O, a
/// long computation, a call into a blocking library) holds a pool thread
/// and not one of the threads that serve every request.
///
/// The request's timeout and cancellation still apply to the future this
/// returns: when it is dropped, the request is answered at once. The
/// blocking thread cannot be stopped, though: `body` runs to completion in
/// the background and its result is dropped. A body that may block
/// forever (a FIFO opened for writing, a lock never released) holds a
/// pool thread forever; give such calls a bound of their own.
///
/// The pool is tokio's: up to 512 threads per runtime by default, and
/// calls past that wait for a free thread. A panic in `body` is resumed
/// here, on the request's task, so it is reported as any handler's panic.
///
/// ```no_run
/// # async fn example() -> std::io::Result<()> {
/// let text = mcp_runtime::run_blocking(|| std::fs::read_to_string("notes.md")).await?;
/// # Ok(()) }
/// ```
pub async fn run_blocking<R, F>(body: F) -> R
where
    F: FnOnce() -> R + Send + 'static,
    R: Send + 'static,
{
    // The request's span (its id, method and item) follows the body.
    let span = tracing::Span::current();
    match tokio::task::spawn_blocking(move || span.in_scope(body)).await {
        Ok(value) => value,
        Err(error) => match error.try_into_panic() {
            Ok(panic) => std::panic::resume_unwind(panic),
            // Only when the runtime shuts down before the body starts.
            Err(_) => panic!("the runtime shut down before the blocking body ran"),
        },
    }
}

/// How long a synchronous handler may hold a request thread before a debug
/// build warns.
#[cfg(debug_assertions)]
const HOLD_WARNING: std::time::Duration = std::time::Duration::from_millis(100);

/// Calls the body of a synchronous handler that is not `blocking`, on the
/// request's thread. In debug builds, a body that held the thread more
/// than 100 ms is logged (a warning naming the handler): every request that
/// thread serves waited for it, and `blocking` would have moved it to the
/// pool. Release builds call the body and nothing else.
pub fn on_request_thread<R>(
    attribute: &'static str,
    name: &'static str,
    body: impl FnOnce() -> R,
) -> R {
    #[cfg(debug_assertions)]
    {
        let started = std::time::Instant::now();
        let value = body();
        let held = started.elapsed();
        if held > HOLD_WARNING {
            tracing::warn!(
                "the synchronous {attribute} `{name}` held a request thread for {} ms, and every request that thread serves waited: add `blocking` to run it on the blocking pool (debug builds only)",
                held.as_millis()
            );
        }
        value
    }
    #[cfg(not(debug_assertions))]
    {
        let _ = (attribute, name);
        body()
    }
}

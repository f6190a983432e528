//! SIGINT and SIGTERM: how `run()` is asked to stop, on every transport.

use std::io;

/// SIGINT and SIGTERM, listened for from the moment they are installed
/// (installing needs a runtime context; waiting can happen later).
pub(crate) struct ShutdownSignals {
    #[cfg(unix)]
    interrupt: tokio::signal::unix::Signal,
    #[cfg(unix)]
    terminate: tokio::signal::unix::Signal,
}

impl ShutdownSignals {
    pub(crate) fn install() -> io::Result<ShutdownSignals> {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            Ok(ShutdownSignals {
                interrupt: signal(SignalKind::interrupt())?,
                terminate: signal(SignalKind::terminate())?,
            })
        }
        #[cfg(not(unix))]
        Ok(ShutdownSignals {})
    }

    /// Waits for either signal, then says what happens next (`then`).
    pub(crate) async fn received(mut self, then: &str) {
        #[cfg(unix)]
        tokio::select! {
            _ = self.interrupt.recv() => {}
            _ = self.terminate.recv() => {}
        }
        #[cfg(not(unix))]
        {
            let _ = &mut self;
            let _ = tokio::signal::ctrl_c().await;
        }
        tracing::info!("shutting down: {then}");
    }
}

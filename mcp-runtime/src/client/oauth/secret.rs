//! Secrets the client reads for a grant: a private key's PEM, a
//! workload's identity token; given inline or as a file.

use std::path::PathBuf;

use crate::client::transport::TransportError;

/// A secret the client holds: a private key's PEM, or a workload's JWT.
/// Given inline, or as a file read (off the async runtime) each time it is
/// needed, since platforms rotate such files in place.
#[derive(Clone)]
pub(crate) enum SecretSource {
    Inline(String),
    File(PathBuf),
}

/// Without the secret: a debug print must not leak it.
impl std::fmt::Debug for SecretSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SecretSource::Inline(_) => f.write_str("<redacted>"),
            SecretSource::File(path) => write!(f, "File({})", path.display()),
        }
    }
}

impl SecretSource {
    /// The secret now, read from its file if it is in one.
    pub(crate) async fn read(&self, what: &str) -> Result<String, TransportError> {
        let path = match self {
            SecretSource::Inline(secret) => return Ok(secret.clone()),
            SecretSource::File(path) => path.clone(),
        };
        let shown = path.display().to_string();
        let read = tokio::task::spawn_blocking(move || std::fs::read_to_string(&path)).await;
        match read {
            Ok(Ok(secret)) => Ok(secret),
            Ok(Err(error)) => Err(TransportError::new(format!(
                "{what} {shown} cannot be read: {error}"
            ))),
            Err(failed) => Err(TransportError::new(format!(
                "reading {what} {shown} failed: {failed}"
            ))),
        }
    }
}

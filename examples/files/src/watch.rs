//! Changes on disk, announced: a file created or removed changes the
//! listing (`notifications/resources/list_changed`), a file written is
//! updated (`notifications/resources/updated`, to subscriptions that watch
//! its URI, or the `file:///{+path}` template).

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use mcp_runtime::catalog::ProviderHandle;
use mcp_runtime::files::file_uri;
use notify::{EventKind, RecursiveMode, Watcher as _};

use super::Files;

/// How long events are gathered before the listing is refreshed: an
/// editor's save or a `git checkout` is many events, and one refresh.
const SETTLE: Duration = Duration::from_millis(100);

/// Watches the served directory until the returned watcher is dropped.
pub fn watch(files: Files, provider: ProviderHandle) -> notify::Result<notify::RecommendedWatcher> {
    let (events, received) = mpsc::channel();
    let mut watcher = notify::recommended_watcher(move |event| {
        let _ = events.send(event);
    })?;
    watcher.watch(files.root(), RecursiveMode::Recursive)?;
    std::thread::Builder::new()
        .name("files-watch".into())
        .spawn(move || announce(&files, &provider, &received))
        .map_err(notify::Error::io)?;
    Ok(watcher)
}

/// Gathers events, then refreshes the listing and announces the files
/// that were written; ends when the watcher is dropped.
fn announce(
    files: &Files,
    provider: &ProviderHandle,
    received: &mpsc::Receiver<notify::Result<notify::Event>>,
) {
    while let Ok(first) = received.recv() {
        let mut written = BTreeSet::new();
        let mut note = |event: notify::Result<notify::Event>| match event {
            Ok(event) if matches!(event.kind, EventKind::Create(_) | EventKind::Modify(_)) => {
                written.extend(event.paths);
            }
            Ok(_) => {}
            Err(error) => eprintln!("files: watching {}: {error}", files.root().display()),
        };
        note(first);
        let until = Instant::now() + SETTLE;
        while let Some(left) = until.checked_duration_since(Instant::now()) {
            match received.recv_timeout(left) {
                Ok(event) => note(event),
                Err(_) => break,
            }
        }
        if let Err(error) = provider.refresh() {
            eprintln!("files: cannot list {}: {error}", files.root().display());
        }
        for path in written.into_iter().filter(|p| is_served_file(files, p)) {
            provider.updated(file_uri(&path));
        }
    }
}

/// A regular file (not a link) under the served directory.
fn is_served_file(files: &Files, path: &PathBuf) -> bool {
    path.starts_with(files.root())
        && std::fs::symlink_metadata(path).is_ok_and(|meta| meta.file_type().is_file())
}

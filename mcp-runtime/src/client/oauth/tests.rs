//! The token cache file against the attacks of an adversarial review: a
//! file others can read, a planted symbolic link, a file that is not a
//! cache, concurrent runs, and a crash in the middle of a write. Each test
//! uses a real temporary directory.

#![cfg(unix)]

use std::fs;
use std::os::unix::fs::{MetadataExt as _, PermissionsExt as _};
use std::path::Path;

use super::cache::{self, Locked};
use super::{Cache, Held};

fn held(token: &str) -> Held {
    Held {
        issuer: "https://issuer.example".to_owned(),
        resource: "https://mcp.example/mcp".to_owned(),
        access_token: format!("access-{token}"),
        refresh_token: Some(format!("refresh-{token}")),
        scopes: vec!["notes:read".to_owned()],
        token_type: None,
        dpop_key: None,
    }
}

fn cache_holding(server: &str, token: &str) -> Cache {
    let mut cache = Cache::default();
    cache.tokens.insert(server.to_owned(), held(token));
    cache
}

fn write_with_mode(path: &Path, bytes: &[u8], mode: u32) {
    fs::write(path, bytes).unwrap();
    fs::set_permissions(path, fs::Permissions::from_mode(mode)).unwrap();
}

/// Whether some file of `dir` that others may read holds `needle`.
fn exposed_to_others(dir: &Path, needle: &str) -> bool {
    fs::read_dir(dir).unwrap().any(|entry| {
        let path = entry.unwrap().path();
        let Ok(metadata) = fs::metadata(&path) else {
            return false;
        };
        metadata.mode() & 0o077 != 0
            && fs::read(&path).is_ok_and(|bytes| String::from_utf8_lossy(&bytes).contains(needle))
    })
}

#[test]
fn a_missing_file_is_an_empty_cache_and_is_created_owner_only() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tokens.json");
    assert!(cache::load(&path).unwrap().tokens.is_empty());

    cache::save(&path, &cache_holding("https://mcp.example/mcp", "one")).unwrap();
    let mode = fs::symlink_metadata(&path).unwrap().mode();
    assert_eq!(mode & 0o777, 0o600);
    let loaded = cache::load(&path).unwrap();
    assert_eq!(
        loaded.tokens["https://mcp.example/mcp"].access_token,
        "access-one"
    );
}

/// `--token-cache "$(mktemp)"`: an empty owner-only file is an empty cache.
#[test]
fn an_empty_file_is_an_empty_cache() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tokens.json");
    write_with_mode(&path, b"", 0o600);
    assert!(cache::load(&path).unwrap().tokens.is_empty());
    cache::save(&path, &cache_holding("https://mcp.example/mcp", "one")).unwrap();
    assert_eq!(cache::load(&path).unwrap().tokens.len(), 1);
}

/// The choice: a cache file others can read is refused loudly rather than
/// silently replaced, so that its owner learns that its tokens were exposed.
#[test]
fn a_cache_file_readable_by_others_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tokens.json");
    let old = serde_json::to_vec(&cache_holding("https://old.example", "old")).unwrap();
    write_with_mode(&path, &old, 0o644);

    let error = cache::save(
        &path,
        &cache_holding("https://mcp.example/mcp", "new-secret"),
    )
    .expect_err("a 0644 cache file is refused");
    assert!(!exposed_to_others(dir.path(), "new-secret"));
    assert_eq!(fs::read(&path).unwrap(), old, "the file is left as it was");
    assert!(!error.to_string().contains("secret"), "{error}");
    assert!(cache::load(&path).is_err(), "nor read");
}

#[test]
fn a_symlink_at_the_cache_path_is_refused_and_its_target_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("victim");
    let original = b"precious bytes of another file\n";
    write_with_mode(&target, original, 0o600);
    let path = dir.path().join("tokens.json");
    std::os::unix::fs::symlink(&target, &path).unwrap();

    assert!(cache::save(&path, &cache_holding("https://mcp.example/mcp", "x")).is_err());
    assert!(cache::load(&path).is_err());
    assert_eq!(fs::read(&target).unwrap(), original);
    assert!(
        fs::symlink_metadata(&path)
            .unwrap()
            .file_type()
            .is_symlink()
    );
}

#[test]
fn a_file_that_is_not_a_token_cache_is_reported_and_never_overwritten() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tokens.json");
    // JSON, but not a cache: the error must not quote the value it met.
    let original = br#"{"tokens": "leaked-secret", "clients": {}}"#;
    write_with_mode(&path, original, 0o600);

    let error = cache::load(&path).expect_err("not a token cache");
    assert!(!error.to_string().contains("leaked-secret"), "{error}");
    assert!(cache::save(&path, &cache_holding("https://mcp.example/mcp", "x")).is_err());
    assert_eq!(fs::read(&path).unwrap(), original);

    write_with_mode(&path, b"plain text notes", 0o600);
    assert!(cache::load(&path).is_err());
    assert!(cache::save(&path, &Cache::default()).is_err());
    assert_eq!(fs::read(&path).unwrap(), b"plain text notes");
}

#[test]
fn a_cache_file_of_another_user_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tokens.json");
    let old = serde_json::to_vec(&Cache::default()).unwrap();
    write_with_mode(&path, &old, 0o600);
    let other = fs::metadata(&path).unwrap().uid() + 1;
    if std::os::unix::fs::chown(&path, Some(other), None).is_err() {
        eprintln!("skipped: only root can give a file to another user");
        return;
    }
    assert!(cache::load(&path).is_err());
    assert!(cache::save(&path, &cache_holding("https://mcp.example/mcp", "x")).is_err());
    assert_eq!(fs::read(&path).unwrap(), old);
}

#[test]
fn concurrent_read_modify_writes_keep_every_entry() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tokens.json");
    std::thread::scope(|scope| {
        for run in ["a", "b"] {
            let path = &path;
            scope.spawn(move || {
                for i in 0..50 {
                    let locked = Locked::acquire(path).unwrap();
                    let mut cache = locked.load().unwrap();
                    let server = format!("https://{run}{i}.example/mcp");
                    cache.tokens.insert(server, held(&format!("{run}{i}")));
                    locked.save(&cache).unwrap();
                }
            });
        }
    });
    assert_eq!(cache::load(&path).unwrap().tokens.len(), 100);
}

/// A crash in the middle of a save cannot leave a truncated cache: the new
/// content goes to another file, renamed over the cache once complete, so
/// the bytes of the old cache are never modified.
#[test]
fn save_writes_a_new_file_and_renames_it_never_in_place() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tokens.json");
    cache::save(&path, &cache_holding("https://mcp.example/mcp", "first")).unwrap();
    let first = fs::read(&path).unwrap();
    let inode = fs::metadata(&path).unwrap().ino();
    let old_file = fs::File::open(&path).unwrap();

    cache::save(&path, &cache_holding("https://mcp.example/mcp", "second")).unwrap();
    assert_ne!(fs::metadata(&path).unwrap().ino(), inode, "a new file");
    let mut still = Vec::new();
    std::io::Read::read_to_end(&mut &old_file, &mut still).unwrap();
    assert_eq!(still, first, "the old cache's bytes were never touched");
    assert_eq!(fs::metadata(&path).unwrap().mode() & 0o777, 0o600);

    let mut names: Vec<String> = fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name != "tokens.json.lock")
        .collect();
    names.sort();
    assert_eq!(names, ["tokens.json"], "no temporary file is left behind");
}

/// The way Unix systems without `libc` here learn the effective user gives
/// what `geteuid` gives.
#[test]
fn the_probed_user_is_the_effective_user() {
    assert_eq!(
        cache::platform::probed_uid().unwrap(),
        cache::platform::effective_uid().unwrap()
    );
}

#[test]
fn a_symlink_at_the_lock_path_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("elsewhere");
    let path = dir.path().join("tokens.json");
    std::os::unix::fs::symlink(&target, dir.path().join("tokens.json.lock")).unwrap();
    assert!(cache::save(&path, &Cache::default()).is_err());
    assert!(!target.exists(), "nothing is created through the link");
    assert!(!path.exists());
}

#[test]
fn settings_print_without_their_secrets() {
    let oauth = super::OAuth::new("ci")
        .client("ci-job", Some("s3cret".into()), None)
        .jwt_bearer("eyJ.workload.jwt");
    #[cfg(feature = "oauth-client-jose")]
    let oauth = oauth.private_key_jwt("-----BEGIN PRIVATE KEY-----\nMIG...\n", "ES256");
    let printed = format!("{oauth:?}");
    assert!(printed.contains("ci-job"), "{printed}");
    for secret in ["s3cret", "PRIVATE KEY", "eyJ.workload.jwt"] {
        assert!(!printed.contains(secret), "{secret} in {printed}");
    }
}

#[test]
fn enterprise_settings_print_without_their_secrets() {
    use super::{EnterpriseIdp, IdentityAssertion};
    for assertion in [
        IdentityAssertion::id_token("eyJ.user.id_token"),
        IdentityAssertion::saml2("PHNhbWw6QXNzZXJ0aW9u"),
    ] {
        let idp = EnterpriseIdp::new("http://idp.example/token", "idp-client", assertion)
            .client_secret("idp-s3cret");
        let oauth = super::OAuth::new("agent")
            .client("mcp-client", Some("mcp-s3cret".into()), None)
            .enterprise(idp);
        let printed = format!("{oauth:?}");
        for shown in ["http://idp.example/token", "idp-client", "mcp-client"] {
            assert!(printed.contains(shown), "{shown} not in {printed}");
        }
        for secret in [
            "idp-s3cret",
            "mcp-s3cret",
            "eyJ.user.id_token",
            "PHNhbWw6QXNzZXJ0aW9u",
        ] {
            assert!(!printed.contains(secret), "{secret} in {printed}");
        }
    }
    let from_files = EnterpriseIdp::new(
        "http://idp.example/token",
        "idp-client",
        IdentityAssertion::id_token_file("/run/id_token"),
    )
    .client_secret_file("/run/idp-secret");
    let printed = format!("{from_files:?}");
    assert!(
        printed.contains("/run/id_token") && printed.contains("/run/idp-secret"),
        "{printed}"
    );
}

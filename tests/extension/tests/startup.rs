//! Startup checks, in a test binary of their own: it links this crate, so
//! its `pong` tool (which requires `com.example/ping`) is served by every
//! server built here, and a server that does not offer the extension must
//! refuse to start.

use mcp_extension_example::{extension, server};
use mcp_runtime::extension::{Extension, ExtensionMethod, MethodResult};
use mcp_runtime::{BuildError, Context, ServerBuilder};
use serde::de::IgnoredAny;
use serde_json::json;

/// Linking the crate but forgetting `.extension(..)`: `build()` fails,
/// naming the tool, where it is defined, the extension and the fix.
#[test]
fn a_tool_requiring_an_extension_the_server_does_not_offer_stops_the_build() {
    let error = ServerBuilder::new("forgetful", "1.0.0")
        .build()
        .expect_err("a tool needs an extension this server does not offer");
    assert!(matches!(error, BuildError::Extension(_)), "{error:?}");
    let message = error.to_string();
    assert!(
        message.starts_with("extension: tool `pong` (at tests/extension/src/lib.rs:"),
        "{message}"
    );
    assert!(
        message.ends_with(
            "requires extension `com.example/ping`, which this server does not offer; \
             add it with `ServerBuilder::with(extension)`"
        ),
        "{message}"
    );
}

/// With the extension, the same binary builds; offering it twice does not.
#[test]
fn the_extension_is_offered_once() {
    server().build().expect("the example server builds");
    let error = server()
        .with(extension())
        .build()
        .expect_err("one extension added twice");
    assert_eq!(
        error.to_string(),
        "extension: `com.example/ping` is added twice"
    );
}

/// An extension method named after a method the legacy adapter answers
/// itself (`ping`, `initialize`, `logging/setLevel`,
/// `resources/subscribe`, `resources/unsubscribe`) would be served to
/// modern clients but never reach legacy ones, whom the adapter answers
/// instead: the build must refuse it, as it refuses core method names.
///
/// Fails with the runtime as it is: these names build (see the report).
#[test]
fn extension_methods_cannot_take_the_names_of_legacy_methods() {
    for name in [
        "ping",
        "initialize",
        "logging/setLevel",
        "resources/subscribe",
        "resources/unsubscribe",
    ] {
        let shadowing = ExtensionMethod::new(name, |_: IgnoredAny, _: Context| async {
            Ok(MethodResult::complete(json!({})))
        });
        let result = server()
            .with(Extension::new("com.example/shadow").method(shadowing))
            .build();
        match result {
            Err(BuildError::Extension(message)) => {
                assert!(message.contains(&format!("`{name}`")), "{message}");
            }
            Err(other) => panic!("{name}: an unexpected error: {other}"),
            Ok(_) => panic!("an extension method named `{name}` was accepted"),
        }
    }
}

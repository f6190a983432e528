//! Tools linked to views that are not there, or not views: the server must
//! refuse to start, naming each tool and the resource it links to, as it
//! does for a duplicate name.

use mcp_runtime::{resource, tool};

/// A page, but not an app view (plain `text/html`).
#[resource("ui://plain/page.html", mime_type = "text/html")]
fn plain_page() -> &'static str {
    "<p>not an app</p>"
}

/// Links to a page that is not an app view.
#[tool(ui = "ui://plain/page.html")]
fn shows_a_page() -> &'static str {
    "page"
}

/// Links to nothing.
#[tool(ui = "ui://missing/view.html")]
fn shows_nothing() -> &'static str {
    "nothing"
}

#[test]
fn broken_links_are_reported_with_both_sites() {
    let error = mcp_runtime::ServerBuilder::new("apps", "0.0.0")
        .build()
        .expect_err("links to missing or non-app views must not build");
    let file = "mcp-runtime/tests/apps_broken_links.rs";
    assert_eq!(
        error.to_string(),
        format!(
            "extension: `io.modelcontextprotocol/ui`: \
             tool `shows_a_page` (at {file}:15) links to the view `ui://plain/page.html`, \
             but the resource `plain_page` (at {file}:9) serving it is not an app view: \
             its MIME type is `text/html`, not `text/html;profile=mcp-app`; \
             declare it with `app`: `#[resource(\"ui://plain/page.html\", app)]`\n\
             tool `shows_nothing` (at {file}:21) links to the view `ui://missing/view.html`, \
             which no resource of this server serves; \
             declare it with `#[resource(\"ui://missing/view.html\", app)]`"
        )
    );
    assert_eq!(plain_page(), "<p>not an app</p>");
    assert_eq!((shows_a_page(), shows_nothing()), ("page", "nothing"));
}

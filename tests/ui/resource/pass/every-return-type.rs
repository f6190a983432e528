use std::borrow::Cow;
use std::fmt;

use mcp_runtime::{ReadResourceResult, ResourceContents, resource};

#[derive(Debug)]
struct MyError;

impl fmt::Display for MyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("my error")
    }
}

/// Owned text.
#[resource("ret://string")]
fn string() -> String {
    String::new()
}

/// Static text.
#[resource("ret://str")]
fn borrowed() -> &'static str {
    ""
}

/// Either.
#[resource("ret://cow")]
fn cow() -> Cow<'static, str> {
    Cow::Borrowed("")
}

/// Bytes, sent as a base64 blob.
#[resource("ret://vec", mime_type = "application/octet-stream")]
fn vec() -> Vec<u8> {
    vec![0, 1, 2]
}

/// Shared bytes.
#[resource("ret://bytes", mime_type = "image/png")]
fn shared_bytes() -> bytes::Bytes {
    bytes::Bytes::from_static(b"\x89PNG")
}

/// One contents item with full control.
#[resource("ret://contents")]
fn contents() -> ResourceContents {
    ResourceContents::text("ret://contents", "text").with_mime_type("text/plain")
}

/// Several contents items.
#[resource("ret://contents-list")]
fn contents_list() -> Vec<ResourceContents> {
    vec![
        ResourceContents::text("ret://contents-list/a", "a"),
        ResourceContents::blob("ret://contents-list/b", [1, 2]),
    ]
}

/// The full result.
#[resource("ret://result")]
fn full() -> ReadResourceResult {
    ReadResourceResult::new([ResourceContents::text("ret://result", "")])
}

/// `None` means nothing is at that URI.
#[resource("ret://optional/{id}")]
fn optional(id: u32) -> Option<String> {
    (id == 1).then(String::new)
}

/// Optional bytes.
#[resource("ret://optional-bytes/{id}")]
fn optional_bytes(id: u32) -> Option<Vec<u8>> {
    (id == 1).then(Vec::new)
}

/// Fallible with a `String` error.
#[resource("ret://fallible-string")]
fn fallible_string() -> Result<String, String> {
    Err("no".to_owned())
}

/// Fallible with a custom error, asynchronously.
#[resource("ret://fallible-custom")]
async fn fallible_custom() -> Result<bytes::Bytes, MyError> {
    Err(MyError)
}

/// Fallible with an I/O error.
#[resource("ret://fallible-io")]
fn fallible_io() -> std::io::Result<Vec<ResourceContents>> {
    Ok(Vec::new())
}

/// Fallible with a boxed error.
#[resource("ret://fallible-boxed")]
fn fallible_boxed() -> Result<ReadResourceResult, Box<dyn std::error::Error>> {
    Ok(ReadResourceResult::new([]))
}

/// Fallible and optional.
#[resource("ret://fallible-optional/{id}")]
fn fallible_optional(id: u32) -> Result<Option<Cow<'static, str>>, String> {
    Ok((id == 1).then_some(Cow::Borrowed("")))
}

/// Through a type alias.
type Text = String;

/// Returns an alias.
#[resource("ret://aliased")]
fn aliased() -> Text {
    Text::new()
}

fn main() {}

//! The handler side of resources: what a `#[resource]` function may return,
//! how template variables are parsed, and the glue the macro calls into.

use std::borrow::Cow;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::str::FromStr;

use crate::context::Context;
use crate::protocol::{ReadResourceResult, ResourceContents};

/// Why a read produced no contents.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ReadError {
    /// Nothing exists at this URI (`-32602` with `data.uri`).
    NotFound,
    /// The URI is not one this resource can serve, for a reason the client
    /// can act on (a file path that leaves the served directory, say):
    /// `-32602` with this message and `data.uri`.
    Invalid(String),
    /// Reading failed (`-32603` with this message).
    Failed(String),
}

/// The future of one resource read.
pub type ResourceFuture = Pin<Box<dyn Future<Output = Result<ReadResourceResult, ReadError>>>>;

/// Generated per resource: binds the template variables and starts the read,
/// or returns `None` when a variable does not parse (the URI does not match).
pub type ResourceReadFn = fn(ResourceInvocation<'_>) -> Option<ResourceFuture>;

/// What the dispatcher hands a resource's generated glue.
#[derive(Debug)]
pub struct ResourceInvocation<'a> {
    /// The URI being read.
    pub uri: &'a str,
    /// Decoded template variables, by name (empty for static resources).
    pub variables: &'a [(&'static str, String)],
    /// The request context.
    pub context: Context,
}

impl ResourceInvocation<'_> {
    /// The decoded value of template variable `name`.
    pub fn variable(&self, name: &str) -> Option<&str> {
        self.variables
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// Types a URI template variable can be parsed into.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a URI template variable",
    label = "not parseable from a URI",
    note = "template variables are parsed from the URI with `FromStr`: use `String`, an integer, or a type implementing `FromStr`"
)]
pub trait TemplateVariable: Sized {
    /// Parses the decoded value; `None` means the URI does not match.
    fn parse_variable(value: &str) -> Option<Self>;
}

#[diagnostic::do_not_recommend]
impl<T: FromStr> TemplateVariable for T {
    fn parse_variable(value: &str) -> Option<Self> {
        value.parse().ok()
    }
}

/// Types a variable of a query expression (`{?state}`, `{&label}`) can be
/// parsed into: `Option<T>` with `T: FromStr`, since the URI may leave the
/// variable out (`None`).
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a URI query variable",
    label = "a query variable may be absent from the URI",
    note = "variables of `{{?..}}` and `{{&..}}` expressions are optional: make the parameter an `Option<T>` where `T: FromStr` (`None` when the URI leaves it out)"
)]
pub trait QueryVariable: Sized {
    /// Parses the decoded value, if the URI has one; `None` means the URI
    /// does not match.
    fn parse_query(value: Option<&str>) -> Option<Self>;
}

#[diagnostic::do_not_recommend]
impl<T: FromStr> QueryVariable for Option<T> {
    fn parse_query(value: Option<&str>) -> Option<Self> {
        match value {
            None => Some(None),
            Some(value) => value.parse().ok().map(Some),
        }
    }
}

/// What a `#[resource]` function may return.
///
/// Text (`String`, `&'static str`, `Cow<'static, str>`) becomes text
/// contents and bytes (`Vec<u8>`, `bytes::Bytes`) become base64 `blob`
/// contents of the URI that was read, with the resource's declared MIME type.
/// [`ResourceContents`], `Vec<ResourceContents>` and [`ReadResourceResult`]
/// give full control (several contents, provenance in `_meta`; with a
/// `ReadResourceResult`, this read's own `ttlMs`, `cacheScope` and result
/// `_meta`, overriding the resource's declared hints). `Option<T>`
/// returning `None` means nothing is at that URI; `Result<T, E>` with
/// `E: Display` turns `Err` into a JSON-RPC error carrying the message, and
/// `Result<T, ReadError>` into the error the [`ReadError`] names.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be returned from a `#[resource]` function",
    label = "not resource contents",
    note = "return `String`, `&'static str`, `Vec<u8>`, `bytes::Bytes`, `ResourceContents`, `Vec<ResourceContents>` or `ReadResourceResult`, optionally in an `Option` (None = not found) or a `Result<_, E>` where `E: Display` (or `E` is `ReadError`)"
)]
pub trait IntoResourceContents {
    /// The result of reading `uri`.
    fn into_result(self, uri: &str) -> Result<ReadResourceResult, ReadError>;
}

impl IntoResourceContents for String {
    fn into_result(self, uri: &str) -> Result<ReadResourceResult, ReadError> {
        Ok(ReadResourceResult::new(vec![ResourceContents::text(
            uri, self,
        )]))
    }
}

impl IntoResourceContents for &'static str {
    fn into_result(self, uri: &str) -> Result<ReadResourceResult, ReadError> {
        Ok(ReadResourceResult::new(vec![ResourceContents::text(
            uri, self,
        )]))
    }
}

impl IntoResourceContents for Cow<'static, str> {
    fn into_result(self, uri: &str) -> Result<ReadResourceResult, ReadError> {
        Ok(ReadResourceResult::new(vec![ResourceContents::text(
            uri, self,
        )]))
    }
}

impl IntoResourceContents for Vec<u8> {
    fn into_result(self, uri: &str) -> Result<ReadResourceResult, ReadError> {
        Ok(ReadResourceResult::new(vec![ResourceContents::blob(
            uri, self,
        )]))
    }
}

impl IntoResourceContents for bytes::Bytes {
    fn into_result(self, uri: &str) -> Result<ReadResourceResult, ReadError> {
        Ok(ReadResourceResult::new(vec![ResourceContents::blob(
            uri, self,
        )]))
    }
}

impl IntoResourceContents for ResourceContents {
    fn into_result(self, _uri: &str) -> Result<ReadResourceResult, ReadError> {
        Ok(ReadResourceResult::new(vec![self]))
    }
}

impl IntoResourceContents for Vec<ResourceContents> {
    fn into_result(self, _uri: &str) -> Result<ReadResourceResult, ReadError> {
        Ok(ReadResourceResult::new(self))
    }
}

impl IntoResourceContents for ReadResourceResult {
    fn into_result(self, _uri: &str) -> Result<ReadResourceResult, ReadError> {
        Ok(self)
    }
}

impl<T: IntoResourceContents> IntoResourceContents for Option<T> {
    fn into_result(self, uri: &str) -> Result<ReadResourceResult, ReadError> {
        self.ok_or(ReadError::NotFound)?.into_result(uri)
    }
}

impl<T: IntoResourceContents, E: fmt::Display> IntoResourceContents for Result<T, E> {
    fn into_result(self, uri: &str) -> Result<ReadResourceResult, ReadError> {
        self.map_err(|e| ReadError::Failed(e.to_string()))?
            .into_result(uri)
    }
}

/// A read's own [`ReadError`]: not found, invalid and failed reads keep
/// their JSON-RPC errors (`-32602`, `-32602`, `-32603`).
impl<T: IntoResourceContents> IntoResourceContents for Result<T, ReadError> {
    fn into_result(self, uri: &str) -> Result<ReadResourceResult, ReadError> {
        self?.into_result(uri)
    }
}

/// Boxes a resource read for the registry.
pub fn box_resource_future<F>(future: F) -> ResourceFuture
where
    F: Future<Output = Result<ReadResourceResult, ReadError>> + 'static,
{
    Box::pin(future)
}

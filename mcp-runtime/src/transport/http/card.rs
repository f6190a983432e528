//! Server Cards (SEP-2127, a draft; experimental): the server's identity
//! and how to connect, for registries and clients before they connect,
//! at `GET <endpoint>/server-card`, and optionally an MCP Catalog naming it
//! at `GET /.well-known/mcp/catalog.json`.
//!
//! The card is written once, when the endpoint starts, from the same
//! metadata `server/discover` answers with (the server's name, version,
//! title, description, icons and website, and the protocol revisions the
//! endpoint speaks), so that the two cannot disagree. Both documents are
//! public by design: served with `Access-Control-Allow-Origin: *` to any
//! `Host` and `Origin`, outside authorization, as the probes are.

use std::time::Duration;

use bytes::Bytes;
use http::header::{
    ACCESS_CONTROL_ALLOW_HEADERS, ACCESS_CONTROL_ALLOW_METHODS, ACCESS_CONTROL_ALLOW_ORIGIN, ALLOW,
    CACHE_CONTROL, CONTENT_TYPE,
};
use http::request::Parts;
use http::{HeaderValue, Method, StatusCode};
use serde_json::{Value, json};

use super::body::McpBody;
use super::respond::{self, HttpResponse};
use crate::protocol::Implementation;

/// The `$schema` of every card: the draft's `/v2/` Server Card schema.
pub const SERVER_CARD_SCHEMA: &str =
    "https://static.modelcontextprotocol.io/schemas/v2/server-card.schema.json";

/// The media type of a Server Card.
pub const SERVER_CARD_TYPE: &str = "application/mcp-server-card+json";

/// Where an MCP Catalog is published on a domain.
const CATALOG_PATH: &str = "/.well-known/mcp/catalog.json";

/// The schema's limit on `description` and `title`, in characters.
const SHORT_TEXT: usize = 100;

/// A Server Card for the endpoint (experimental: SEP-2127 is a draft, and
/// the card's shape may change with it): given to
/// [`HttpOptions::server_card`](crate::HttpOptions::server_card).
///
/// Only what the server's metadata cannot say is set here: the namespace
/// of its reverse-DNS name (the card of server `weather` with namespace
/// `com.example` is named `com.example/weather`; a server whose name is
/// already `namespace/name` keeps it) and the URLs clients reach the
/// endpoint at, which behind a proxy only the deployment knows.
#[derive(Clone, Debug)]
#[must_use]
pub struct ServerCard {
    namespace: String,
    remotes: Vec<String>,
    repository: Option<(String, String)>,
    catalog: bool,
    max_age: Duration,
}

impl ServerCard {
    /// A card whose name is `{namespace}/{the server's name}`: your domain,
    /// reversed (`com.example`).
    pub fn new(namespace: impl Into<String>) -> Self {
        ServerCard {
            namespace: namespace.into(),
            remotes: Vec::new(),
            repository: None,
            catalog: false,
            max_age: Duration::from_secs(3600),
        }
    }

    /// A URL clients connect to the endpoint at (`https://mcp.example.com/mcp`),
    /// listed under `remotes` as Streamable HTTP. At least one is needed,
    /// unless authorization is on: its resource URL is then the one.
    pub fn remote(mut self, url: impl Into<String>) -> Self {
        self.remotes.push(url.into());
        self
    }

    /// The server's source repository (`source` such as `github`, and its
    /// URL), for users and security reviewers.
    pub fn repository(mut self, source: impl Into<String>, url: impl Into<String>) -> Self {
        self.repository = Some((source.into(), url.into()));
        self
    }

    /// Also serves an MCP Catalog at `/.well-known/mcp/catalog.json` on the
    /// endpoint's listener, with this server as its one entry (its card at
    /// the first remote's `/server-card`). Only for a server that is the
    /// whole of its domain's MCP offering.
    pub fn catalog(mut self) -> Self {
        self.catalog = true;
        self
    }

    /// How long clients may cache the documents (`Cache-Control: public,
    /// max-age`; default an hour).
    pub fn max_age(mut self, max_age: Duration) -> Self {
        self.max_age = max_age;
        self
    }

    /// The documents, written for the server `info` whose endpoint at
    /// `path` speaks `versions`; `resource` is the authorization resource
    /// URL, if any. Fails on what the draft's schema would refuse.
    pub(crate) fn publish(
        &self,
        info: &Implementation,
        versions: &[&str],
        (path, resource): (&str, Option<&str>),
    ) -> Result<Published, String> {
        let remotes = match (self.remotes.is_empty(), resource) {
            (true, Some(resource)) => vec![resource.to_owned()],
            _ => self.remotes.clone(),
        };
        let card = self.card(info, versions, &remotes)?;
        let catalog = match self.catalog {
            true => Some(self.catalog_document(info, &card, &remotes)?),
            false => None,
        };
        let cache = format!("public, max-age={}", self.max_age.as_secs());
        Ok(Published {
            card: Bytes::from(card.to_string()),
            card_path: format!("{}/server-card", path.trim_end_matches('/')),
            catalog: catalog.map(|catalog| Bytes::from(catalog.to_string())),
            cache: HeaderValue::from_str(&cache).map_err(|e| e.to_string())?,
        })
    }

    /// The card itself.
    fn card(
        &self,
        info: &Implementation,
        versions: &[&str],
        remotes: &[String],
    ) -> Result<Value, String> {
        let name = match info.name.contains('/') {
            true => info.name.clone(),
            false => format!("{}/{}", self.namespace, info.name),
        };
        check_name(&name)?;
        let description = info
            .description
            .as_deref()
            .ok_or("a Server Card needs a description: set one with ServerBuilder::description")?;
        check_short("description", description)?;
        if remotes.is_empty() {
            return Err(
                "a Server Card needs the URL clients reach the endpoint at: \
                        ServerCard::remote(\"https://.../mcp\")"
                    .to_owned(),
            );
        }
        let mut card = json!({
            "$schema": SERVER_CARD_SCHEMA,
            "name": name,
            "version": info.version,
            "description": description,
            "remotes": remotes.iter().map(|url| remote(url, versions)).collect::<Result<Vec<_>, _>>()?,
        });
        if let Some(title) = &info.title {
            check_short("title", title)?;
            card["title"] = json!(title);
        }
        if !info.icons.is_empty() {
            card["icons"] = json!(info.icons);
        }
        if let Some(website) = &info.website_url {
            card["websiteUrl"] = json!(website);
        }
        if let Some((source, url)) = &self.repository {
            card["repository"] = json!({"source": source, "url": url});
        }
        Ok(card)
    }

    /// The MCP Catalog listing the card: its identifier
    /// `urn:air:{domain}:{name}`, the domain the namespace reversed.
    fn catalog_document(
        &self,
        info: &Implementation,
        card: &Value,
        remotes: &[String],
    ) -> Result<Value, String> {
        let name = card["name"].as_str().unwrap_or_default();
        let (namespace, server) = name.split_once('/').unwrap_or((name, name));
        let domain: Vec<&str> = namespace.split('.').rev().collect();
        let first = remotes.first().ok_or("an MCP Catalog needs a remote")?;
        Ok(json!({
            "specVersion": "draft",
            "entries": [{
                "identifier": format!("urn:air:{}:{server}", domain.join(".")),
                "displayName": info.title.as_deref().unwrap_or(&info.name),
                "type": SERVER_CARD_TYPE,
                "url": format!("{}/server-card", first.trim_end_matches('/')),
            }],
        }))
    }
}

/// One remote: Streamable HTTP at `url`, speaking `versions`.
fn remote(url: &str, versions: &[&str]) -> Result<Value, String> {
    let scheme = url.starts_with("https://") || url.starts_with("http://");
    if !scheme || url.contains(char::is_whitespace) {
        return Err(format!(
            "a Server Card's remote must be an http(s) URL, not `{url}`"
        ));
    }
    Ok(json!({"type": "streamable-http", "url": url, "supportedProtocolVersions": versions}))
}

/// The schema's `^[a-zA-Z0-9.-]+/[a-zA-Z0-9._-]+$`, 3 to 200 characters.
fn check_name(name: &str) -> Result<(), String> {
    let valid = |text: &str, extra: &str| {
        !text.is_empty()
            && text
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || extra.contains(c))
    };
    let shaped = name
        .split_once('/')
        .is_some_and(|(namespace, server)| valid(namespace, ".-") && valid(server, "._-"));
    match shaped && (3..=200).contains(&name.len()) {
        true => Ok(()),
        false => Err(format!(
            "a Server Card's name is `namespace/name` in reverse-DNS form \
             (letters, digits, `.`, `-`; `_` after the slash), not `{name}`"
        )),
    }
}

/// A `title` or `description`: 1 to 100 characters.
fn check_short(field: &str, text: &str) -> Result<(), String> {
    match (1..=SHORT_TEXT).contains(&text.chars().count()) {
        true => Ok(()),
        false => Err(format!(
            "a Server Card's {field} has 1 to {SHORT_TEXT} characters; the server's has {}",
            text.chars().count()
        )),
    }
}

/// The documents an endpoint serves, written once.
#[derive(Debug)]
pub(crate) struct Published {
    card: Bytes,
    card_path: String,
    catalog: Option<Bytes>,
    cache: HeaderValue,
}

impl Published {
    /// The answer to `parts` if it asks for one of the documents: `GET` or
    /// `HEAD` gets it, a CORS preflight its headers, another method 405.
    pub(crate) fn answer(&self, parts: &Parts) -> Option<HttpResponse> {
        let path = parts.uri.path();
        let (body, kind) = if path == self.card_path {
            (&self.card, SERVER_CARD_TYPE)
        } else if path == CATALOG_PATH {
            (self.catalog.as_ref()?, "application/json")
        } else {
            return None;
        };
        let mut response = match parts.method {
            Method::GET => respond::empty(StatusCode::OK).map(|_| McpBody::full(body.clone())),
            Method::HEAD => respond::empty(StatusCode::OK),
            Method::OPTIONS => respond::empty(StatusCode::NO_CONTENT),
            _ => {
                let mut refused =
                    respond::plain(StatusCode::METHOD_NOT_ALLOWED, "method not allowed");
                refused
                    .headers_mut()
                    .insert(ALLOW, HeaderValue::from_static("GET, HEAD, OPTIONS"));
                return Some(refused);
            }
        };
        let headers = response.headers_mut();
        headers.insert(CONTENT_TYPE, HeaderValue::from_static(kind));
        headers.insert(CACHE_CONTROL, self.cache.clone());
        headers.insert(ACCESS_CONTROL_ALLOW_ORIGIN, HeaderValue::from_static("*"));
        headers.insert(
            ACCESS_CONTROL_ALLOW_METHODS,
            HeaderValue::from_static("GET"),
        );
        headers.insert(
            ACCESS_CONTROL_ALLOW_HEADERS,
            HeaderValue::from_static("Content-Type"),
        );
        Some(response)
    }
}

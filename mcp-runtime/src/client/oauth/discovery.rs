//! Finding the authorization server of a protected MCP server, as the
//! spec's authorization-server-discovery page orders it: the
//! `WWW-Authenticate` challenge, the Protected Resource Metadata (RFC 9728)
//! it names or the well-known URIs, then the authorization server's own
//! metadata (RFC 8414 or OpenID Connect Discovery), each validated.

use bytes::Bytes;
use http::{Method, Uri};
use serde_json::Value;

use crate::client::transport::TransportError;
use crate::client::web::{WebResponse, exchange, http_url};

/// The `Bearer` challenge, read by the client for every refusal.
pub(crate) use crate::client::authorization::BearerChallenge as Challenge;

/// The `Bearer` challenge among `header`'s challenges, else the `DPoP` one
/// (a server that takes DPoP-bound tokens only challenges with it).
pub(crate) fn parse_challenge(header: &str) -> Option<Challenge> {
    Challenge::parse(header).or_else(|| Challenge::parse_scheme(header, "dpop"))
}

/// What the Protected Resource Metadata says.
#[derive(Clone, Debug)]
pub(crate) struct ResourceMetadata {
    /// `resource`, exactly as published: what tokens are requested for.
    pub(crate) resource: String,
    /// The first of `authorization_servers`: the issuer to use.
    pub(crate) issuer: String,
    pub(crate) scopes_supported: Option<Vec<String>>,
}

/// Fetches the server's Protected Resource Metadata: from the challenge's
/// `resource_metadata`, else the path-inserted well-known URI, else the
/// root one. Its `resource` must be the server (same origin, a prefix of
/// its path), or nothing is authorized.
pub(crate) async fn resource_metadata(
    server: &Uri,
    challenge: &Challenge,
) -> Result<ResourceMetadata, TransportError> {
    let candidates = match &challenge.resource_metadata {
        Some(url) => vec![url.clone()],
        None => well_known(server, "oauth-protected-resource", true),
    };
    let (url, document) = first_document(&candidates).await?;
    let text = |key: &str| document.get(key).and_then(Value::as_str).map(str::to_owned);
    let resource = text("resource").ok_or_else(|| {
        TransportError::new(format!("the resource metadata at {url} has no `resource`"))
    })?;
    if !covers(&resource, server) {
        return Err(TransportError::new(format!(
            "the resource metadata at {url} is for `{resource}`, not this server ({server}): not authorizing"
        )));
    }
    let issuer = document["authorization_servers"]
        .as_array()
        .and_then(|servers| servers.first())
        .and_then(Value::as_str)
        .ok_or_else(|| {
            TransportError::new(format!(
                "the resource metadata at {url} names no authorization server"
            ))
        })?
        .to_owned();
    Ok(ResourceMetadata {
        resource,
        issuer,
        scopes_supported: strings(&document["scopes_supported"]),
    })
}

/// Whether the resource identifier `resource` covers `server`: the same
/// scheme and authority (scheme and host compared without case), and a
/// path that is the server's or one of its parents'.
pub(crate) fn covers(resource: &str, server: &Uri) -> bool {
    let Ok(resource) = resource.parse::<Uri>() else {
        return false;
    };
    let same = |a: Option<&str>, b: Option<&str>| match (a, b) {
        (Some(a), Some(b)) => a.eq_ignore_ascii_case(b),
        _ => false,
    };
    let port = |uri: &Uri| uri.port_u16().unwrap_or(80);
    let resource_path = resource.path().trim_end_matches('/');
    let server_path = server.path();
    same(resource.scheme_str(), server.scheme_str())
        && same(resource.host(), server.host())
        && port(&resource) == port(server)
        && resource.query().is_none()
        && (server_path == resource_path || server_path.starts_with(&format!("{resource_path}/")))
}

/// What the authorization server's metadata says that the flow uses.
#[derive(Clone, Debug)]
pub(crate) struct ServerMetadata {
    pub(crate) issuer: String,
    pub(crate) authorization_endpoint: String,
    pub(crate) token_endpoint: String,
    pub(crate) registration_endpoint: Option<String>,
    pub(crate) scopes_supported: Option<Vec<String>>,
    pub(crate) auth_methods: Option<Vec<String>>,
    pub(crate) grant_types: Option<Vec<String>>,
    /// `authorization_grant_profiles_supported`: the assertion profiles
    /// its JWT bearer grant takes (the ID-JAG's, for enterprise-managed
    /// authorization).
    pub(crate) grant_profiles: Option<Vec<String>>,
    pub(crate) iss_parameter_supported: bool,
    pub(crate) client_id_metadata_documents: bool,
    /// Whether it supports PKCE with `S256`, which the authorization code
    /// flow requires (the client credentials grant has no use for it).
    pub(crate) pkce_s256: bool,
}

impl ServerMetadata {
    /// Refuses an authorization server without PKCE `S256` or an
    /// authorization endpoint before any request is made to it.
    pub(crate) fn check_authorization_code(&self) -> Result<(), TransportError> {
        if !self.pkce_s256 {
            return Err(TransportError::new(format!(
                "the authorization server {} does not support PKCE with S256 (code_challenge_methods_supported): not authorizing",
                self.issuer
            )));
        }
        if self.authorization_endpoint.is_empty() {
            return Err(TransportError::new(format!(
                "the authorization server metadata of {} has no `authorization_endpoint`",
                self.issuer
            )));
        }
        Ok(())
    }
}

/// Fetches the metadata of the authorization server `issuer` from the
/// well-known URIs in the spec's order, using only a document whose
/// `issuer` is `issuer` exactly.
pub(crate) async fn server_metadata(issuer: &str) -> Result<ServerMetadata, TransportError> {
    let uri = http_url(issuer)?;
    // With a path: path insertion for both, then OpenID's path appending;
    // never the root's documents, which belong to another issuer.
    let mut candidates = well_known(&uri, "oauth-authorization-server", false);
    candidates.extend(well_known(&uri, "openid-configuration", false));
    if uri.path() != "/" && !uri.path().is_empty() {
        candidates.push(format!(
            "{}/.well-known/openid-configuration",
            issuer.trim_end_matches('/')
        ));
    }
    let mut refused = Vec::new();
    for url in candidates {
        let Some(document) = get_json(&url).await? else {
            continue;
        };
        if document["issuer"].as_str() != Some(issuer) {
            refused.push(format!("{url} names issuer {}", document["issuer"]));
            continue;
        }
        return metadata_from(&url, &document);
    }
    Err(TransportError::new(if refused.is_empty() {
        format!("no authorization server metadata found for {issuer}")
    } else {
        format!(
            "the authorization server metadata for {issuer} is not its own ({}): not using it",
            refused.join("; ")
        )
    }))
}

fn metadata_from(url: &str, document: &Value) -> Result<ServerMetadata, TransportError> {
    let text = |key: &str| document[key].as_str().map(str::to_owned);
    let required = |key: &str| {
        text(key).ok_or_else(|| {
            TransportError::new(format!(
                "the authorization server metadata at {url} has no `{key}`"
            ))
        })
    };
    let pkce = strings(&document["code_challenge_methods_supported"]).unwrap_or_default();
    Ok(ServerMetadata {
        issuer: required("issuer")?,
        authorization_endpoint: text("authorization_endpoint").unwrap_or_default(),
        token_endpoint: required("token_endpoint")?,
        registration_endpoint: text("registration_endpoint"),
        scopes_supported: strings(&document["scopes_supported"]),
        auth_methods: strings(&document["token_endpoint_auth_methods_supported"]),
        grant_types: strings(&document["grant_types_supported"]),
        grant_profiles: strings(&document["authorization_grant_profiles_supported"]),
        iss_parameter_supported: document["authorization_response_iss_parameter_supported"] == true,
        client_id_metadata_documents: document["client_id_metadata_document_supported"] == true,
        pkce_s256: pkce.iter().any(|m| m == "S256"),
    })
}

/// `https://host/.well-known/{name}{path}` (RFC 8414 §3.1 path insertion)
/// and, for a URL with a path and `root_too`, `https://host/.well-known/{name}`.
fn well_known(uri: &Uri, name: &str, root_too: bool) -> Vec<String> {
    let origin = format!(
        "{}://{}",
        uri.scheme_str().unwrap_or("http"),
        uri.authority().map_or("", |a| a.as_str())
    );
    let path = uri.path().trim_end_matches('/');
    let mut urls = vec![format!("{origin}/.well-known/{name}{path}")];
    if root_too && !path.is_empty() {
        urls.push(format!("{origin}/.well-known/{name}"));
    }
    urls
}

/// The first of `urls` that answers with a JSON object.
async fn first_document(urls: &[String]) -> Result<(String, Value), TransportError> {
    for url in urls {
        if let Some(document) = get_json(url).await? {
            return Ok((url.clone(), document));
        }
    }
    Err(TransportError::new(format!(
        "no protected resource metadata at {}",
        urls.join(" or ")
    )))
}

/// `GET url`: the JSON object of a 200 answer, `None` for anything else.
pub(crate) async fn get_json(url: &str) -> Result<Option<Value>, TransportError> {
    let uri = http_url(url)?;
    let headers = [("accept".to_owned(), "application/json".to_owned())];
    let response: WebResponse = exchange(Method::GET, &uri, &headers, Bytes::new()).await?;
    Ok((response.status == 200)
        .then(|| response.json_object())
        .flatten())
}

fn strings(value: &Value) -> Option<Vec<String>> {
    value.as_array().map(|items| {
        items
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_resource_covers_its_server_and_nothing_else() {
        let server: Uri = "http://localhost:3000/mcp".parse().unwrap();
        for resource in [
            "http://localhost:3000/mcp",
            "http://localhost:3000",
            "HTTP://LocalHost:3000/",
            "http://localhost:3000/mcp/",
        ] {
            assert!(covers(resource, &server), "{resource}");
        }
        for resource in [
            "https://evil.example.com/mcp",
            "http://localhost:3001/mcp",
            "http://localhost:3000/mcpx",
            "http://localhost:3000/other",
            "http://localhost:3000/mcp?x=1",
            "not a uri",
        ] {
            assert!(!covers(resource, &server), "{resource}");
        }
    }

    #[test]
    fn well_known_uris_insert_the_path() {
        let uri: Uri = "http://h:1/tenant1".parse().unwrap();
        assert_eq!(
            well_known(&uri, "oauth-authorization-server", true),
            [
                "http://h:1/.well-known/oauth-authorization-server/tenant1",
                "http://h:1/.well-known/oauth-authorization-server"
            ]
        );
        let root: Uri = "http://h:1".parse().unwrap();
        assert_eq!(
            well_known(&root, "openid-configuration", true),
            ["http://h:1/.well-known/openid-configuration"]
        );
    }
}

//! The canonical URI of this MCP server (RFC 8707 §2, the `resource` of
//! RFC 9728) and the well-known URIs of its metadata (RFC 9728 §3.1).

use std::fmt;

/// The well-known suffix of protected resource metadata (RFC 9728 §3).
pub(crate) const WELL_KNOWN: &str = "/.well-known/oauth-protected-resource";

/// A canonical resource URI: lowercase scheme and host, no fragment, no
/// query, no userinfo, and no trailing slash on an empty path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ResourceUri {
    /// `scheme://authority`, lowercased.
    origin: String,
    /// The path, `""` when the URI has none (never `"/"`).
    path: String,
}

/// Why a configured resource URI is not usable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InvalidResource(pub(crate) String);

impl fmt::Display for InvalidResource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for InvalidResource {}

impl ResourceUri {
    /// Parses and canonicalizes `text`. `https` is required, except on a
    /// loopback host (for local development and tests).
    pub(crate) fn parse(text: &str) -> Result<ResourceUri, InvalidResource> {
        let bad = |why: &str| Err(InvalidResource(format!("resource URI `{text}`: {why}")));
        if text.contains('#') {
            return bad("a resource URI has no fragment (RFC 8707 §2)");
        }
        let Some((scheme, rest)) = text.split_once("://") else {
            return bad("not an absolute URI: give the scheme, e.g. `https://mcp.example.com/mcp`");
        };
        let scheme = scheme.to_ascii_lowercase();
        let (authority, path) = match rest.find(['/', '?']) {
            Some(at) => rest.split_at(at),
            None => (rest, ""),
        };
        if path.contains('?') {
            return bad("give the resource URI without a query (RFC 8707 §2)");
        }
        if authority.is_empty() || authority.contains('@') {
            return bad("the authority must be a host (and port), without userinfo");
        }
        let origin = format!("{scheme}://{}", authority.to_ascii_lowercase());
        let Ok(uri) = origin.parse::<http::Uri>() else {
            return bad("not a valid URI");
        };
        let loopback = uri.host().is_some_and(is_loopback);
        match scheme.as_str() {
            "https" => {}
            "http" if loopback => {}
            _ => return bad("must use `https` (`http` only on a loopback host)"),
        }
        let path = if path == "/" { "" } else { path };
        Ok(ResourceUri {
            origin,
            path: path.to_owned(),
        })
    }

    /// `scheme://authority`, lowercased.
    #[cfg_attr(
        not(feature = "auth"),
        expect(dead_code, reason = "used by the DPoP checks (feature `auth`)")
    )]
    pub(crate) fn origin(&self) -> &str {
        &self.origin
    }

    /// The path component (`""` for none).
    pub(crate) fn path(&self) -> &str {
        &self.path
    }

    /// The well-known path of this resource's metadata: the suffix inserted
    /// between host and path (RFC 9728 §3.1).
    pub(crate) fn metadata_path(&self) -> String {
        format!("{WELL_KNOWN}{}", self.path)
    }

    /// The full URL of the metadata, as `resource_metadata` advertises it.
    pub(crate) fn metadata_url(&self) -> String {
        format!("{}{}", self.origin, self.metadata_path())
    }

    /// Whether `audience` names this resource. Scheme and host compare
    /// case-insensitively and an empty path equals `/`, as the spec asks
    /// servers to accept; everything else compares exactly.
    pub(crate) fn matches(&self, audience: &str) -> bool {
        ResourceUri::parse(audience).is_ok_and(|other| other == *self)
    }

    /// Whether a token's `aud` claim (a string or an array of strings)
    /// names this resource. A missing or malformed claim does not.
    #[cfg_attr(
        not(feature = "auth"),
        expect(dead_code, reason = "used by the built-in verifiers (feature `auth`)")
    )]
    pub(crate) fn is_audience_of(&self, claim: Option<&serde_json::Value>) -> bool {
        match claim {
            Some(serde_json::Value::String(aud)) => self.matches(aud),
            Some(serde_json::Value::Array(auds)) => auds
                .iter()
                .filter_map(serde_json::Value::as_str)
                .any(|aud| self.matches(aud)),
            _ => false,
        }
    }
}

impl ResourceUri {
    /// Where a loopback resource URI points (`host:port`, the scheme's
    /// port when it gives none) when that is not `bound`, the address the
    /// server listens on: its challenges and metadata would then send
    /// clients elsewhere. `None` for a resource that is not on loopback
    /// (a proxy or a name in front of the server is normal there) or that
    /// reaches `bound`.
    pub(crate) fn loopback_elsewhere(&self, bound: std::net::SocketAddr) -> Option<String> {
        let uri = self.origin.parse::<http::Uri>().ok()?;
        let host = uri.host().filter(|host| is_loopback(host))?;
        let port = uri
            .port_u16()
            .unwrap_or(if self.origin.starts_with("https:") {
                443
            } else {
                80
            });
        let ip = host.trim_start_matches('[').trim_end_matches(']');
        // `localhost` is whichever loopback address answers; an unspecified
        // bind address (0.0.0.0, ::) listens on loopback too.
        let reaches = match ip.parse::<std::net::IpAddr>() {
            Ok(ip) => ip == bound.ip() || bound.ip().is_unspecified(),
            Err(_) => bound.ip().is_loopback() || bound.ip().is_unspecified(),
        };
        (port != bound.port() || !reaches).then(|| format!("{host}:{port}"))
    }
}

impl fmt::Display for ResourceUri {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", self.origin, self.path)
    }
}

pub(crate) fn is_loopback(host: &str) -> bool {
    let host = host.trim_start_matches('[').trim_end_matches(']');
    host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> ResourceUri {
        ResourceUri::parse(text).unwrap()
    }

    /// The examples of the MCP spec (authorization-server-discovery) and of
    /// RFC 9728 §3.1.
    #[test]
    fn metadata_urls_match_the_spec_examples() {
        assert_eq!(
            parse("https://example.com/public/mcp").metadata_url(),
            "https://example.com/.well-known/oauth-protected-resource/public/mcp"
        );
        assert_eq!(
            parse("https://resource.example.com").metadata_url(),
            "https://resource.example.com/.well-known/oauth-protected-resource"
        );
        assert_eq!(
            parse("https://resource.example.com/resource1").metadata_url(),
            "https://resource.example.com/.well-known/oauth-protected-resource/resource1"
        );
        assert_eq!(
            parse("https://mcp.example.com/").metadata_url(),
            "https://mcp.example.com/.well-known/oauth-protected-resource"
        );
        assert_eq!(
            parse("https://mcp.example.com:8443").metadata_path(),
            "/.well-known/oauth-protected-resource"
        );
    }

    #[test]
    fn canonical_form_lowercases_scheme_and_host_only() {
        let uri = parse("HTTPS://MCP.Example.com/Server/MCP");
        assert_eq!(uri.to_string(), "https://mcp.example.com/Server/MCP");
        assert!(uri.matches("https://mcp.example.com/Server/MCP"));
        assert!(uri.matches("HTTPS://mcp.EXAMPLE.com/Server/MCP"));
        assert!(!uri.matches("https://mcp.example.com/server/mcp"));
        assert!(!uri.matches("https://mcp.example.com/Server/MCP/"));
        assert!(!uri.matches("https://other.example.com/Server/MCP"));
        assert!(parse("https://mcp.example.com").matches("https://mcp.example.com/"));
    }

    #[test]
    fn invalid_resource_uris_from_the_spec_are_rejected() {
        for bad in [
            "mcp.example.com",
            "https://mcp.example.com#fragment",
            "https://mcp.example.com/mcp?x=1",
            "http://mcp.example.com/mcp",
            "https://user@mcp.example.com/mcp",
            "ftp://mcp.example.com",
            "https:///mcp",
        ] {
            assert!(ResourceUri::parse(bad).is_err(), "{bad}");
        }
        assert!(ResourceUri::parse("http://127.0.0.1:8080/mcp").is_ok());
        assert!(ResourceUri::parse("http://localhost/mcp").is_ok());
        assert!(ResourceUri::parse("http://[::1]:9/mcp").is_ok());
    }

    #[test]
    fn a_loopback_resource_elsewhere_than_the_bound_address_is_named() {
        let bound: std::net::SocketAddr = "127.0.0.1:8080".parse().unwrap();
        let elsewhere = |text: &str| parse(text).loopback_elsewhere(bound);
        assert_eq!(elsewhere("http://127.0.0.1:8080/mcp"), None);
        assert_eq!(elsewhere("http://localhost:8080/mcp"), None);
        assert_eq!(elsewhere("https://mcp.example.com/mcp"), None);
        assert_eq!(
            elsewhere("http://127.0.0.1:9090/mcp").as_deref(),
            Some("127.0.0.1:9090")
        );
        assert_eq!(
            elsewhere("http://localhost/mcp").as_deref(),
            Some("localhost:80")
        );
        assert_eq!(
            elsewhere("http://[::1]:8080/mcp").as_deref(),
            Some("[::1]:8080")
        );
        let everywhere: std::net::SocketAddr = "0.0.0.0:8080".parse().unwrap();
        assert_eq!(
            parse("http://127.0.0.1:8080").loopback_elsewhere(everywhere),
            None
        );
    }
}

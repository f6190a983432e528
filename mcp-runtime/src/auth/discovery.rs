//! Authorization server metadata discovery (RFC 8414 §3.1 and OpenID
//! Connect Discovery), in the order the MCP spec gives, with the issuer
//! check of RFC 8414 §3.3: a document whose `issuer` is not the issuer we
//! asked about is never used.

use super::fetch::Fetcher;

/// The metadata URLs to try for `issuer`, in priority order.
pub(crate) fn metadata_urls(issuer: &str) -> Vec<String> {
    let issuer = issuer.trim_end_matches('/');
    let (origin, path) = match issuer.find("://") {
        Some(at) => match issuer[at + 3..].find('/') {
            Some(slash) => issuer.split_at(at + 3 + slash),
            None => (issuer, ""),
        },
        None => (issuer, ""),
    };
    if path.is_empty() {
        vec![
            format!("{origin}/.well-known/oauth-authorization-server"),
            format!("{origin}/.well-known/openid-configuration"),
        ]
    } else {
        vec![
            format!("{origin}/.well-known/oauth-authorization-server{path}"),
            format!("{origin}/.well-known/openid-configuration{path}"),
            format!("{origin}{path}/.well-known/openid-configuration"),
        ]
    }
}

/// Fetches the first metadata document that exists and names `issuer`.
pub(crate) async fn discover(fetcher: &Fetcher, issuer: &str) -> Result<serde_json::Value, String> {
    let mut problems = Vec::new();
    for url in metadata_urls(issuer) {
        match fetcher.get_json(&url).await {
            Ok(document) => {
                let named = document.get("issuer").and_then(|i| i.as_str());
                if named == Some(issuer) {
                    return Ok(document);
                }
                problems.push(format!(
                    "{url} names issuer {named:?}, not `{issuer}`: ignored"
                ));
            }
            Err(problem) => problems.push(problem),
        }
    }
    Err(format!(
        "no metadata for issuer `{issuer}`: {}",
        problems.join("; ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The examples of the MCP spec, Authorization Server Metadata Discovery.
    #[test]
    fn urls_follow_the_spec_priority_order() {
        assert_eq!(
            metadata_urls("https://auth.example.com/tenant1"),
            [
                "https://auth.example.com/.well-known/oauth-authorization-server/tenant1",
                "https://auth.example.com/.well-known/openid-configuration/tenant1",
                "https://auth.example.com/tenant1/.well-known/openid-configuration",
            ]
        );
        assert_eq!(
            metadata_urls("https://auth.example.com"),
            [
                "https://auth.example.com/.well-known/oauth-authorization-server",
                "https://auth.example.com/.well-known/openid-configuration",
            ]
        );
    }
}

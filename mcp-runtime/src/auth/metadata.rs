//! The Protected Resource Metadata document (RFC 9728 §2), serialized once
//! when the server starts.

use serde::Serialize;

/// RFC 9728 §2 fields this server publishes.
#[derive(Serialize)]
struct Document<'a> {
    resource: String,
    authorization_servers: &'a [String],
    /// Only the `Authorization` header: tokens in a query string or a form
    /// body are refused (MCP authorization, Access Token Usage).
    bearer_methods_supported: [&'static str; 1],
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    scopes_supported: &'a [String],
    #[serde(skip_serializing_if = "Option::is_none")]
    resource_name: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    resource_documentation: Option<&'a str>,
    /// The algorithms DPoP proofs may use (RFC 9449 §5.1), when this
    /// server checks proofs.
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    dpop_signing_alg_values_supported: &'a [&'static str],
    /// Only DPoP-bound tokens are accepted (RFC 9449 §5.2).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    dpop_bound_access_tokens_required: bool,
}

pub(crate) fn document(
    resource: &super::resource::ResourceUri,
    authorization_servers: &[String],
    scopes_supported: &[String],
    resource_name: Option<&str>,
    resource_documentation: Option<&str>,
    (dpop_algs, dpop_required): (&[&'static str], bool),
) -> Vec<u8> {
    serde_json::to_vec(&Document {
        resource: resource.to_string(),
        authorization_servers,
        bearer_methods_supported: ["header"],
        scopes_supported,
        resource_name,
        resource_documentation,
        dpop_signing_alg_values_supported: dpop_algs,
        dpop_bound_access_tokens_required: dpop_required,
    })
    .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::super::resource::ResourceUri;
    use super::*;

    #[test]
    fn document_has_the_rfc_9728_fields() {
        let resource = ResourceUri::parse("https://MCP.example.com/mcp").unwrap();
        let doc = document(
            &resource,
            &["https://auth.example.com".to_owned()],
            &["notes:read".to_owned(), "notes:write".to_owned()],
            Some("Notes"),
            None,
            (&[], false),
        );
        assert_eq!(
            String::from_utf8(doc).unwrap(),
            r#"{"resource":"https://mcp.example.com/mcp","authorization_servers":["https://auth.example.com"],"bearer_methods_supported":["header"],"scopes_supported":["notes:read","notes:write"],"resource_name":"Notes"}"#
        );
        let doc = document(
            &resource,
            &["https://a".to_owned()],
            &[],
            None,
            None,
            (&[], false),
        );
        assert_eq!(
            String::from_utf8(doc).unwrap(),
            r#"{"resource":"https://mcp.example.com/mcp","authorization_servers":["https://a"],"bearer_methods_supported":["header"]}"#
        );
        let doc = document(
            &resource,
            &["https://a".to_owned()],
            &[],
            None,
            None,
            (&["ES256", "PS256"], true),
        );
        assert_eq!(
            String::from_utf8(doc).unwrap(),
            r#"{"resource":"https://mcp.example.com/mcp","authorization_servers":["https://a"],"bearer_methods_supported":["header"],"dpop_signing_alg_values_supported":["ES256","PS256"],"dpop_bound_access_tokens_required":true}"#
        );
    }
}

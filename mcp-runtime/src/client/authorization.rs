//! An HTTP server's refusal to authorize a request: the status (`401`,
//! `403`) and its `WWW-Authenticate: Bearer` challenge (RFC 6750 §3, RFC
//! 9728 §5.1), read so that a caller can say what is missing rather than
//! fail on the OAuth-style body, which is no JSON-RPC response.

use std::fmt;

/// A `Bearer` challenge from `WWW-Authenticate`: what the server says is
/// wrong with the request's credentials, and where to get better ones.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct BearerChallenge {
    /// The error code: `invalid_token`, `insufficient_scope`,
    /// `invalid_request`; `None` when no credentials were sent.
    pub error: Option<String>,
    /// The scopes the request needs (space-separated).
    pub scope: Option<String>,
    /// The server's Protected Resource Metadata URL (RFC 9728), which
    /// names its authorization servers.
    pub resource_metadata: Option<String>,
    /// A human-readable explanation.
    pub error_description: Option<String>,
}

impl BearerChallenge {
    /// The `Bearer` challenge among the challenges of a `WWW-Authenticate`
    /// value, if there is one.
    pub fn parse(header: &str) -> Option<BearerChallenge> {
        Self::parse_scheme(header, "bearer")
    }

    /// The challenge of `scheme` (`Bearer`, `DPoP`) among those of a
    /// `WWW-Authenticate` value: both carry the same parameters.
    pub(crate) fn parse_scheme(header: &str, scheme: &str) -> Option<BearerChallenge> {
        let mut rest = header.trim_start();
        let mut challenge = None;
        while !rest.is_empty() {
            let (word, after) = split_token(rest);
            rest = after.trim_start();
            if rest.starts_with('=') {
                // An auth-param of the current challenge.
                let (value, after) = param_value(rest[1..].trim_start());
                rest = after.trim_start().trim_start_matches(',').trim_start();
                if let Some(challenge) = challenge.as_mut() {
                    set_param(challenge, word, value);
                }
            } else if word.is_empty() {
                rest = rest.get(1..).unwrap_or("").trim_start();
            } else if challenge.is_some() {
                // The next challenge's scheme.
                break;
            } else if word.eq_ignore_ascii_case(scheme) {
                challenge = Some(BearerChallenge::default());
            }
        }
        challenge
    }

    /// The scopes the request needs, one by one.
    pub fn scopes(&self) -> Vec<&str> {
        self.scope
            .as_deref()
            .map(|scope| scope.split_ascii_whitespace().collect())
            .unwrap_or_default()
    }
}

fn set_param(challenge: &mut BearerChallenge, name: &str, value: String) {
    let slot = match name.to_ascii_lowercase().as_str() {
        "resource_metadata" => &mut challenge.resource_metadata,
        "scope" => &mut challenge.scope,
        "error" => &mut challenge.error,
        "error_description" => &mut challenge.error_description,
        _ => return,
    };
    *slot = Some(value);
}

/// A token (`tchar`s) at the start of `text`, and what follows it.
fn split_token(text: &str) -> (&str, &str) {
    let end = text
        .find(|c: char| !(c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c)))
        .unwrap_or(text.len());
    text.split_at(end)
}

/// A quoted string (with `\` escapes) or a token.
fn param_value(text: &str) -> (String, &str) {
    let Some(quoted) = text.strip_prefix('"') else {
        let (token, rest) = split_token(text);
        return (token.to_owned(), rest);
    };
    let mut value = String::new();
    let mut chars = quoted.char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '"' => return (value, &quoted[i + 1..]),
            '\\' => value.extend(chars.next().map(|(_, c)| c)),
            c => value.push(c),
        }
    }
    (value, "")
}

/// The server refused to authorize a request: `401` (no valid token) or
/// `403` (a token without the scopes the request needs), with the
/// server's `Bearer` challenge when it sent one.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct AuthorizationError {
    /// The HTTP status.
    pub status: u16,
    /// The `WWW-Authenticate: Bearer` challenge, if there was one.
    pub challenge: Option<BearerChallenge>,
}

impl AuthorizationError {
    /// A refusal with `status` and the `WWW-Authenticate` value, if any.
    #[cfg_attr(
        not(feature = "http"),
        expect(dead_code, reason = "only the HTTP transport is refused authorization")
    )]
    pub(crate) fn new(status: u16, www_authenticate: Option<&str>) -> Self {
        AuthorizationError {
            status,
            challenge: www_authenticate.and_then(BearerChallenge::parse),
        }
    }

    /// The challenge's error code, if there is one.
    pub fn error(&self) -> Option<&str> {
        self.challenge.as_ref()?.error.as_deref()
    }
}

/// One line: `the server refused the request: HTTP 403 insufficient_scope
/// (needs scope "notes:write"); resource metadata at https://...`.
impl fmt::Display for AuthorizationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "the server refused the request: HTTP {}", self.status)?;
        let Some(challenge) = &self.challenge else {
            return Ok(());
        };
        let scopes = quoted(&challenge.scopes());
        match (challenge.error.as_deref(), challenge.scopes().len()) {
            (Some("insufficient_scope"), 1) => {
                write!(f, " insufficient_scope (needs scope {scopes})")?
            }
            (Some("insufficient_scope"), 2..) => {
                write!(f, " insufficient_scope (needs scopes {scopes})")?;
            }
            (Some(error), _) => {
                write!(f, " {error}")?;
                if let Some(description) = &challenge.error_description {
                    write!(f, ": {description}")?;
                }
            }
            (None, 0) => f.write_str(": a bearer token is needed")?,
            (None, _) => write!(f, ": a bearer token is needed (scope {scopes})")?,
        }
        if let Some(url) = &challenge.resource_metadata {
            write!(f, "; resource metadata at {url}")?;
        }
        Ok(())
    }
}

/// `"a"`, or `"a" "b"`: each scope quoted (they are the client's to copy).
fn quoted(scopes: &[&str]) -> String {
    let quoted: Vec<String> = scopes.iter().map(|s| format!("{s:?}")).collect();
    quoted.join(" ")
}

impl std::error::Error for AuthorizationError {}

#[cfg(test)]
mod tests {
    use super::*;

    const META: &str = "http://h/.well-known/oauth-protected-resource/mcp";

    #[test]
    fn bearer_challenges_are_read_among_others() {
        let challenge = BearerChallenge::parse(
            r#"Basic realm="x", Bearer error="insufficient_scope", scope="mcp:write mcp:basic", resource_metadata="http://h/.well-known/oauth-protected-resource/mcp", error_description="a \"quoted\" word", DPoP algs="ES256""#,
        )
        .unwrap();
        assert_eq!(
            challenge,
            BearerChallenge {
                resource_metadata: Some(META.into()),
                scope: Some("mcp:write mcp:basic".into()),
                error: Some("insufficient_scope".into()),
                error_description: Some(r#"a "quoted" word"#.into()),
            }
        );
        assert_eq!(challenge.scopes(), ["mcp:write", "mcp:basic"]);
        assert_eq!(
            BearerChallenge::parse("Bearer"),
            Some(BearerChallenge::default())
        );
        assert_eq!(BearerChallenge::parse(r#"Basic realm="x""#), None);
        assert_eq!(
            BearerChallenge::parse("bearer error=invalid_token")
                .unwrap()
                .error
                .as_deref(),
            Some("invalid_token")
        );
    }

    #[test]
    fn refusals_say_what_is_missing_and_where_to_get_it() {
        let shown =
            |status, header: Option<&str>| AuthorizationError::new(status, header).to_string();
        assert_eq!(
            shown(
                403,
                Some(&format!(
                    r#"Bearer error="insufficient_scope", scope="notes:write", resource_metadata="{META}", error_description="this request needs the scope(s) notes:write""#
                ))
            ),
            format!(
                r#"the server refused the request: HTTP 403 insufficient_scope (needs scope "notes:write"); resource metadata at {META}"#
            )
        );
        assert_eq!(
            shown(
                403,
                Some(r#"Bearer error="insufficient_scope", scope="a b""#)
            ),
            r#"the server refused the request: HTTP 403 insufficient_scope (needs scopes "a" "b")"#
        );
        assert_eq!(
            shown(
                401,
                Some(r#"Bearer error="invalid_token", error_description="the token has expired""#)
            ),
            "the server refused the request: HTTP 401 invalid_token: the token has expired"
        );
        assert_eq!(
            shown(
                401,
                Some(&format!(
                    r#"Bearer scope="notes:read", resource_metadata="{META}""#
                ))
            ),
            format!(
                r#"the server refused the request: HTTP 401: a bearer token is needed (scope "notes:read"); resource metadata at {META}"#
            )
        );
        assert_eq!(
            shown(401, Some("Bearer")),
            "the server refused the request: HTTP 401: a bearer token is needed"
        );
        assert_eq!(shown(403, None), "the server refused the request: HTTP 403");
    }
}

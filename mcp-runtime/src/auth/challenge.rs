//! Refusals: `401`/`403`/`400` with a `WWW-Authenticate: Bearer` challenge
//! (RFC 6750 §3, RFC 9728 §5.1), or a `DPoP` one for proof-of-possession
//! (RFC 9449 §7.1), and an OAuth-style JSON body.

#[cfg(feature = "auth")]
use http::HeaderName;
use http::header::{CACHE_CONTROL, CONTENT_TYPE, WWW_AUTHENTICATE};
use http::{HeaderValue, StatusCode};

/// The header a server's nonce travels in (RFC 9449 §8).
#[cfg(feature = "auth")]
pub(crate) const DPOP_NONCE: HeaderName = HeaderName::from_static("dpop-nonce");

/// The header a DPoP proof travels in (RFC 9449 §4.1).
#[cfg(feature = "auth")]
pub(crate) const DPOP: HeaderName = HeaderName::from_static("dpop");

/// Why a request was not admitted.
#[derive(Debug)]
pub(crate) enum Denied {
    Refused(Refusal),
    /// The token could not be checked now.
    Unavailable,
}

/// Why a request is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// No credentials at all: 401 without an error code (RFC 6750 §3.1).
    Missing,
    /// A token was sent but it does not verify: 401 `invalid_token`.
    InvalidToken(String),
    /// The token lacks scopes this request needs: 403 `insufficient_scope`.
    InsufficientScope(Vec<&'static str>),
    /// Credentials sent in a way the spec forbids (query string, several
    /// methods, a malformed header): 400 `invalid_request`.
    InvalidRequest(&'static str),
    /// A DPoP-bound token's proof is missing or wrong: 401
    /// `invalid_dpop_proof` in a `DPoP` challenge (RFC 9449 §7.1). Only
    /// the proof checks (feature `auth`) make one, and so for the nonce:
    /// binaries without them carry neither.
    #[cfg(feature = "auth")]
    InvalidDpopProof(String),
    /// The token does not fit the `DPoP` scheme (unbound, or bound to no
    /// key this server can check): 401 `invalid_token`, `DPoP` challenge.
    InvalidDpopToken(String),
    /// The proof lacks a fresh nonce of this server's: 401
    /// `use_dpop_nonce` with the nonce to use in `DPoP-Nonce` (RFC 9449 §9).
    /// Boxed: the refusals every request's future may hold stay small.
    #[cfg(feature = "auth")]
    UseDpopNonce(Box<NonceChallenge>),
}

/// The nonce a client must use, and why.
#[cfg(feature = "auth")]
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct NonceChallenge {
    pub(crate) nonce: String,
    pub(crate) why: &'static str,
}

/// What a `DPoP` challenge carries besides the refusal: the algorithms
/// proofs may be signed with (`algs`), and whether a `Missing` refusal
/// asks for DPoP rather than a bearer token.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct DpopChallenge<'a> {
    pub(crate) algs: &'a str,
    pub(crate) required: bool,
}

impl Refusal {
    pub(crate) fn status(&self) -> StatusCode {
        match self {
            Refusal::Missing | Refusal::InvalidToken(_) | Refusal::InvalidDpopToken(_) => {
                StatusCode::UNAUTHORIZED
            }
            #[cfg(feature = "auth")]
            Refusal::InvalidDpopProof(_) | Refusal::UseDpopNonce(_) => StatusCode::UNAUTHORIZED,
            Refusal::InsufficientScope(_) => StatusCode::FORBIDDEN,
            Refusal::InvalidRequest(_) => StatusCode::BAD_REQUEST,
        }
    }

    fn error(&self) -> Option<&'static str> {
        match self {
            Refusal::Missing => None,
            Refusal::InvalidToken(_) | Refusal::InvalidDpopToken(_) => Some("invalid_token"),
            Refusal::InsufficientScope(_) => Some("insufficient_scope"),
            Refusal::InvalidRequest(_) => Some("invalid_request"),
            #[cfg(feature = "auth")]
            Refusal::InvalidDpopProof(_) => Some("invalid_dpop_proof"),
            #[cfg(feature = "auth")]
            Refusal::UseDpopNonce(_) => Some("use_dpop_nonce"),
        }
    }

    /// Whether the challenge is `DPoP`'s rather than `Bearer`'s.
    fn is_dpop(&self, dpop: DpopChallenge<'_>) -> bool {
        match self {
            Refusal::InvalidDpopToken(_) => true,
            #[cfg(feature = "auth")]
            Refusal::InvalidDpopProof(_) | Refusal::UseDpopNonce(_) => true,
            Refusal::Missing => dpop.required,
            _ => false,
        }
    }

    fn description(&self) -> Option<std::borrow::Cow<'_, str>> {
        match self {
            Refusal::Missing => None,
            Refusal::InvalidToken(why) | Refusal::InvalidDpopToken(why) => {
                Some(why.as_str().into())
            }
            #[cfg(feature = "auth")]
            Refusal::InvalidDpopProof(why) => Some(why.as_str().into()),
            #[cfg(feature = "auth")]
            Refusal::UseDpopNonce(nonce) => Some(nonce.why.into()),
            Refusal::InvalidRequest(why) => Some((*why).into()),
            Refusal::InsufficientScope(scopes) => {
                Some(format!("this request needs the scope(s) {}", scopes.join(" ")).into())
            }
        }
    }

    /// The `WWW-Authenticate` value. `scope` is the guidance for a client
    /// without a (valid) token: the scopes this request needs, or the
    /// server's basic scopes. Written in one string, parameter by
    /// parameter: refusals are rare, and every binary with HTTP has this.
    pub(crate) fn challenge(
        &self,
        metadata_url: &str,
        scope: &[&str],
        dpop: DpopChallenge<'_>,
    ) -> String {
        let is_dpop = self.is_dpop(dpop);
        let mut out = String::from(if is_dpop { "DPoP" } else { "Bearer" });
        if let Some(error) = self.error() {
            param(&mut out, "error", &[error]);
        }
        // Scope guidance helps a client get a (better) token; a malformed
        // request is fixed by sending the token properly instead.
        let scope = match self {
            Refusal::InsufficientScope(needed) => needed.as_slice(),
            Refusal::Missing | Refusal::InvalidToken(_) | Refusal::InvalidDpopToken(_) => scope,
            _ => &[],
        };
        if !scope.is_empty() {
            param(&mut out, "scope", scope);
        }
        param(&mut out, "resource_metadata", &[metadata_url]);
        if is_dpop && !dpop.algs.is_empty() {
            param(&mut out, "algs", &[dpop.algs]);
        }
        if let Some(description) = self.description() {
            param(&mut out, "error_description", &[description.as_ref()]);
        }
        out
    }

    /// The JSON body: the OAuth error object (RFC 6749 §5.2 shape). The
    /// error codes are plain ASCII; the description is escaped by
    /// serde_json.
    pub(crate) fn body(&self) -> Vec<u8> {
        let mut body = String::from(r#"{"error":""#);
        body.push_str(self.error().unwrap_or("unauthorized"));
        body.push('"');
        if let Some(description) = self.description() {
            body.push_str(r#","error_description":"#);
            body.push_str(&serde_json::to_string(description.as_ref()).unwrap_or_default());
        }
        body.push('}');
        body.into_bytes()
    }

    pub(crate) fn response<B>(
        &self,
        metadata_url: &str,
        scope: &[&str],
        dpop: DpopChallenge<'_>,
        body: impl FnOnce(Vec<u8>) -> B,
    ) -> http::Response<B> {
        let mut response = http::Response::new(body(self.body()));
        *response.status_mut() = self.status();
        let headers = response.headers_mut();
        if let Ok(value) = HeaderValue::from_str(&self.challenge(metadata_url, scope, dpop)) {
            headers.insert(WWW_AUTHENTICATE, value);
        }
        #[cfg(feature = "auth")]
        if let Refusal::UseDpopNonce(nonce) = self
            && let Ok(value) = HeaderValue::from_str(&nonce.nonce)
        {
            headers.insert(DPOP_NONCE, value);
        }
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
        response
    }
}

/// Appends ` name="v1 v2"` (`, ` before every parameter but the first),
/// keeping only the characters RFC 6750 §3 allows inside these quoted
/// values (`%x20-21 / %x23-5B / %x5D-7E`): no quote, backslash or control
/// byte can break out of the header parameter.
fn param(out: &mut String, name: &str, words: &[&str]) {
    out.push_str(if out.ends_with('"') { ", " } else { " " });
    out.push_str(name);
    out.push_str("=\"");
    for (i, word) in words.iter().enumerate() {
        if i > 0 {
            out.push(' ');
        }
        out.extend(word.chars().map(|c| match c {
            ' ' | '!' | '#'..='[' | ']'..='~' => c,
            _ => '?',
        }));
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;

    const META: &str = "https://mcp.example.com/.well-known/oauth-protected-resource/mcp";
    const NO_DPOP: DpopChallenge<'static> = DpopChallenge {
        algs: "",
        required: false,
    };

    #[test]
    fn missing_token_has_no_error_code_and_carries_metadata_and_scope() {
        let r = Refusal::Missing;
        assert_eq!(r.status(), StatusCode::UNAUTHORIZED);
        assert_eq!(
            r.challenge(META, &["notes:read"], NO_DPOP),
            format!(r#"Bearer scope="notes:read", resource_metadata="{META}""#)
        );
        assert_eq!(
            r.challenge(META, &[], NO_DPOP),
            format!(r#"Bearer resource_metadata="{META}""#)
        );
        assert_eq!(r.body(), br#"{"error":"unauthorized"}"#);
    }

    #[test]
    fn invalid_token_challenge() {
        let r = Refusal::InvalidToken("the token has expired".into());
        assert_eq!(r.status(), StatusCode::UNAUTHORIZED);
        assert_eq!(
            r.challenge(META, &[], NO_DPOP),
            format!(
                r#"Bearer error="invalid_token", resource_metadata="{META}", error_description="the token has expired""#
            )
        );
        assert_eq!(
            r.body(),
            br#"{"error":"invalid_token","error_description":"the token has expired"}"#
        );
    }

    #[test]
    fn insufficient_scope_names_every_needed_scope_in_one_challenge() {
        let r = Refusal::InsufficientScope(vec!["notes:write", "notes:read"]);
        assert_eq!(r.status(), StatusCode::FORBIDDEN);
        assert_eq!(
            r.challenge(META, &["ignored"], NO_DPOP),
            format!(
                r#"Bearer error="insufficient_scope", scope="notes:write notes:read", resource_metadata="{META}", error_description="this request needs the scope(s) notes:write notes:read""#
            )
        );
    }

    #[test]
    fn invalid_request_and_quoting() {
        let r = Refusal::InvalidRequest("send the access token in the Authorization header");
        assert_eq!(r.status(), StatusCode::BAD_REQUEST);
        assert!(
            r.challenge(META, &[], NO_DPOP)
                .starts_with(r#"Bearer error="invalid_request", "#)
        );
        let r = Refusal::InvalidToken("bad \"quote\" \\ and\nnewline".into());
        assert!(
            r.challenge(META, &[], NO_DPOP)
                .ends_with(r#"error_description="bad ?quote? ? and?newline""#)
        );
        let response = r.response(META, &[], NO_DPOP, |b| b);
        assert_eq!(response.headers()[CACHE_CONTROL], "no-store");
        assert!(response.headers().contains_key(WWW_AUTHENTICATE));
    }

    /// RFC 9449 §7.1's challenges: the scheme, the error and the
    /// algorithms; the nonce travels in its own header (§9).
    #[cfg(feature = "auth")]
    #[test]
    fn dpop_challenges() {
        let dpop = DpopChallenge {
            algs: "ES256 PS256",
            required: false,
        };
        let r = Refusal::InvalidDpopProof("the proof names another URL".into());
        assert_eq!(r.status(), StatusCode::UNAUTHORIZED);
        assert_eq!(
            r.challenge(META, &["notes:read"], dpop),
            format!(
                r#"DPoP error="invalid_dpop_proof", resource_metadata="{META}", algs="ES256 PS256", error_description="the proof names another URL""#
            )
        );
        let r = Refusal::UseDpopNonce(Box::new(NonceChallenge {
            nonce: "n-1".into(),
            why: "use this server's nonce",
        }));
        let response = r.response(META, &[], dpop, |b| b);
        assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
        assert_eq!(response.headers()[DPOP_NONCE], "n-1");
        assert_eq!(
            response.headers()[WWW_AUTHENTICATE],
            format!(
                r#"DPoP error="use_dpop_nonce", resource_metadata="{META}", algs="ES256 PS256", error_description="use this server's nonce""#
            )
            .as_str()
        );
        assert_eq!(
            response.body(),
            br#"{"error":"use_dpop_nonce","error_description":"use this server's nonce"}"#
        );
        // Without a token: Bearer unless the server requires DPoP.
        assert!(
            Refusal::Missing
                .challenge(META, &[], dpop)
                .starts_with("Bearer ")
        );
        let required = DpopChallenge {
            required: true,
            ..dpop
        };
        assert_eq!(
            Refusal::Missing.challenge(META, &[], required),
            format!(r#"DPoP resource_metadata="{META}", algs="ES256 PS256""#)
        );
        let r = Refusal::InvalidToken("the token has expired".into());
        assert!(r.challenge(META, &[], required).starts_with("Bearer "));
    }
}

//! The verifier interface: access token in, [`Principal`] out.

use std::fmt;
use std::future::Future;
use std::pin::Pin;

use crate::security::Principal;

/// The future a [`TokenVerifier`] returns.
pub type VerifyFuture<'a> =
    Pin<Box<dyn Future<Output = Result<Principal, VerifyError>> + Send + 'a>>;

/// Checks an access token and says who it stands for.
///
/// Built in, with the `auth` feature: `JwtVerifier` (RFC 9068 JWTs against
/// the issuer's JWKS) and `IntrospectionVerifier` (RFC 7662). Implement it for anything else (a gateway's session store,
/// mTLS-bound tokens...).
///
/// A verifier must check that the token was issued for this server (its
/// audience) and is still valid: the runtime only checks scopes afterwards.
/// It must never log the token.
pub trait TokenVerifier: Send + Sync + 'static {
    /// Verifies `token` (the credentials after `Bearer `).
    fn verify<'a>(&'a self, token: &'a str) -> VerifyFuture<'a>;
}

/// Why a token was not accepted. Everything but
/// [`Unavailable`](Self::Unavailable) answers 401 `invalid_token`; the
/// `Display` text becomes the challenge's `error_description`, so it never
/// contains the token.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum VerifyError {
    /// Not a well-formed token of the kind this verifier reads.
    Malformed(String),
    /// Signed with an algorithm that is not allowed (`none`, HMAC, or one
    /// outside the allow-list).
    Algorithm(String),
    /// The JWT `typ` is not `at+jwt` (RFC 9068 §4).
    Type,
    /// No key of the issuer matches the token, even after a refresh.
    UnknownKey,
    /// The signature does not verify.
    Signature,
    /// Issued by an authorization server this server does not trust.
    Issuer,
    /// Issued for another resource: the audience is not this server.
    Audience,
    /// Past its expiry.
    Expired,
    /// Not valid yet (`nbf` in the future).
    NotYetValid,
    /// A required claim is missing or has the wrong type.
    Claim(&'static str),
    /// The authorization server says the token is not active (revoked,
    /// expired or unknown).
    Inactive,
    /// The token could not be checked now (the authorization server is
    /// unreachable): answered with 503, not 401, since the token may well
    /// be valid.
    Unavailable(String),
}

impl fmt::Display for VerifyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            VerifyError::Malformed(why) => write!(f, "the access token is malformed: {why}"),
            VerifyError::Algorithm(alg) => {
                write!(f, "the token's signing algorithm `{alg}` is not accepted")
            }
            VerifyError::Type => f.write_str("the token is not a JWT access token (typ at+jwt)"),
            VerifyError::UnknownKey => f.write_str("the token is signed with an unknown key"),
            VerifyError::Signature => f.write_str("the token's signature is invalid"),
            VerifyError::Issuer => f.write_str("the token is from an untrusted issuer"),
            VerifyError::Audience => f.write_str("the token was not issued for this resource"),
            VerifyError::Expired => f.write_str("the token has expired"),
            VerifyError::NotYetValid => f.write_str("the token is not valid yet"),
            VerifyError::Claim(claim) => {
                write!(f, "the token's `{claim}` claim is missing or invalid")
            }
            VerifyError::Inactive => f.write_str("the token is not active"),
            VerifyError::Unavailable(why) => write!(f, "the token cannot be verified now: {why}"),
        }
    }
}

impl std::error::Error for VerifyError {}

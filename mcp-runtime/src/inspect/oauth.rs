//! The inspector's OAuth options (feature `oauth-client`): how `--url`
//! authorizes when the server asks. Without the feature the options are
//! empty, and a protected server is reached with `--header
//! "Authorization: Bearer ..."`.

#[cfg(feature = "oauth-client")]
pub(crate) use self::enabled::OAuthOptions;

#[cfg(not(feature = "oauth-client"))]
pub(crate) use self::disabled::OAuthOptions;

#[cfg(feature = "oauth-client")]
mod enabled {
    use clap::{Args, ValueEnum};

    use crate::client::Remote;
    use crate::client::oauth::{Authorize, OAuth};

    /// How --url authorizes when the server asks for OAuth (a 401).
    #[derive(Args, Debug)]
    pub(crate) struct OAuthOptions {
        /// A client ID registered with the authorization server beforehand
        /// (else a Client ID Metadata Document, else dynamic registration).
        #[arg(long, value_name = "ID", requires = "url")]
        client_id: Option<String>,
        /// The secret of --client-id, for a confidential client.
        #[arg(long, value_name = "SECRET", requires = "client_id")]
        client_secret: Option<String>,
        /// The issuer --client-id is registered with: used with no other.
        #[arg(long, value_name = "URL", requires = "client_id")]
        client_issuer: Option<String>,
        /// This client's Client ID Metadata Document (an https URL), its
        /// client_id where the authorization server supports such documents.
        #[arg(long, value_name = "URL", requires = "url")]
        client_metadata_url: Option<String>,
        /// How the authorization response comes back: `browser` (open the
        /// printed URL; it returns to a loopback port) or `fetch` (the
        /// inspector requests the URL itself, for servers that approve without
        /// a person).
        #[arg(long, value_enum, default_value = "browser", requires = "url")]
        authorize: AuthorizeBy,
        /// Keep tokens and registrations in this file (owner-only) between
        /// runs, with refresh tokens.
        #[arg(long, value_name = "FILE", requires = "url")]
        token_cache: Option<std::path::PathBuf>,
        /// The grant: `authorization-code` (a user approves, in a browser
        /// or as --authorize says), `client-credentials` (this client
        /// acting for itself, no user: needs --client-id, and
        /// --client-secret or --client-key) or `jwt-bearer` (a workload's
        /// identity token from --assertion-file, exchanged for a token:
        /// needs --client-id).
        #[arg(
            long,
            value_enum,
            default_value = "authorization-code",
            requires = "url",
            requires_ifs([
                ("client-credentials", "client_id"),
                ("jwt-bearer", "client_id"),
                ("jwt-bearer", "assertion_file"),
            ])
        )]
        grant: GrantBy,
        /// With --grant jwt-bearer: the file holding the workload's JWT (a
        /// Kubernetes service account token, a CI system's OIDC token),
        /// read at each authorization.
        #[arg(long, value_name = "FILE")]
        assertion_file: Option<std::path::PathBuf>,
        /// With --grant client-credentials: the client authenticates with a
        /// JWT signed by this private key (a PEM file; `private_key_jwt`)
        /// instead of a secret.
        #[cfg(feature = "oauth-client-jose")]
        #[arg(
            long,
            value_name = "PEM FILE",
            requires = "client_id",
            conflicts_with = "client_secret"
        )]
        client_key: Option<std::path::PathBuf>,
        /// Binds tokens to a key of this client's (DPoP, RFC 9449): a
        /// fresh proof on every token request and every request to the
        /// server; the key is kept in --token-cache with the tokens.
        #[cfg(feature = "oauth-client-jose")]
        #[arg(long, requires = "url")]
        dpop: bool,
        /// The JWS algorithm of --client-key.
        #[cfg(feature = "oauth-client-jose")]
        #[arg(
            long,
            value_name = "ALG",
            default_value = "ES256",
            requires = "client_key"
        )]
        client_key_algorithm: String,
    }

    /// `--grant`.
    #[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
    pub(crate) enum GrantBy {
        /// The authorization code flow with PKCE.
        AuthorizationCode,
        /// The client credentials grant.
        ClientCredentials,
        /// The JWT bearer grant, with a workload's identity token.
        JwtBearer,
    }

    /// `--authorize`.
    #[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
    pub(crate) enum AuthorizeBy {
        /// In a browser.
        Browser,
        /// By requesting the authorization URL directly.
        Fetch,
    }

    impl OAuthOptions {
        /// `remote`, authorizing with OAuth as these options say.
        pub(in crate::inspect) fn apply(&self, remote: Remote) -> Remote {
            remote.oauth(self.settings())
        }

        fn settings(&self) -> OAuth {
            let mut oauth = OAuth::new("mcp-runtime inspector").authorize(match self.authorize {
                AuthorizeBy::Browser => Authorize::Browser,
                AuthorizeBy::Fetch => Authorize::Fetch,
            });
            if let Some(id) = &self.client_id {
                oauth = oauth.client(id, self.client_secret.clone(), self.client_issuer.clone());
            }
            if let Some(url) = &self.client_metadata_url {
                oauth = oauth.client_metadata_url(url);
            }
            if let Some(path) = &self.token_cache {
                oauth = oauth.token_cache(path);
            }
            match (self.grant, &self.assertion_file) {
                (GrantBy::ClientCredentials, _) => oauth = oauth.client_credentials(),
                (GrantBy::JwtBearer, Some(path)) => oauth = oauth.jwt_bearer_file(path),
                _ => {}
            }
            #[cfg(feature = "oauth-client-jose")]
            {
                if self.dpop {
                    oauth = oauth.dpop();
                }
                if let Some(path) = &self.client_key {
                    oauth = oauth.private_key_jwt_file(path, &self.client_key_algorithm);
                }
            }
            oauth
        }
    }
}

#[cfg(not(feature = "oauth-client"))]
mod disabled {
    use clap::Args;

    use crate::client::Remote;

    /// No OAuth options: this binary was built without `oauth-client`.
    #[derive(Args, Debug)]
    pub(crate) struct OAuthOptions {}

    impl OAuthOptions {
        /// `remote` as it is.
        pub(in crate::inspect) fn apply(&self, remote: Remote) -> Remote {
            remote
        }
    }
}

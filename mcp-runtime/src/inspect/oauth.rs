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
    use std::path::PathBuf;

    use clap::{ArgGroup, Args, ValueEnum};

    use crate::client::Remote;
    use crate::client::oauth::{Authorize, EnterpriseIdp, IdentityAssertion, OAuth};

    /// How --url authorizes when the server asks for OAuth (a 401).
    #[derive(Args, Debug)]
    #[command(group(
        ArgGroup::new("identity_assertion").args(["id_token_file", "saml_assertion_file"])
    ))]
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
        token_cache: Option<PathBuf>,
        /// The grant: `authorization-code` (a user approves, in a browser
        /// or as --authorize says), `client-credentials` (this client
        /// acting for itself, no user: needs --client-id, and
        /// --client-secret or --client-key), `jwt-bearer` (a workload's
        /// identity token from --assertion-file, exchanged for a token:
        /// needs --client-id) or `enterprise` (enterprise-managed
        /// authorization: the user's identity assertion, --id-token-file
        /// or --saml-assertion-file, traded at the identity provider's
        /// --idp-token-endpoint as --idp-client-id for an ID-JAG, which is
        /// presented for the token as --client-id, else as
        /// --client-metadata-url).
        #[arg(
            long,
            value_enum,
            default_value = "authorization-code",
            requires = "url",
            requires_ifs([
                ("client-credentials", "client_id"),
                ("jwt-bearer", "client_id"),
                ("jwt-bearer", "assertion_file"),
                ("enterprise", "idp_token_endpoint"),
                ("enterprise", "idp_client_id"),
                ("enterprise", "identity_assertion"),
            ])
        )]
        grant: GrantBy,
        /// With --grant jwt-bearer: the file holding the workload's JWT (a
        /// Kubernetes service account token, a CI system's OIDC token),
        /// read at each authorization.
        #[arg(long, value_name = "FILE")]
        assertion_file: Option<PathBuf>,
        /// With --grant enterprise: the token endpoint of the
        /// organization's identity provider, where the user's identity
        /// assertion is traded for an ID-JAG.
        #[arg(long, value_name = "URL")]
        idp_token_endpoint: Option<String>,
        /// With --grant enterprise: this client's id at the identity
        /// provider (the audience of the user's ID token).
        #[arg(long, value_name = "ID")]
        idp_client_id: Option<String>,
        /// With --grant enterprise: the file holding this client's secret
        /// at the identity provider, if it has one (else it is a public
        /// client there), read at each authorization.
        #[arg(long, value_name = "FILE", requires = "idp_client_id")]
        idp_client_secret_file: Option<PathBuf>,
        /// How --idp-client-secret-file is sent: `basic` (`Authorization:
        /// Basic`) or `post` (in the form).
        #[arg(
            long,
            value_enum,
            default_value = "basic",
            requires = "idp_client_secret_file"
        )]
        idp_client_auth: IdpClientAuth,
        /// With --grant enterprise: the file holding the user's OpenID
        /// Connect ID token from the identity provider, read at each
        /// authorization.
        #[arg(long, value_name = "FILE", conflicts_with = "saml_assertion_file")]
        id_token_file: Option<PathBuf>,
        /// With --grant enterprise: the file holding the user's SAML 2.0
        /// assertion from the identity provider (base64url), read at each
        /// authorization.
        #[arg(long, value_name = "FILE")]
        saml_assertion_file: Option<PathBuf>,
        /// With --grant client-credentials or enterprise: the client
        /// authenticates with a JWT signed by this private key (a PEM
        /// file; `private_key_jwt`) instead of a secret.
        #[cfg(feature = "oauth-client-jose")]
        #[arg(
            long,
            value_name = "PEM FILE",
            requires = "client_id",
            conflicts_with = "client_secret"
        )]
        client_key: Option<PathBuf>,
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
        /// Enterprise-managed authorization: an ID-JAG from the identity
        /// provider, presented with the JWT bearer grant.
        Enterprise,
    }

    /// `--idp-client-auth`.
    #[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
    pub(crate) enum IdpClientAuth {
        /// `client_secret_basic`.
        Basic,
        /// `client_secret_post`.
        Post,
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
                (GrantBy::Enterprise, _) => {
                    if let Some(idp) = self.enterprise_idp() {
                        oauth = oauth.enterprise(idp);
                    }
                }
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

        /// The identity provider of --grant enterprise, from its flags
        /// (which clap has made sure of).
        fn enterprise_idp(&self) -> Option<EnterpriseIdp> {
            let assertion = match (&self.id_token_file, &self.saml_assertion_file) {
                (Some(path), _) => IdentityAssertion::id_token_file(path),
                (None, Some(path)) => IdentityAssertion::saml2_file(path),
                (None, None) => return None,
            };
            let endpoint = self.idp_token_endpoint.as_deref()?;
            let mut idp = EnterpriseIdp::new(endpoint, self.idp_client_id.as_deref()?, assertion);
            if let Some(path) = &self.idp_client_secret_file {
                idp = idp.client_secret_file(path);
                if self.idp_client_auth == IdpClientAuth::Post {
                    idp = idp.client_secret_post();
                }
            }
            Some(idp)
        }
    }

    #[cfg(test)]
    mod tests {
        use clap::Parser;

        use super::OAuthOptions;

        /// The options as the inspector's subcommands take them, beside
        /// the `--url` they require.
        #[derive(Parser)]
        struct Line {
            #[arg(long)]
            url: Option<String>,
            #[command(flatten)]
            oauth: OAuthOptions,
        }

        fn parse(args: &[&str]) -> Result<OAuthOptions, clap::Error> {
            let line = ["inspector", "--url", "http://127.0.0.1:1/mcp"];
            Line::try_parse_from(line.iter().chain(args).copied()).map(|line| line.oauth)
        }

        #[test]
        fn grant_enterprise_takes_the_identity_provider_and_one_assertion() {
            let idp = [
                "--grant",
                "enterprise",
                "--idp-token-endpoint",
                "http://idp.test/token",
                "--idp-client-id",
                "idp-client",
            ];
            let with = |more: &[&'static str]| {
                let mut args = idp.to_vec();
                args.extend_from_slice(more);
                parse(&args)
            };
            let settings = format!(
                "{:?}",
                with(&["--id-token-file", "/run/id_token"])
                    .unwrap()
                    .settings()
            );
            assert!(
                settings.contains("Enterprise(") && settings.contains("/run/id_token"),
                "{settings}"
            );
            let saml = with(&[
                "--saml-assertion-file",
                "/run/saml",
                "--idp-client-secret-file",
                "/run/idp-secret",
                "--idp-client-auth",
                "post",
            ]);
            let settings = format!("{:?}", saml.unwrap().settings());
            assert!(
                settings.contains("Saml2") && settings.contains("secret_in_form: true"),
                "{settings}"
            );
            // No assertion, two of them, or no identity provider: refused.
            assert!(with(&[]).is_err());
            assert!(with(&["--id-token-file", "a", "--saml-assertion-file", "b"]).is_err());
            assert!(parse(&["--grant", "enterprise", "--id-token-file", "a"]).is_err());
            assert!(parse(&["--idp-client-auth", "post"]).is_err());
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

// A real OpenID Connect provider (oidc-provider) for the authorization
// tests: client_credentials grant, RFC 8707 resource indicators, JWT access
// tokens (RFC 9068) signed ES256 with the keys named on the command line
// (the first one signs; all are published in the JWKS), and opaque tokens
// with RFC 7662 introspection; DPoP-bound tokens for clients that send a
// proof (RFC 9449).
//
//   node provider.mjs PORT KID[,KID...]
//
// Prints "ready ISSUER" on stdout once it listens.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Provider from 'oidc-provider';

const here = dirname(fileURLToPath(import.meta.url));
const [port, kids] = process.argv.slice(2);
const issuer = `http://127.0.0.1:${port}`;
const keys = kids.split(',').map((kid) =>
  JSON.parse(readFileSync(join(here, 'keys', `${kid}.jwk.json`), 'utf8')));
const scopes = ['notes:read', 'notes:write', 'notes:admin'];

function client(id) {
  return {
    client_id: id,
    client_secret: `${id}-secret`,
    grant_types: ['client_credentials'],
    redirect_uris: [],
    response_types: [],
    scope: scopes.join(' '),
    // Only EC keys exist; the default (RS256) would be refused.
    id_token_signed_response_alg: 'ES256',
  };
}

const provider = new Provider(issuer, {
  jwks: { keys },
  scopes,
  clients: [
    // Gets JWT access tokens.
    client('notes-app'),
    // Gets opaque access tokens, which the MCP server introspects.
    client('opaque-app'),
    // The MCP server itself, authenticating to the introspection endpoint.
    client('notes-rs'),
  ],
  features: {
    devInteractions: { enabled: false },
    clientCredentials: { enabled: true },
    // Tokens bound to the client's key when it sends a DPoP proof (RFC
    // 9449): `cnf.jkt` in JWTs and in introspection answers.
    dPoP: { enabled: true },
    introspection: { enabled: true },
    resourceIndicators: {
      enabled: true,
      // Every resource the client names gets a JWT bound to it: the test
      // asks for tokens for this MCP server and for another service.
      getResourceServerInfo: (_ctx, resource, client) => ({
        scope: scopes.join(' '),
        audience: resource,
        accessTokenTTL: 300,
        accessTokenFormat: client.clientId === 'opaque-app' ? 'opaque' : 'jwt',
        jwt: { sign: { alg: 'ES256' } },
      }),
    },
  },
});

provider.listen(Number(port), '127.0.0.1').on('listening', () => {
  process.stdout.write(`ready ${issuer}\n`);
});

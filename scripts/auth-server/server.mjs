// OAuth 2.1 authorization server for the MCP auth tests, built on oidc-provider 9
// (MIT, installed from the npm registry by scripts/auth-server.sh; not vendored here).
//
//   usage: node server.mjs STATE_DIR PORT INSTALL_DIR
//
// STATE_DIR holds keys.json (a private JWKS; its first RS256 key signs the access tokens)
// and receives port, pid and issuer (written in that order once the server answers; issuer
// last, so its presence means "ready"). PORT 0 picks a free port. INSTALL_DIR is where
// scripts/auth-server.sh ran `npm install` (oidc-provider is loaded from its node_modules).
// Binds 127.0.0.1 only; the issuer is http://127.0.0.1:PORT. Storage is in memory: a
// restart forgets every opaque token (JWT access tokens stay verifiable via the JWKS).
//
// What it offers (see scripts/auth-server.sh for the clients' credentials):
//   - client_credentials grant; client auth client_secret_basic or client_secret_post
//   - RFC 8707 resource indicators: any http://127.0.0.1[:port]/... or
//     http://localhost[:port]/... resource is accepted; the token's aud is that resource,
//     scope is limited to "tickets:read tickets:write"
//   - RFC 9068 JWT access tokens (typ at+jwt, RS256), except for client mcp-opaque, which
//     gets opaque tokens
//   - RFC 7662 introspection (mcp-server may introspect anyone's opaque tokens) and
//     RFC 7009 revocation; oidc-provider refuses both for JWT access tokens
//   - discovery at /.well-known/openid-configuration and /.well-known/oauth-authorization-server

import { randomBytes } from 'node:crypto';
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const [stateDir, portArg, installDir] = process.argv.slice(2);
const requestedPort = Number(portArg);
if (!stateDir || !installDir || !Number.isInteger(requestedPort) || requestedPort < 0 || requestedPort > 65535) {
  console.error('usage: node server.mjs STATE_DIR PORT INSTALL_DIR');
  process.exit(2);
}

const log = (...args) => console.log(new Date().toISOString(), ...args);

// ESM resolution ignores NODE_PATH, so resolve the package from the install directory.
const resolveFromInstall = createRequire(join(installDir, 'package.json'));
const { Provider, errors } = await import(pathToFileURL(resolveFromInstall.resolve('oidc-provider')).href);

const SCOPE = 'tickets:read tickets:write';
const ACCESS_TOKEN_TTL = 600; // seconds
const OPAQUE_CLIENT = 'mcp-opaque';
const RESOURCE_SERVER_CLIENT = 'mcp-server';

const jwks = JSON.parse(readFileSync(join(stateDir, 'keys.json'), 'utf8'));

// A resource indicator we issue tokens for: plain http on a loopback host name, any port.
function isLoopbackResource(value) {
  let url;
  try {
    url = new URL(value);
  } catch {
    return false;
  }
  return url.protocol === 'http:'
    && (url.hostname === '127.0.0.1' || url.hostname === 'localhost')
    && url.username === '' && url.password === '' && url.hash === '';
}

function confidentialClient(clientId, secret, grantTypes) {
  return {
    client_id: clientId,
    client_secret: secret,
    grant_types: grantTypes,
    response_types: [],
    redirect_uris: [],
    // Only the registered method's family matters: oidc-provider treats client_secret_basic
    // and client_secret_post as interchangeable for a client registered with either.
    token_endpoint_auth_method: 'client_secret_basic',
    scope: SCOPE,
  };
}

// Let a client act on its own tokens, and mcp-server (the resource server) on any.
function mayAccess(client, token) {
  return client.clientId === RESOURCE_SERVER_CLIENT || client.clientId === token.clientId;
}

// Answer 503 until the provider exists (it needs the issuer, which needs the bound port).
let handler = (req, res) => {
  res.statusCode = 503;
  res.end('starting\n');
};
// MCP_AUTH_NO_JWKS=1: the metadata documents leave out jwks_uri, as an authorization server
// whose tokens can only be introspected publishes them (RFC 8414 makes it optional).
const withoutKeys = process.env.MCP_AUTH_NO_JWKS === '1';
const server = createServer((req, res) => {
  const started = Date.now();
  res.on('finish', () => log(req.method, req.url, res.statusCode, `${Date.now() - started}ms`));
  if (withoutKeys && req.url.startsWith('/.well-known/')) {
    const end = res.end.bind(res);
    res.end = (chunk, ...rest) => {
      try {
        const doc = JSON.parse(chunk.toString());
        delete doc.jwks_uri;
        chunk = JSON.stringify(doc);
        res.setHeader('content-length', Buffer.byteLength(chunk));
      } catch {
        // not a JSON document: sent as it is
      }
      return end(chunk, ...rest);
    };
  }
  handler(req, res);
});
server.on('error', (err) => {
  console.error(`auth-server: cannot listen on 127.0.0.1:${requestedPort}: ${err.message}`);
  process.exit(1);
});
await new Promise((resolve) => server.listen(requestedPort, '127.0.0.1', resolve));
const { port } = server.address();
const issuer = `http://127.0.0.1:${port}`;

const provider = new Provider(issuer, {
  jwks,
  clients: [
    confidentialClient('mcp-client', 'mcp-client-secret', ['client_credentials']),
    confidentialClient(OPAQUE_CLIENT, 'mcp-opaque-secret', ['client_credentials']),
    confidentialClient(RESOURCE_SERVER_CLIENT, 'mcp-server-secret', []),
  ],
  scopes: ['openid', 'offline_access', ...SCOPE.split(' ')],
  cookies: { keys: [randomBytes(32).toString('base64url')] },
  ttl: {
    AccessToken: ACCESS_TOKEN_TTL,
    ClientCredentials: ACCESS_TOKEN_TTL,
  },
  // Client-credentials access tokens have no end-user; use the client as the subject so
  // introspection answers carry sub too (JWT tokens already default sub to client_id).
  async extraTokenClaims(ctx, token) {
    return token.kind === 'ClientCredentials' ? { sub: token.clientId } : undefined;
  },
  features: {
    devInteractions: { enabled: false },
    clientCredentials: { enabled: true },
    introspection: {
      enabled: true,
      async allowedPolicy(ctx, client, token) {
        return mayAccess(client, token);
      },
    },
    revocation: {
      enabled: true,
      async allowedPolicy(ctx, client, token) {
        if (!mayAccess(client, token)) {
          throw new errors.InvalidRequest('client is not authorized to revoke the presented token');
        }
        return true;
      },
    },
    resourceIndicators: {
      enabled: true,
      // Without a resource parameter no resource is assumed (the token then has no aud);
      // when several were granted, use the first.
      async defaultResource(ctx, client, oneOf) {
        return oneOf ? oneOf[0] : undefined;
      },
      async useGrantedResource() {
        return true;
      },
      async getResourceServerInfo(ctx, resourceIndicator, client) {
        if (!isLoopbackResource(resourceIndicator)) {
          throw new errors.InvalidTarget('resource must be an http://127.0.0.1:PORT/... or http://localhost:PORT/... URL');
        }
        const opaque = client?.clientId === OPAQUE_CLIENT;
        return {
          scope: SCOPE,
          audience: resourceIndicator,
          accessTokenTTL: ACCESS_TOKEN_TTL,
          accessTokenFormat: opaque ? 'opaque' : 'jwt',
          ...(opaque ? {} : { jwt: { sign: { alg: 'RS256' } } }),
        };
      },
    },
  },
});

for (const event of ['grant.error', 'introspection.error', 'revocation.error', 'jwks.error', 'discovery.error']) {
  provider.on(event, (ctx, err) => log(`${event}: ${err.error || err.name}: ${err.error_description || err.message}`));
}
provider.on('server_error', (ctx, err) => log('server_error:', err.stack || err));

handler = provider.callback();

function writeState(name, value) {
  const path = join(stateDir, name);
  writeFileSync(`${path}.tmp`, `${value}\n`);
  renameSync(`${path}.tmp`, path);
}
writeState('port', port);
writeState('pid', process.pid);
writeState('issuer', issuer);
log(`auth-server: ${issuer} ready (pid ${process.pid}, oidc-provider, node ${process.version}); signing kid ${jwks.keys[0]?.kid}`);

function shutdown(signal) {
  log(`auth-server: ${signal}, stopping`);
  server.close(() => process.exit(0));
  server.closeAllConnections();
  setTimeout(() => process.exit(0), 2000).unref();
}
process.on('SIGTERM', () => shutdown('SIGTERM'));
process.on('SIGINT', () => shutdown('SIGINT'));

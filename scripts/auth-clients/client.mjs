#!/usr/bin/env node
// End-to-end OAuth client-credentials check with the official MCP TypeScript SDK v2
// (@modelcontextprotocol/client, pinned in package.json; the MCP project is relicensing from MIT
// to Apache-2.0, and this package's package.json says Apache-2.0).
//
// usage: client.mjs URL CLIENT_ID CLIENT_SECRET TOOL ARGS_JSON [SCOPE]
//
// Connects to the MCP server at URL over Streamable HTTP with the SDK's
// ClientCredentialsProvider, which on the server's 401 discovers the authorization server
// (WWW-Authenticate resource_metadata -> RFC 9728 protected resource metadata ->
// authorization_servers -> RFC 8414 / OIDC metadata) and fetches a token with the
// client_credentials grant. Then lists the tools, calls TOOL with ARGS_JSON and prints one line
// of JSON to stdout:  {"tools": [names...], "result": <CallToolResult>}.  Exit 0 on success; on
// any failure the error goes to stderr and the exit status is 1.
//
// Environment (optional):
//   MCP_AUTH_ISSUER    the authorization server's issuer (`expectedIssuer`); credentials are then
//                      only sent to it (without it the SDK warns that omitting it is deprecated)
//   MCP_AUTH_TIMEOUT   overall time limit in seconds (default 30)
//   MCP_AUTH_DEBUG=1   full stack traces on stderr
import { Client, ClientCredentialsProvider, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

const DEBUG = !['', '0'].includes(process.env.MCP_AUTH_DEBUG ?? '');

function fail(message) {
    process.stderr.write(`client.mjs: ${message}\n`);
    process.exit(1);
}

function describe(err) {
    if (!(err instanceof Error)) return String(err);
    let text = `${err.name}: ${err.message}`;
    // fetch() failures say only "fetch failed"; the reason (ECONNREFUSED, ...) is in the cause chain.
    for (let cause = err.cause, depth = 0; cause && depth < 4; cause = cause.cause, depth++) {
        const msg = cause instanceof Error ? `${cause.name}: ${cause.message}` : String(cause);
        if (!text.includes(msg)) text += ` (caused by ${msg}${cause.code ? ` [${cause.code}]` : ''})`;
    }
    return text;
}

const argv = process.argv.slice(2);
if (argv.length < 5 || argv.length > 6) fail('usage: client.mjs URL CLIENT_ID CLIENT_SECRET TOOL ARGS_JSON [SCOPE]');
const [url, clientId, clientSecret, tool, argsJson, scope] = argv;

let args;
try {
    args = JSON.parse(argsJson);
} catch (e) {
    fail(`ARGS_JSON is not JSON: ${e.message}`);
}
if (args === null || typeof args !== 'object' || Array.isArray(args)) fail('ARGS_JSON must be a JSON object');
let serverUrl;
try {
    serverUrl = new URL(url);
} catch {
    fail(`not a URL: ${url}`);
}
const timeoutS = Number(process.env.MCP_AUTH_TIMEOUT || 30);
if (!(timeoutS > 0)) fail('MCP_AUTH_TIMEOUT must be a positive number of seconds');
const timeoutMs = Math.round(timeoutS * 1000);

const providerOptions = { clientId, clientSecret, clientName: 'mcp-auth-clients (ts)' };
if (scope) providerOptions.scope = scope;
if (process.env.MCP_AUTH_ISSUER) providerOptions.expectedIssuer = process.env.MCP_AUTH_ISSUER;
// Keeps the tokens in memory (saveTokens/tokens) for the life of this process.
const provider = new ClientCredentialsProvider(providerOptions);

// One abort signal bounds every HTTP request, including the OAuth discovery and token requests.
const deadline = AbortSignal.timeout(timeoutMs);
const transport = new StreamableHTTPClientTransport(serverUrl, {
    authProvider: provider,
    fetch: (input, init) => fetch(input, { ...init, signal: init?.signal ? AbortSignal.any([init.signal, deadline]) : deadline })
});
const client = new Client({ name: 'mcp-auth-clients', version: '1.0.0' });

async function run() {
    await client.connect(transport, { timeout: timeoutMs });
    const { tools } = await client.listTools(undefined, { timeout: timeoutMs });
    const result = await client.callTool({ name: tool, arguments: args }, { timeout: timeoutMs });
    return { tools: tools.map(t => t.name), result };
}

let timer;
const overall = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${timeoutS}s`)), timeoutMs);
});

let code = 0;
try {
    const out = await Promise.race([run(), overall]);
    process.stdout.write(JSON.stringify(out) + '\n');
} catch (err) {
    if (DEBUG && err instanceof Error) process.stderr.write(`${err.stack}\n`);
    process.stderr.write(`client.mjs: ${url}: ${describe(err)}\n`);
    code = 1;
} finally {
    clearTimeout(timer);
}
// Closing tries to end the session (HTTP DELETE); do not let that hang or change the outcome.
await Promise.race([client.close().catch(() => {}), new Promise(resolve => setTimeout(resolve, 2000).unref())]);
process.exit(code);

#!/usr/bin/env node
// Upstream MCP server fixture on the official MCP TypeScript SDK v2 (@modelcontextprotocol/server
// and @modelcontextprotocol/node, pinned in package.json / package-lock.json; their package.json
// says Apache-2.0; zod is MIT), for the gateway's end-to-end tests. Nothing here is this project's
// code: the point is a server the project did not write. scripts/upstreams.sh copies this file
// next to its node_modules and runs it there.
//
// usage: server.mjs stdio          serve one client on stdin/stdout (logs go to stderr)
//        server.mjs http PORT      serve Streamable HTTP on http://127.0.0.1:PORT/mcp
//
// Surface (the same as server.py, the Python SDK twin):
//   tool add(a: int, b: int)    the sum as text, plus structuredContent {result: sum} (outputSchema)
//   tool greet()                elicits {name: string} from the user (form mode), then
//                               "Hello, <name>!"; "No name given." on decline or cancel
//   tool slow(seconds: number)  sleeps (cancellable), then "slept"
//   tool hop()                  closes the call's response stream where the transport can (a
//                               2025-era HTTP session, which keeps its events for resumption:
//                               SSE polling), waits half a second, then "hopped"
//   tool grow()                 registers tool `extra` (-> "extra ran") and announces
//                               tools/list_changed
//   resource fixture://readme   text/plain "the typescript upstream"
//   template fixture://items/{id}   "item <id>"
//   prompt review(code)         one user message containing the code
//
// Both protocol eras, as the SDK documents them:
//   stdio  serveStdio(factory): the opening exchange pins the connection's era (an `initialize`
//          -> 2025 era, a `server/discover` or enveloped request -> 2026-07-28), one instance per
//          connection.
//   HTTP   isLegacyRequest() routing on one port: 2025-era traffic goes to sessionful
//          NodeStreamableHTTPServerTransport instances (Mcp-Session-Id, GET stream for
//          unsolicited notifications, DELETE), 2026-07-28 traffic to a strict
//          createMcpHandler(factory, {legacy: 'reject'}) that builds an instance per request.
// greet returns `inputRequired(...)`; on a 2025-era connection the SDK's legacy shim turns that
// into a real `elicitation/create` request sent while the call is open. grow registers `extra`
// on every live instance (the SDK then sends notifications/tools/list_changed on each 2025-era
// connection, and on a 2026-07-28 stdio connection's subscriptions/listen stream) and publishes
// toolsChanged to the HTTP handler's listen streams; instances built later include `extra`.
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';

import {
    localhostHostValidation,
    localhostOriginValidation,
    NodeStreamableHTTPServerTransport,
    toNodeHandler,
    toWebRequest
} from '@modelcontextprotocol/node';
import {
    acceptedContent,
    createMcpHandler,
    inputRequired,
    inputResponse,
    isInitializeRequest,
    isLegacyRequest,
    McpServer,
    ResourceTemplate
} from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import * as z from 'zod/v4';

const NAME = 'upstream-ts';
const log = message => process.stderr.write(`${NAME}: ${message}\n`);
const text = value => ({ content: [{ type: 'text', text: value }] });

// Process-wide state: whether grow() ran, and the long-lived instances (a stdio connection, the
// 2025-era HTTP sessions) that must learn about `extra` when it does.
let grown = false;
const live = new Set();
let httpHandler; // the 2026-07-28 HTTP handler, whose notify facade reaches its listen streams

const nameSchema = z.object({ name: z.string().meta({ title: 'Name', description: 'Your name' }) });

function addExtra(server) {
    if (server.upstreamExtra) return;
    // Registering on a connected McpServer sends notifications/tools/list_changed by itself.
    server.upstreamExtra = server.registerTool('extra', { description: 'A tool that exists only after grow()' }, async () =>
        text('extra ran')
    );
}

function buildServer() {
    const server = new McpServer(
        { name: NAME, version: '1.0.0' },
        { instructions: 'Test upstream on the official MCP TypeScript SDK v2.' }
    );

    server.registerTool(
        'add',
        {
            description: 'Add two integers.',
            inputSchema: z.object({ a: z.number().int(), b: z.number().int() }),
            outputSchema: z.object({ result: z.number().int() })
        },
        async ({ a, b }) => ({ ...text(String(a + b)), structuredContent: { result: a + b } })
    );

    // Without an inputSchema the callback gets only the context.
    server.registerTool('greet', { description: 'Ask the user for their name, then greet them.' }, async ctx => {
        const answered = inputResponse(ctx.mcpReq.inputResponses, 'name');
        const answer = acceptedContent(ctx.mcpReq.inputResponses, 'name', nameSchema);
        if (answer !== undefined) return text(`Hello, ${answer.name}!`);
        if (answered.kind !== 'missing') return text('No name given.'); // declined, cancelled, or no usable name
        return inputRequired({
            inputRequests: { name: inputRequired.elicit({ message: 'What is your name?', requestedSchema: nameSchema }) }
        });
    });

    server.registerTool(
        'slow',
        { description: 'Sleep for the given number of seconds, then answer.', inputSchema: z.object({ seconds: z.number() }) },
        async ({ seconds }, ctx) => {
            const signal = ctx.mcpReq.signal;
            await new Promise((resolve, reject) => {
                const timer = setTimeout(resolve, Math.max(0, seconds) * 1000);
                signal?.addEventListener('abort', () => {
                    clearTimeout(timer);
                    reject(signal.reason ?? new Error('cancelled'));
                });
            });
            return text('slept');
        }
    );

    server.registerTool(
        'hop',
        { description: "Close this call's response stream where the transport can, wait half a second, then answer." },
        async ctx => {
            ctx.http?.closeSSE?.();
            await new Promise(resolve => setTimeout(resolve, 500));
            return text('hopped');
        }
    );

    server.registerTool('grow', { description: 'Register the tool `extra` and announce that the tool list changed.' }, async () => {
        grown = true;
        for (const instance of live) addExtra(instance);
        await httpHandler?.notify.toolsChanged();
        return text('grew extra');
    });
    if (grown) addExtra(server);

    server.registerResource(
        'readme',
        'fixture://readme',
        { description: 'About this upstream', mimeType: 'text/plain' },
        async uri => ({ contents: [{ uri: uri.href, mimeType: 'text/plain', text: 'the typescript upstream' }] })
    );
    server.registerResource(
        'item',
        new ResourceTemplate('fixture://items/{id}', { list: undefined }),
        { description: 'One item by id', mimeType: 'text/plain' },
        async (uri, { id }) => ({ contents: [{ uri: uri.href, mimeType: 'text/plain', text: `item ${id}` }] })
    );

    server.registerPrompt(
        'review',
        { description: 'Ask for a review of some code.', argsSchema: z.object({ code: z.string().describe('The code to review') }) },
        ({ code }) => ({ messages: [{ role: 'user', content: { type: 'text', text: `Please review this code:\n\n${code}` } }] })
    );
    return server;
}

// --- stdio -----------------------------------------------------------------------------------
function serveOnStdio() {
    const handle = serveStdio(() => {
        const server = buildServer();
        live.add(server);
        return server;
    }, { onerror: error => log(`stdio: ${error.message}`) });
    const stop = () => void handle.close().finally(() => process.exit(0));
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
    process.stdin.on('end', stop);
    log('serving on stdio');
}

// --- Streamable HTTP -------------------------------------------------------------------------
// The 2025-era sessions keep what they send for resumption (the SDK's EventStore interface, in
// memory): a stream that closes early is resumed by a GET with Last-Event-ID, which replays what
// came after that event on the same stream. A priming event stores an empty message, never replayed.
class MemoryEventStore {
    events = new Map(); // event id -> { streamId, message }, in the order stored
    next = 0;
    async storeEvent(streamId, message) {
        const id = `${streamId}_${++this.next}`;
        this.events.set(id, { streamId, message });
        return id;
    }
    async getStreamIdForEventId(eventId) {
        return this.events.get(eventId)?.streamId;
    }
    async replayEventsAfter(lastEventId, { send }) {
        const from = this.events.get(lastEventId);
        if (from === undefined) throw new Error(`unknown event id ${lastEventId}`);
        let after = false;
        for (const [id, { streamId, message }] of this.events) {
            if (id === lastEventId) after = true;
            else if (after && streamId === from.streamId && Object.keys(message).length > 0) await send(id, message);
        }
        return from.streamId;
    }
}

function jsonRpcError(res, status, code, message) {
    if (res.headersSent) return res.end();
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }));
}

async function readBody(req, limit = 4 * 1024 * 1024) {
    const chunks = [];
    let size = 0;
    for await (const chunk of req) {
        size += chunk.length;
        if (size > limit) throw Object.assign(new Error('request body too large'), { status: 413 });
        chunks.push(chunk);
    }
    return Buffer.concat(chunks).toString('utf8');
}

function serveOnHttp(port) {
    const sessions = new Map(); // Mcp-Session-Id -> transport (2025-era sessions)
    httpHandler = createMcpHandler(() => buildServer(), { legacy: 'reject' });
    const modern = toNodeHandler(httpHandler);
    const validateHost = localhostHostValidation();
    const validateOrigin = localhostOriginValidation();

    const legacy = async (req, res, body) => {
        const sid = req.headers['mcp-session-id'];
        if (typeof sid === 'string' && sessions.has(sid)) {
            await sessions.get(sid).handleRequest(req, res, body);
        } else if (sid === undefined && req.method === 'POST' && isInitializeRequest(body)) {
            const server = buildServer();
            const transport = new NodeStreamableHTTPServerTransport({
                sessionIdGenerator: () => randomUUID(),
                eventStore: new MemoryEventStore(),
                retryInterval: 100,
                onsessioninitialized: id => {
                    sessions.set(id, transport);
                    live.add(server);
                    log(`session ${id} opened`);
                }
            });
            transport.onclose = () => {
                if (transport.sessionId && sessions.delete(transport.sessionId)) log(`session ${transport.sessionId} closed`);
                live.delete(server);
            };
            await server.connect(transport);
            await transport.handleRequest(req, res, body);
        } else if (sid !== undefined) {
            jsonRpcError(res, 404, -32001, 'Session not found'); // the client starts a new session
        } else {
            jsonRpcError(res, 400, -32000, 'Bad Request: Session ID required');
        }
    };

    const http = createServer(async (req, res) => {
        try {
            if (!validateHost(req, res) || !validateOrigin(req, res)) return;
            if (new URL(req.url ?? '/', 'http://127.0.0.1').pathname !== '/mcp') {
                res.writeHead(404, { 'content-type': 'text/plain' }).end('Not found');
                return;
            }
            if (req.method === 'POST') {
                let body;
                try {
                    body = JSON.parse(await readBody(req));
                } catch (error) {
                    if (error.status === 413) return jsonRpcError(res, 413, -32600, 'Request body too large');
                    return jsonRpcError(res, 400, -32700, 'Parse error: the body is not JSON');
                }
                const isLegacy = await isLegacyRequest(await toWebRequest(req, body), body);
                await (isLegacy ? legacy(req, res, body) : modern(req, res, body));
            } else if (req.method === 'GET' || req.method === 'DELETE') {
                // The standalone notification stream and session termination exist only in the
                // 2025 era; 2026-07-28 clients use subscriptions/listen (a POST) instead.
                await legacy(req, res, undefined);
            } else {
                res.writeHead(405, { allow: 'GET, POST, DELETE' }).end();
            }
        } catch (error) {
            log(`${req.method} ${req.url}: ${error?.stack ?? error}`);
            jsonRpcError(res, 500, -32603, 'Internal error');
        }
    });

    const stop = async () => {
        for (const transport of sessions.values()) await transport.close().catch(() => {});
        await httpHandler.close().catch(() => {});
        http.close();
        process.exit(0);
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
    http.on('error', error => {
        log(`cannot listen on 127.0.0.1:${port}: ${error.message}`);
        process.exit(1);
    });
    http.listen(port, '127.0.0.1', () => log(`serving http://127.0.0.1:${port}/mcp`));
}

const argv = process.argv.slice(2);
if (argv.length === 1 && argv[0] === 'stdio') {
    serveOnStdio();
} else if (argv.length === 2 && argv[0] === 'http' && /^\d+$/.test(argv[1]) && +argv[1] > 0 && +argv[1] < 65536) {
    serveOnHttp(+argv[1]);
} else {
    process.stderr.write('usage: server.mjs stdio | server.mjs http PORT\n');
    process.exit(2);
}

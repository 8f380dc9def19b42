#!/usr/bin/env node
// The MCP Apps view of examples/after-sales, rendered in headless Chromium through the official
// host bridge of @modelcontextprotocol/ext-apps, calling a tool of the real server. Run by
// scripts/apps-browser.sh, which installs the packages (package.json) and bundles host.js.
//
// usage: run.mjs --server BIN [--screenshot PATH] [--bundle HOST_BUNDLE_JS] [--chromium PATH]
//   --bundle defaults to host.bundle.js beside this file (where scripts/apps-browser.sh puts it),
//   --chromium to /usr/bin/chromium.
//
//  1. starts `BIN --http 127.0.0.1:PORT` on a fresh SQLite desk (DATABASE_URL in a temp dir),
//     waits for /readyz;
//  2. with the MCP TypeScript SDK v2 client, declaring the io.modelcontextprotocol/ui extension
//     (text/html;profile=mcp-app) and form elicitation: opens a ticket for ORD-1001 (answering the
//     refund elicitation with original_card), checks that tools/list links
//     after_sales_query_ticket to ui://after-sales/ticket and lists the app-only
//     after_sales_change_refund, calls after_sales_query_ticket (the model's call) and reads the
//     view with resources/read;
//  3. in Chromium (playwright-core): a blank host page runs the bundled host.js, whose AppBridge
//     renders the view in a sandboxed iframe and sends it the tool input and result; the view's
//     tools/call requests reach the server through the bridge and the SDK client (mcpCallTool);
//     the view must show the ticket with "Original card", and clicking the store credit button
//     must change it to "Store credit";
//  4. checks on the server that the ticket's refund_method is now store_credit, and that a client
//     without the extension neither sees after_sales_change_refund nor a `_meta.ui` link;
//  5. a page of another loopback origin calls the server with fetch (Chromium's CORS preflight
//     and checks): a server/discover and a 2025-11-25 initialize whose Mcp-Session-Id it reads;
//     a page of 127.0.0.2, an origin the server does not let in, gets no answer.
//
// Prints one summary line and exits 0; on any failure prints what failed, the steps done, the
// host's message log (window.hostLog), the browser console and the server's output, and exits 1.
// The whole run is bounded (MCP_APPS_BROWSER_TIMEOUT seconds, default 90); with
// MCP_APPS_BROWSER_VERBOSE=1 the same details are printed (to stderr) on success too.
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer as createHttpServer } from 'node:http';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { chromium } from 'playwright-core';

const UI = 'io.modelcontextprotocol/ui';
const APP_MIME = 'text/html;profile=mcp-app';
const VIEW = 'ui://after-sales/ticket';
const QUERY = 'after_sales_query_ticket';
const CHANGE = 'after_sales_change_refund';
const CHROMIUM_ARGS = [
    '--headless',
    '--no-sandbox',
    '--disable-gpu',
    '--disable-quic',
    '--no-first-run',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync'
];

class Failure extends Error {}
const fail = message => {
    throw new Failure(message);
};

function parseArgs(argv) {
    const opts = { chromium: '/usr/bin/chromium', bundle: join(dirname(fileURLToPath(import.meta.url)), 'host.bundle.js') };
    for (let i = 0; i < argv.length; i++) {
        const key = argv[i];
        const value = argv[i + 1];
        if (!['--server', '--bundle', '--screenshot', '--chromium'].includes(key) || value === undefined) {
            process.stderr.write('usage: run.mjs --server BIN [--screenshot PATH] [--bundle HOST_BUNDLE_JS] [--chromium PATH]\n');
            process.exit(2);
        }
        opts[key.slice(2)] = value;
        i++;
    }
    if (!opts.server) return parseArgs(['--help']);
    opts.server = resolve(opts.server);
    return opts;
}

const opts = parseArgs(process.argv.slice(2));
const limitS = Number(process.env.MCP_APPS_BROWSER_TIMEOUT || 90);
const VERBOSE = !['', '0'].includes(process.env.MCP_APPS_BROWSER_VERBOSE ?? '');
const steps = [];
const step = text => steps.push(text);
const consoleLines = [];
const serverOutput = [];
const viewCalls = [];
const cleanups = [];
let page;

function describe(err) {
    if (!(err instanceof Error)) return String(err);
    let text = err instanceof Failure ? err.message : `${err.name}: ${err.message}`;
    for (let cause = err.cause, depth = 0; cause && depth < 4; cause = cause.cause, depth++) {
        text += ` (caused by ${cause instanceof Error ? `${cause.name}: ${cause.message}` : String(cause)})`;
    }
    return text;
}

const json = value => JSON.stringify(value);

function freePort() {
    return new Promise((resolve, reject) => {
        const srv = createServer();
        srv.once('error', reject);
        srv.listen(0, '127.0.0.1', () => {
            const { port } = srv.address();
            srv.close(() => resolve(port));
        });
    });
}

async function startServer(dir) {
    const port = await freePort();
    const child = spawn(opts.server, ['--http', `127.0.0.1:${port}`], {
        cwd: dir,
        env: { ...process.env, DATABASE_URL: `sqlite://${join(dir, 'desk.db')}` },
        stdio: ['ignore', 'pipe', 'pipe']
    });
    const keep = chunk => {
        serverOutput.push(...chunk.toString().split('\n').filter(Boolean));
        if (serverOutput.length > 200) serverOutput.splice(0, serverOutput.length - 200);
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    let exited = null;
    let spawnError = null;
    child.on('error', err => (spawnError = err));
    child.on('exit', (code, signal) => (exited = signal ?? code));
    cleanups.push(async () => {
        if (exited !== null || child.exitCode !== null) return;
        child.kill('SIGTERM');
        const gone = new Promise(resolve => child.once('exit', resolve));
        const timer = setTimeout(() => child.kill('SIGKILL'), 3000);
        await gone;
        clearTimeout(timer);
    });
    const base = `http://127.0.0.1:${port}`;
    for (const started = Date.now(); Date.now() - started < 30000; ) {
        if (spawnError) fail(`cannot start ${opts.server}: ${spawnError.message}`);
        if (exited !== null) fail(`${opts.server} exited (${exited}) before /readyz answered 200`);
        try {
            const res = await fetch(`${base}/readyz`, { signal: AbortSignal.timeout(2000) });
            if (res.status === 200) return base;
        } catch {
            // not listening yet
        }
        await new Promise(resolve => setTimeout(resolve, 200));
    }
    fail(`${base}/readyz did not answer 200 within 30s`);
}

async function connect(base, name, capabilities) {
    const client = new Client({ name, version: '1.0.0' }, { capabilities });
    if (capabilities.elicitation) {
        client.setRequestHandler('elicitation/create', async request => {
            step(`elicitation answered original_card: ${json(request.params?.message ?? '')}`);
            return { action: 'accept', content: { method: 'original_card' } };
        });
    }
    await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`)));
    cleanups.push(() => Promise.race([client.close().catch(() => {}), new Promise(resolve => setTimeout(resolve, 2000))]));
    return client;
}

async function call(client, name, args) {
    const result = await client.callTool({ name, arguments: args });
    if (result.isError) fail(`${name} ${json(args)} returned an error: ${json(result.content)}`);
    return result;
}

async function viewText(frame, selector) {
    const loc = frame.locator(selector);
    return (await loc.count()) ? ((await loc.first().textContent({ timeout: 2000 })) ?? '').trim() : null;
}

async function waitForText(frame, selector, text, timeout) {
    try {
        await frame.locator(selector).filter({ hasText: new RegExp(`^\\s*${text}\\s*$`) }).first().waitFor({ timeout });
    } catch {
        const shown = await viewText(frame, selector).catch(() => null);
        const error = await viewText(frame, '#error').catch(() => null);
        fail(`the view's ${selector} did not read "${text}" within ${timeout / 1000}s (it reads ${json(shown)}; #error: ${json(error)})`);
    }
}

async function run() {
    const dir = await mkdtemp(join(tmpdir(), 'apps-browser-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const base = await startServer(dir);
    step(`server ready at ${base}`);

    const host = await connect(base, 'apps-browser-host', {
        extensions: { [UI]: { mimeTypes: [APP_MIME] } },
        elicitation: { form: {} }
    });
    step('host client connected with the ui extension');

    const created = await call(host, 'after_sales_create_ticket', { order_id: 'ORD-1001', reason: 'arrived scratched' });
    const ticketId = created.structuredContent?.id;
    if (typeof ticketId !== 'string' || !ticketId) fail(`after_sales_create_ticket gave no structuredContent.id: ${json(created)}`);
    step(`ticket ${ticketId} opened`);

    const { tools } = await host.listTools();
    const byName = Object.fromEntries(tools.map(t => [t.name, t]));
    const query = byName[QUERY];
    if (!query) fail(`tools/list has no ${QUERY}: ${json(Object.keys(byName))}`);
    if (query._meta?.ui?.resourceUri !== VIEW) fail(`${QUERY} _meta.ui.resourceUri is ${json(query._meta?.ui?.resourceUri)}, not ${VIEW}: _meta ${json(query._meta)}`);
    const change = byName[CHANGE];
    if (!change) fail(`tools/list (with the ui extension) has no ${CHANGE}: ${json(Object.keys(byName))}`);
    if (json(change._meta?.ui?.visibility) !== json(['app'])) fail(`${CHANGE} _meta.ui.visibility is ${json(change._meta?.ui?.visibility)}, not ["app"]`);
    step(`tools/list: ${QUERY} -> ${VIEW}, ${CHANGE} app-only`);

    const toolInput = { ticket_id: ticketId };
    const toolResult = await call(host, QUERY, toolInput);
    step(`${QUERY} (the model's call): ${json(toolResult.structuredContent)}`);

    const read = await host.readResource({ uri: VIEW });
    const content = read.contents?.find(c => c.uri === VIEW) ?? read.contents?.[0];
    if (!content || typeof content.text !== 'string') fail(`resources/read ${VIEW} gave no text content: ${json(read).slice(0, 500)}`);
    if (content.mimeType !== APP_MIME) fail(`resources/read ${VIEW} mimeType is ${json(content.mimeType)}, not ${APP_MIME}`);
    const uiMeta = content._meta?.ui ?? {};
    step(`resources/read ${VIEW}: ${content.text.length} characters of html, _meta.ui ${json(uiMeta)}`);

    const browser = await chromium.launch({ executablePath: opts.chromium, headless: true, args: CHROMIUM_ARGS });
    cleanups.push(() => browser.close().catch(() => {}));
    const version = browser.version();
    step(`chromium ${version} launched`);
    page = await browser.newPage({ viewport: { width: 720, height: 560 } });
    page.on('console', msg => consoleLines.push(`[${msg.type()}] ${msg.text()}`.slice(0, 600)));
    page.on('pageerror', err => consoleLines.push(`[pageerror] ${err.message}`));
    await page.exposeFunction('mcpCallTool', async params => {
        viewCalls.push(params);
        const tool = byName[params?.name];
        const visibility = tool?._meta?.ui?.visibility;
        if (Array.isArray(visibility) && !visibility.includes('app')) throw new Error(`${params.name} is not visible to apps`);
        return host.callTool({ name: params.name, arguments: params.arguments ?? {} });
    });
    await page.setContent(
        '<!doctype html><html><head><meta charset="utf-8"><title>MCP Apps host</title><style>' +
            'body{margin:0;font:14px system-ui,sans-serif;background:#eef0f3}' +
            'header{padding:8px 16px;color:#555}' +
            '#host{margin:0 16px}#host iframe{display:block;width:100%;height:480px;border:1px solid #ccd;border-radius:8px;background:#fff}' +
            `</style></head><body><header>MCP Apps host (ext-apps AppBridge) - ${VIEW}</header><main id="host"></main></body></html>`
    );
    await page.addScriptTag({ path: opts.bundle });
    await page.evaluate(args => window.startHost(args), { html: content.text, csp: uiMeta.csp ?? {}, toolInput, toolResult });
    step('host started, view loading');

    const frame = page.frameLocator('#view');
    try {
        await frame.locator('body[data-state="ready"]').waitFor({ state: 'attached', timeout: 15000 });
    } catch {
        fail(`the view never set body[data-state="ready"] (#error: ${json(await viewText(frame, '#error').catch(() => null))})`);
    }
    await waitForText(frame, '#method', 'Original card', 10000);
    const stage = await viewText(frame, '#stage');
    const amount = await viewText(frame, '#amount');
    if (!stage) fail(`the view's #stage is empty (${json(stage)})`);
    if (!amount) fail(`the view's #amount is empty (${json(amount)})`);
    step(`view rendered: stage ${json(stage)}, method "Original card", amount ${json(amount)}`);

    await frame.locator('button[data-method="store_credit"]').click({ timeout: 5000 });
    step('clicked button[data-method="store_credit"]');
    await waitForText(frame, '#method', 'Store credit', 10000);
    const changeCall = viewCalls.find(c => c?.name === CHANGE);
    if (!changeCall) fail(`the view shows "Store credit" but called no ${CHANGE} (calls: ${json(viewCalls)})`);
    // The binding is visible in every frame: make sure the call came through the AppBridge.
    const bridged = await page.evaluate(name => window.hostLog.some(e => e.kind === 'tools/call' && e.data?.name === name), CHANGE);
    if (!bridged) fail(`${CHANGE} was called, but not through the AppBridge's tools/call`);
    const errorText = await viewText(frame, '#error');
    if (errorText && (await frame.locator('#error').first().isVisible())) fail(`the view shows an error: ${json(errorText)}`);
    step(`view called ${CHANGE} ${json(changeCall.arguments)}, shows "Store credit", amount ${json(await viewText(frame, '#amount'))}`);

    if (opts.screenshot) {
        await page.screenshot({ path: opts.screenshot, fullPage: true });
        step(`screenshot ${opts.screenshot}`);
    }

    const after = await call(host, QUERY, { ticket_id: ticketId });
    if (after.structuredContent?.refund_method !== 'store_credit') fail(`after the click ${QUERY} says refund_method ${json(after.structuredContent?.refund_method)}, not store_credit`);
    step('server: refund_method is store_credit');

    const plain = await connect(base, 'apps-browser-plain', {});
    const plainTools = (await plain.listTools()).tools;
    if (plainTools.some(t => t.name === CHANGE)) fail(`a client without the ui extension sees ${CHANGE}`);
    const plainQuery = plainTools.find(t => t.name === QUERY);
    if (!plainQuery) fail(`a client without the ui extension does not see ${QUERY}`);
    if (plainQuery._meta?.ui !== undefined || plainQuery._meta?.['ui/resourceUri'] !== undefined) fail(`a client without the ui extension sees ${QUERY} _meta ${json(plainQuery._meta)}`);
    step(`client without the extension: no ${CHANGE}, no _meta.ui on ${QUERY}`);

    await crossOrigin(browser, base);

    return `apps-browser: view rendered in chromium ${version}, tool called through the ext-apps bridge, refund changed to store_credit, a page of another loopback origin called the server directly: ok`;
}

// A browser client on a page of its own: a page of another loopback origin (http://localhost:P,
// the server being http://127.0.0.1:Q) calls the server with fetch, so Chromium sends a CORS
// preflight and lets the page read the answer only if the server allows its origin: a 2026-07-28
// server/discover, then a 2025-11-25 initialize whose Mcp-Session-Id the page must be able to
// read. A page of 127.0.0.2 (not an origin the server lets in) must not get an answer.
async function crossOrigin(browser, base) {
    // A blank page at http://HOST:PORT/, served on loopback for the length of the run.
    const servePage = async host => {
        const pages = createHttpServer((req, res) => {
            res.writeHead(200, { 'content-type': 'text/html' });
            res.end('<!doctype html><title>a browser client</title>');
        });
        await new Promise((resolve, reject) => {
            pages.once('error', reject);
            pages.listen(0, host, resolve);
        });
        cleanups.push(() => new Promise(resolve => pages.close(() => resolve())));
        return pages.address().port;
    };
    const client = await browser.newPage();
    client.on('console', msg => consoleLines.push(`[cross-origin ${msg.type()}] ${msg.text()}`.slice(0, 600)));
    const post = async (origin, method, version, body) => {
        await client.goto(`${origin}/`);
        return client.evaluate(
            async ({ url, method, version, body }) => {
                try {
                    const res = await fetch(url, {
                        method: 'POST',
                        headers: {
                            'content-type': 'application/json',
                            accept: 'application/json, text/event-stream',
                            'mcp-protocol-version': version,
                            'mcp-method': method
                        },
                        body: JSON.stringify(body)
                    });
                    return { status: res.status, session: res.headers.get('mcp-session-id'), text: await res.text() };
                } catch (err) {
                    return { error: String(err) };
                }
            },
            { url: `${base}/mcp`, method, version, body }
        );
    };
    const meta = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} };
    const discover = { jsonrpc: '2.0', id: 1, method: 'server/discover', params: { _meta: meta } };
    const page = `http://localhost:${await servePage('127.0.0.1')}`;
    const found = await post(page, 'server/discover', '2026-07-28', discover);
    if (found.error || found.status !== 200) fail(`a page of ${page} could not call server/discover: ${json(found)}`);
    const answer = JSON.parse(found.text);
    if (!answer.result?.supportedVersions?.includes('2026-07-28')) fail(`server/discover from ${page} answered ${found.text.slice(0, 300)}`);
    const init = {
        jsonrpc: '2.0',
        id: 2,
        method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'a-page', version: '1.0.0' } }
    };
    const opened = await post(page, 'initialize', '2025-11-25', init);
    if (opened.error || opened.status !== 200 || !opened.session) fail(`a page of ${page} could not open a session and read its id: ${json(opened)}`);
    step(`a page of ${page} called ${base} directly: server/discover answered, session ${opened.session} opened`);
    const stranger = `http://127.0.0.2:${await servePage('127.0.0.2')}`;
    const refused = await post(stranger, 'server/discover', '2026-07-28', discover);
    if (!refused.error) fail(`a page of ${stranger} got an answer: ${json(refused)}`);
    step(`a page of ${stranger} got no answer (${refused.error})`);
    await client.close();
}

async function cleanup() {
    for (const job of cleanups.reverse()) await job().catch(() => {});
    cleanups.length = 0;
}

// What happened: the steps done, the host's log, the calls through the bridge, the browser console
// and the server's output.
async function details(err) {
    const lines = [];
    if (err) lines.push(`apps-browser: FAILED: ${describe(err)}`);
    if (err && !(err instanceof Failure) && err instanceof Error && err.stack) lines.push(err.stack);
    lines.push('steps done:', ...steps.map(s => `  ${s}`));
    if (page) {
        const log = await Promise.race([page.evaluate(() => window.hostLog ?? null).catch(e => `unavailable: ${e.message}`), new Promise(r => setTimeout(() => r('unavailable: timed out'), 3000))]);
        lines.push('window.hostLog:');
        if (Array.isArray(log)) for (const e of log) lines.push(`  ${e.ms}ms ${e.kind} ${json(e.data)?.slice(0, 1500) ?? ''}`);
        else lines.push(`  ${json(log)}`);
    }
    if (viewCalls.length) lines.push(`tool calls through the bridge: ${json(viewCalls)}`);
    if (consoleLines.length) lines.push('browser console:', ...consoleLines.slice(-40).map(l => `  ${l}`));
    if (serverOutput.length) lines.push('server output (last lines):', ...serverOutput.slice(-30).map(l => `  ${l}`));
    return lines.join('\n') + '\n';
}

let timer;
const overall = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Failure(`the run did not finish within ${limitS}s`)), limitS * 1000);
});
for (const sig of ['SIGINT', 'SIGTERM']) {
    process.once(sig, () => cleanup().finally(() => process.exit(1)));
}

let code = 0;
try {
    const summary = await Promise.race([run(), overall]);
    if (VERBOSE) process.stderr.write(await details(null));
    process.stdout.write(summary + '\n');
} catch (err) {
    process.stderr.write(await details(err));
    code = 1;
} finally {
    clearTimeout(timer);
}
await Promise.race([cleanup(), new Promise(resolve => setTimeout(resolve, 10000))]);
process.exit(code);

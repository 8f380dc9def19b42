#!/usr/bin/env bash
# Renders the MCP Apps view of examples/after-sales (ui://after-sales/ticket) in a real browser,
# headless Chromium, through the official host bridge of the MCP Apps SDK, end to end: the
# server over Streamable HTTP, the view's ui/initialize, tool input and result, then a click
# in the view that calls the app-only tool after_sales_change_refund through the bridge and the
# server; and a page of another loopback origin calling the server directly (CORS). See
# scripts/apps-browser/run.mjs for every step and check.
#
#   usage: scripts/apps-browser.sh BIN [--screenshot PATH]
#
# BIN is the built example, e.g. target/debug/examples/after-sales. It runs on a fresh SQLite
# desk in a temporary directory, on a free port of 127.0.0.1. Prints one summary line and exits
# 0; on failure prints what failed with the host's message log and exits 1. Exit status 2: bad
# usage; 3: an install failed.
#
# Installs, when missing:
#   - Chromium from Debian's `chromium` package (apt-get, as root or with `sudo -n`), used as
#     /usr/bin/chromium; set MCP_APPS_BROWSER_CHROMIUM to use another Chromium instead.
#   - from npm, pinned in scripts/apps-browser/package.json and package-lock.json (`npm ci`), into
#     ${MCP_APPS_BROWSER_HOME:-$HOME/.cache/mcp-apps-browser}, reinstalled when the lock changes:
#     @modelcontextprotocol/ext-apps (github.com/modelcontextprotocol/ext-apps; its package.json
#     says MIT, its LICENSE describes the MCP project's move from MIT to Apache-2.0),
#     @modelcontextprotocol/client and core, the MCP TypeScript SDK v2
#     (github.com/modelcontextprotocol/typescript-sdk, Apache-2.0 as its v2 packages declare),
#     zod (MIT), playwright-core (Apache-2.0, drives Chromium over CDP; no browser download),
#     esbuild (MIT, bundles scripts/apps-browser/host.js for the page).
#     Node >= 20 is needed (the SDKs' engines): when the node on PATH is older, Node 22 comes
#     from npm as node-linux-<arch>, as scripts/auth-clients.sh does.
# Nothing is vendored here, and nothing is written into the repository.
#
# Environment (optional): MCP_APPS_BROWSER_HOME (above); MCP_APPS_BROWSER_NODE (a node to use);
# MCP_APPS_BROWSER_CHROMIUM (above); MCP_APPS_BROWSER_TIMEOUT (seconds for the whole run, default 90);
# MCP_APPS_BROWSER_VERBOSE=1 (the steps, the host's message log and the console, also on success).
# Apart from the installs, all traffic stays on 127.0.0.1: proxies are unset for the run.
set -euo pipefail

NODE_VERSION=22.23.5   # only used when no suitable node is on PATH

die() { local code=$1; shift; echo "apps-browser: $*" >&2; exit "$code"; }
usage() { die 2 "usage: $0 BIN [--screenshot PATH]"; }

[ $# -eq 1 ] || { [ $# -eq 3 ] && [ "$2" = --screenshot ]; } || usage
bin=$1
[ -f "$bin" ] && [ -x "$bin" ] || die 2 "$bin is not an executable file"
bin=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")
shot=()
if [ $# -eq 3 ]; then
  mkdir -p "$(dirname "$3")"
  shot=(--screenshot "$(cd "$(dirname "$3")" && pwd)/$(basename "$3")")
fi

src=$(cd "$(dirname "$0")/apps-browser" && pwd) || die 3 "scripts/apps-browser/ is missing"
home=${MCP_APPS_BROWSER_HOME:-$HOME/.cache/mcp-apps-browser}

# --- Chromium --------------------------------------------------------------------------------
browser=${MCP_APPS_BROWSER_CHROMIUM:-/usr/bin/chromium}
install_chromium() {
  bash "$src/../apt-install.sh" apps-browser chromium || exit
  [ -x /usr/bin/chromium ] || die 3 "chromium installed, but there is no /usr/bin/chromium"
}
if [ ! -x "$browser" ]; then
  [ -z "${MCP_APPS_BROWSER_CHROMIUM:-}" ] || die 3 "MCP_APPS_BROWSER_CHROMIUM=$browser is not executable"
  install_chromium
fi

# --- Node and the npm packages ---------------------------------------------------------------
# shellcheck source=node.sh
. "$(dirname "${BASH_SOURCE[0]}")/node.sh"
node_pkg=$(node_npm_package)
pick_node() {
  node_pick 20 "${MCP_APPS_BROWSER_NODE:-}" "$(command -v node 2>/dev/null || true)" \
    ${node_pkg:+"$home/node_modules/$node_pkg/bin/node"}
}
ready() { node_ready "$home" @modelcontextprotocol/ext-apps pick_node "$src/package.json" "$src/package-lock.json"; }
# esbuild's install script is not needed: its JS API finds the binary in @esbuild/<platform> itself.
install_npm() { node_install_into "$home" apps-browser pick_node ci "$src/package.json" "$src/package-lock.json" || exit 3; }
ready || install_npm
node=$(pick_node)

# --- bundle and run --------------------------------------------------------------------------
# Imports resolve from the cache directory, so the sources are copied there for each run.
cp "$src/host.js" "$src/run.mjs" "$home/"
(cd "$home" && "$node" -e '
  require("esbuild").build({
    entryPoints: ["host.js"], outfile: "host.bundle.js", bundle: true, format: "iife",
    platform: "browser", target: "chrome110", legalComments: "none", logLevel: "warning"
  }).catch(() => process.exit(1))') || die 3 "esbuild could not bundle host.js in $home"

unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY all_proxy ALL_PROXY NODE_USE_ENV_PROXY
export NO_PROXY=127.0.0.1,localhost no_proxy=127.0.0.1,localhost
limit=${MCP_APPS_BROWSER_TIMEOUT:-90}
[[ "$limit" =~ ^[0-9]+$ ]] || die 2 "MCP_APPS_BROWSER_TIMEOUT must be a whole number of seconds"
rc=0
timeout -k 5 "$(( limit + 30 ))" "$node" "$home/run.mjs" --server "$bin" --bundle "$home/host.bundle.js" \
  --chromium "$browser" "${shot[@]}" || rc=$?
case "$rc" in
  0 | 1) exit "$rc" ;;
  124 | 137) die 1 "the run did not finish within $(( limit + 30 ))s and was stopped" ;;
  *) die 1 "run.mjs exited with status $rc" ;;
esac

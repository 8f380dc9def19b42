#!/usr/bin/env bash
# The 2025-11-25 tasks of examples/everything (tools/call with `task`, tasks/get, tasks/result,
# tasks/cancel) through a client nobody here wrote: the official MCP TypeScript SDK client, v1,
# whose `experimental.tasks` speaks that revision's tasks. Once over stdio, once over Streamable
# HTTP on a free port of 127.0.0.1. See scripts/tasks-2025/check.mjs for every check.
#
#   usage: scripts/tasks-2025.sh BIN
#
# BIN is the built example, e.g. target/debug/examples/everything. Prints one line per
# transport and a summary, and exits 0; on failure says what failed and exits 1. Exit status 2:
# bad usage; 3: an install failed.
#
# Installs, when missing: from npm, pinned in scripts/tasks-2025/package.json and
# package-lock.json (`npm ci`), into ${MCP_TASKS_2025_HOME:-$HOME/.cache/mcp-tasks-2025},
# reinstalled when the lock changes: @modelcontextprotocol/sdk 1.32.2, the MCP TypeScript SDK v1
# (github.com/modelcontextprotocol/typescript-sdk, MIT), and what it depends on. Node >= 18 is
# needed: when the node on PATH is older, Node 22 comes from npm as node-linux-<arch>, as
# scripts/auth-clients.sh does. Nothing is vendored here, and nothing is written into the
# repository.
#
# Environment (optional): MCP_TASKS_2025_HOME (above); MCP_TASKS_2025_NODE (a node to use).
# Apart from the install, all traffic stays on 127.0.0.1: proxies are unset for the run.
set -euo pipefail

NODE_VERSION=22.23.5   # only used when no suitable node is on PATH

die() { local code=$1; shift; echo "tasks-2025: $*" >&2; exit "$code"; }
[ $# -eq 1 ] || die 2 "usage: $0 BIN"
bin=$1
[ -f "$bin" ] && [ -x "$bin" ] || die 2 "$bin is not an executable file"
bin=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")

src=$(cd "$(dirname "$0")/tasks-2025" && pwd) || die 3 "scripts/tasks-2025/ is missing"
home=${MCP_TASKS_2025_HOME:-$HOME/.cache/mcp-tasks-2025}

# shellcheck source=node.sh
. "$(dirname "${BASH_SOURCE[0]}")/node.sh"
node_pkg=$(node_npm_package)
pick_node() {
  node_pick 18 "${MCP_TASKS_2025_NODE:-}" "$(command -v node 2>/dev/null || true)" \
    ${node_pkg:+"$home/node_modules/$node_pkg/bin/node"}
}
ready() { node_ready "$home" @modelcontextprotocol/sdk pick_node "$src/package.json" "$src/package-lock.json"; }
ready || node_install_into "$home" tasks-2025 pick_node ci "$src/package.json" "$src/package-lock.json" || exit 3
node=$(pick_node)
# Imports resolve from the cache directory, so the check is copied there for each run.
cp "$src/check.mjs" "$home/"

unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY all_proxy ALL_PROXY NODE_USE_ENV_PROXY
export NO_PROXY=127.0.0.1,localhost no_proxy=127.0.0.1,localhost

passed=0
run() { # HOW TARGET
  if timeout -k 5 60 "$node" "$home/check.mjs" "$1" "$2"; then
    passed=$((passed + 1))
  else
    echo "tasks-2025: $1: failed" >&2
  fi
}

run stdio "$bin"

log=$(mktemp)
pid=""
stop() { if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi; rm -f "$log"; }
trap stop EXIT
free_port() { "$node" -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'; }
url=""
for _ in 1 2 3; do
  port=$(free_port) || die 1 "cannot pick a free port"
  "$bin" --http "127.0.0.1:$port" >"$log" 2>&1 &
  pid=$!
  for _ in $(seq 1 100); do
    if curl -s --noproxy '*' -o /dev/null --max-time 2 "http://127.0.0.1:$port/mcp" 2>/dev/null; then url="http://127.0.0.1:$port/mcp"; break; fi
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  [ -n "$url" ] && break
  kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; pid=""   # e.g. the port was taken meanwhile
done
if [ -n "$url" ]; then
  run http "$url"
else
  tail -n 20 "$log" >&2
  echo "tasks-2025: http: the server did not start" >&2
fi

echo "tasks-2025: $passed of 2 transports passed"
[ "$passed" -eq 2 ]

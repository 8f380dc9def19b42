#!/usr/bin/env bash
# Measures the multi-replica deployment (deploy/cluster.sh, release build):
# requests/s of `tools/call greet` through nginx with 1, 2 and 3 replicas
# (wrk, 2 threads, 64 connections, 10 s), cross-replica notification latency
# p50/p99, and task create -> get latency on Redis against one replica
# keeping tasks in memory. Prints the figures; bench/RESULTS.md has a run.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export MCP_DEPLOY_PROFILE=release
cluster() { bash "$ROOT/deploy/cluster.sh" "$@"; }
trap 'cluster down >/dev/null 2>&1 || true; [ -n "${solo:-}" ] && kill "$solo" 2>/dev/null || true' EXIT
command -v wrk >/dev/null || { echo "replicas.sh: needs wrk (apt-get install wrk)" >&2; exit 1; }
lua=$(mktemp)
cat >"$lua" <<'LUA'
wrk.method = "POST"
wrk.body = [[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"greet","arguments":{"name":"load"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}]]
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Accept"] = "application/json, text/event-stream"
wrk.headers["MCP-Protocol-Version"] = "2026-07-28"
wrk.headers["Mcp-Method"] = "tools/call"
wrk.headers["Mcp-Name"] = "greet"
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format("WRK\t%.0f\t%.2f\t%.2f\t%d\n", summary.requests / (summary.duration / 1e6),
    latency:percentile(50) / 1000, latency:percentile(99) / 1000, e.connect + e.read + e.write + e.status + e.timeout))
end
LUA
for n in 1 2 3; do
    cluster up "$n" >/dev/null
    wrk -t2 -c64 -d3s -s "$lua" http://127.0.0.1:28400/mcp >/dev/null
    wrk -t2 -c64 -d10s -s "$lua" http://127.0.0.1:28400/mcp | awk -F'\t' -v n="$n" \
        '/^WRK/{printf "through nginx, %d replica(s): %s requests/s, p50 %s ms, p99 %s ms, %s errors\n", n, $2, $3, $4, $5}'
    if [ "$n" = 3 ]; then
        python3 "$ROOT/scripts/scale_test.py" measure-notifications
        python3 "$ROOT/scripts/scale_test.py" measure-tasks 28411 | sed 's/^/Redis: /'
    fi
    cluster down >/dev/null
done
# The same binary without Redis: tasks in memory.
bin=$(cat "${MCP_DEPLOY_DIR:-/tmp/mcp-deploy}/bin")
"$bin" --http 127.0.0.1:28499 2>/dev/null &
solo=$!
for _ in $(seq 1 100); do (exec 3<>/dev/tcp/127.0.0.1/28499) 2>/dev/null && break; sleep 0.1; done
MCP_SCALE_NO_CLUSTER=1 python3 "$ROOT/scripts/scale_test.py" measure-tasks 28499 | sed 's/^/memory: /'
rm -f "$lua"

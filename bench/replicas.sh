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
# shellcheck source=wrk.sh
. "$ROOT/bench/wrk.sh"
wrk_ensure
lua=$(mktemp)
wrk_tools_call greet '{"name":"load"}' >"$lua"
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

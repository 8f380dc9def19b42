#!/usr/bin/env bash
# Runs the multi-replica scenarios: starts Redis, 3 replicas of
# examples/everything and nginx on loopback (deploy/cluster.sh, which installs
# redis-server and nginx from Debian's packages when missing), runs
# scripts/scale_test.py against them, and stops everything (the scenario
# two_servers_one_redis adds two replicas of examples/after-sales on the same
# Redis, `cluster.sh neighbours`, and gateway_replicas_announce_an_upstream_update_once
# two of examples/gateway in front of the cluster; after_sales_on_postgres starts a cluster of
# its own: three after-sales replicas on one PostgreSQL, installed from
# Debian's packages when missing, and one Redis behind nginx, on ports from
# 28500). Names on the command line run only those
# scenarios (`bash scripts/scale-test.sh two_servers_one_redis`). Ends with
# `scale-test: N passed, M failed`; exits non-zero when a scenario fails or
# the cluster cannot start. Logs stay in $MCP_DEPLOY_DIR (default /tmp/mcp-deploy).
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cluster() { bash "$ROOT/deploy/cluster.sh" "$@"; }
RUN="${MCP_DEPLOY_DIR:-/tmp/mcp-deploy}"
# The desk's own cluster too (after_sales_on_postgres stops it, unless interrupted).
desk_down() { MCP_DEPLOY_DIR="$RUN/desk" MCP_DEPLOY_BASE_PORT="${MCP_DESK_BASE_PORT:-28500}" cluster down; }
trap 'cluster down >/dev/null 2>&1; desk_down >/dev/null 2>&1' EXIT
if ! cluster up 3; then
    echo "scale-test: 0 passed, 1 failed (the cluster did not start)"
    exit 1
fi
python3 "$ROOT/scripts/scale_test.py" "$@"

#!/usr/bin/env bash
# Runs the multi-replica scenarios: starts Redis, 3 replicas of
# examples/everything and nginx on loopback (deploy/cluster.sh, which installs
# redis-server and nginx from Debian's packages when missing), runs
# scripts/scale_test.py against them, and stops everything (the scenario
# two_servers_one_redis adds two replicas of examples/after-sales on the same
# Redis, `cluster.sh neighbours`). Names on the command line run only those
# scenarios (`bash scripts/scale-test.sh two_servers_one_redis`). Ends with
# `scale-test: N passed, M failed`; exits non-zero when a scenario fails or
# the cluster cannot start. Logs stay in $MCP_DEPLOY_DIR (default /tmp/mcp-deploy).
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cluster() { bash "$ROOT/deploy/cluster.sh" "$@"; }
trap 'cluster down >/dev/null 2>&1' EXIT
if ! cluster up 3; then
    echo "scale-test: 0 passed, 1 failed (the cluster did not start)"
    exit 1
fi
python3 "$ROOT/scripts/scale_test.py" "$@"

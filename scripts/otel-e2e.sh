#!/usr/bin/env bash
# OpenTelemetry end to end in every feature combination of the root package
# that includes `otel` (otel; otel,auth; otel,redis; otel,auth,redis): for
# each, builds examples/everything with exactly those features and runs
# tests/otlp.rs, which starts that binary exporting to a real OTLP/HTTP
# receiver (tests/support/otlp.rs) and checks the spans and metrics that
# arrive against the OpenTelemetry MCP conventions, then that a collector
# that hangs or refuses neither stops serving nor the exit on SIGTERM, and
# that examples/observed (a binary with its own main) exports the same.
# Prints one line per combination; stops at the first that fails (its
# output shown) and exits non-zero. Everything stays on loopback.
#
#   usage: bash scripts/otel-e2e.sh [COMBO...]   (default: all four; e.g. otel,auth)
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT" || exit 1
export NO_PROXY='localhost,127.0.0.1,::1' no_proxy='localhost,127.0.0.1,::1'

combos=("$@")
[ ${#combos[@]} -eq 0 ] && combos=(otel otel,auth otel,redis otel,auth,redis)

log=$(mktemp "${TMPDIR:-/tmp}/mcp-otel-e2e.XXXXXX")
trap 'rm -f "$log"' EXIT

passed=0
for combo in "${combos[@]}"; do
  flags=(--no-default-features --features "$combo")
  if ! cargo build --example everything "${flags[@]}" >"$log" 2>&1; then
    cat "$log"
    echo "otel-e2e: $combo: FAILED (cargo build --example everything ${flags[*]})"
    exit 1
  fi
  start=$SECONDS
  if ! cargo test --test otlp "${flags[@]}" >"$log" 2>&1; then
    cat "$log"
    echo "otel-e2e: $combo: FAILED (cargo test --test otlp ${flags[*]})"
    exit 1
  fi
  # A test binary built without `otel` runs nothing: make sure these ran.
  ran=$(grep -Eo 'test result: ok\. [0-9]+ passed' "$log" | grep -Eo '[0-9]+' | head -1)
  if [ "${ran:-0}" -lt 3 ]; then
    cat "$log"
    echo "otel-e2e: $combo: FAILED (${ran:-0} tests ran, expected 4)"
    exit 1
  fi
  passed=$((passed + 1))
  echo "otel-e2e: $combo: ok ($ran tests, $((SECONDS - start)) s)"
done
echo "otel-e2e: ${passed} of ${#combos[@]} combinations passed"

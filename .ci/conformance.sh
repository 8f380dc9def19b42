#!/usr/bin/env bash
# Runs the official MCP conformance suite against examples/everything over
# Streamable HTTP and fails unless every scored scenario (minus the expected
# failures listed in .ci/conformance-baseline-REVISION) and the required
# not-scored ones pass with no WARNING check.
#   usage: .ci/conformance.sh REVISION [REVISION...]
set -euo pipefail
cd "$(dirname "$0")/.."
shared=${MCP_SHARED_DIR:-../shared}
bash "$shared/conformance/setup.sh"
cargo build --quiet --example everything
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
log=$(mktemp)
"${CARGO_TARGET_DIR:-target}/debug/examples/everything" --http "127.0.0.1:$port" 2>"$log" &
pid=$!
trap 'kill $pid 2>/dev/null || true; [ "$status" = 0 ] || { echo "--- server log:"; tail -20 "$log"; }' EXIT
status=0
for _ in $(seq 50); do
  curl -s -o /dev/null "http://127.0.0.1:$port/mcp" && break
  sleep 0.1
done
for rev in "$@"; do
  out=$(mktemp)
  bash "$shared/conformance/run.sh" "http://127.0.0.1:$port/mcp" "$rev" | tee "$out"
  baseline=.ci/conformance-baseline-$rev
  REQUIRED_NOT_SCORED="json-schema-2020-12 http-header-validation http-custom-header-server-validation server-session-lifecycle" \
  BASELINE_FILE="$baseline" python3 - "$out" <<'PY' || status=1
import os, re, sys
rows = open(sys.argv[1]).read().splitlines()
baseline = set()
if os.path.exists(os.environ["BASELINE_FILE"]):
    baseline = {l.strip() for l in open(os.environ["BASELINE_FILE"]) if l.strip() and not l.startswith("#")}
required_ns = set(os.environ["REQUIRED_NOT_SCORED"].split())
bad, seen = [], 0
for line in rows:
    m = re.match(r"^(\S+)\s+(yes|no: \S+)\s+(PASS|FAIL|MISSING)\s+(\d+)/(\d+)/(\d+)/(\d+)", line)
    if not m:
        continue
    name, scored, result, warn = m.group(1), m.group(2), m.group(3), int(m.group(6))
    if scored != "yes" and name not in required_ns:
        continue
    seen += 1
    if name in baseline:
        if result == "PASS" and warn == 0:
            bad.append(f"{name}: passes now; remove it from the baseline")
        continue
    if result != "PASS":
        bad.append(f"{name}: {result}")
    elif warn:
        bad.append(f"{name}: {warn} WARNING check(s)")
if seen == 0:
    bad.append("no scenario rows parsed")
for b in bad:
    print("conformance gate:", b)
print("conformance gate:", "OK" if not bad else f"{len(bad)} problem(s)")
sys.exit(1 if bad else 0)
PY
done
exit $status

#!/usr/bin/env bash
# The soak test of the HTTP server, one command: `bash bench/soak.sh` (from anywhere).
#
# Builds `examples/everything` and the load generator (`mcp-bench` binary
# `soak`) in release, starts the server on 127.0.0.1:$SOAK_PORT (loopback
# only), sends SOAK_REQUESTS mixed requests over SOAK_CONNS keep-alive
# connections (plain tools/call, MRTR rounds with sealed requestState,
# subscriptions/listen streams opened and dropped, progress streams dropped
# mid-call, malformed bodies; every answer checked), samples the server's
# RSS every second, stops the server (SIGTERM) and prints the figures. Passes
# (`soak: PASS`, exit 0) only with no unexpected error and the RSS at the end
# within the RSS after warm-up × 1.10 + 1 MiB. See bench/src/bin/soak.rs.
#
# Knobs (defaults are the specified run): SOAK_REQUESTS=1000000 SOAK_CONNS=32
# SOAK_WARMUP=100000 (or a tenth of a shorter run) SOAK_THREADS=1 (load generator threads) SOAK_PORT=29201
# SOAK_SKIP_BUILD=1 (use the binaries already built)
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
TARGET=${CARGO_TARGET_DIR:-$ROOT/target}
RAW=$TARGET/bench-results
REQUESTS=${SOAK_REQUESTS:-1000000}
CONNS=${SOAK_CONNS:-32}
THREADS=${SOAK_THREADS:-1}
# Below Linux's ephemeral range (32768-60999 by default), like run.sh's ports:
# the tens of thousands of client sockets of the run must not take it.
PORT=${SOAK_PORT:-29201}
ADDR=127.0.0.1:$PORT
SERVER=$TARGET/release/examples/everything
SOAK=$TARGET/release/soak
TSV=$RAW/soak-rss.tsv
STDERR=$RAW/soak-server.stderr

log() { echo "[soak $(date +%T)] $*" >&2; }

SERVER_PID=
stop_server() {
    if [ -n "$SERVER_PID" ]; then
        kill "$SERVER_PID" 2>/dev/null || true
        wait "$SERVER_PID" 2>/dev/null || true
        SERVER_PID=
    fi
}
trap stop_server EXIT
trap 'exit 130' INT TERM

ulimit -n 16384 2>/dev/null || ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
command -v curl >/dev/null || { echo "curl is needed" >&2; exit 1; }
mkdir -p "$RAW"

if [ "${SOAK_SKIP_BUILD:-0}" != 1 ]; then
    log "building examples/everything and the load generator (release)"
    cargo build --release --example everything
    cargo build --release -p mcp-bench --bin soak
fi

if curl -s -o /dev/null "http://$ADDR/" 2>/dev/null; then
    echo "something already listens on $ADDR; set SOAK_PORT" >&2
    exit 1
fi
log "starting $SERVER --http $ADDR (stderr in $STDERR)"
"$SERVER" --http "$ADDR" 2>"$STDERR" &
SERVER_PID=$!
for _ in $(seq 200); do
    if ! kill -0 "$SERVER_PID" 2>/dev/null; then
        SERVER_PID=
        echo "the server exited at start: $(cat "$STDERR")" >&2
        exit 1
    fi
    if curl -s -o /dev/null "http://$ADDR/" 2>/dev/null; then break; fi
    sleep 0.05
done
curl -s -o /dev/null "http://$ADDR/" || { echo "the server does not answer on $ADDR" >&2; exit 1; }

echo "soak: date $(date -u +%Y-%m-%dT%H:%MZ), commit $(git rev-parse --short HEAD 2>/dev/null || echo '?')$([ -z "$(git status --porcelain -- mcp-runtime mcp-macros examples 2>/dev/null)" ] || echo ' + uncommitted changes'), $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
status=0
"$SOAK" --addr "$ADDR" --pid "$SERVER_PID" --requests "$REQUESTS" --conns "$CONNS" \
    ${SOAK_WARMUP:+--warmup "$SOAK_WARMUP"} --threads "$THREADS" --tsv "$TSV" || status=$?

# The server must have survived the run, and stop cleanly (SIGTERM: exit 0).
if ! kill -0 "$SERVER_PID" 2>/dev/null; then
    wait "$SERVER_PID" 2>/dev/null && code=0 || code=$?
    SERVER_PID=
    echo "soak: the server died during the run (exit status $code); see $STDERR" >&2
    exit 1
fi
kill -TERM "$SERVER_PID"
wait "$SERVER_PID" && code=0 || code=$?
SERVER_PID=
echo "soak: server exit status after SIGTERM $code"
if [ "$code" != 0 ]; then
    echo "soak: the server did not stop cleanly; see $STDERR" >&2
    exit 1
fi
exit "$status"

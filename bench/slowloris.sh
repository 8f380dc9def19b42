#!/usr/bin/env bash
# Slowloris and connection flood: the echo path's requests/s and p99 while N
# silent connections are held, against the same without them, and what the
# server did with the silent ones (answered 503 at once by a cap, closed by the
# header timeout, and when).
#
#   bash bench/slowloris.sh
#
#   SLOWLORIS_CONNECTIONS  silent connections held (default 1000)
#   SLOWLORIS_DURATION     wrk's run in each phase (default 8s: shorter than
#                          the default 10 s header timeout, so the whole run
#                          happens while the connections are held)
#
# examples/everything (release) on 127.0.0.1, pinned to core 1; wrk (1 thread,
# 8 keep-alive connections, `tools/call test_simple_text`) on core 0 from
# 127.0.0.1; the silent connections come from 127.0.0.2 (another loopback
# address, so that the per-address cap applies to them and not to wrk), each
# opened and then never written to. Three phases:
#   baseline          no silent connections
#   defaults          N silent connections, the server's defaults (256 per address)
#   no address cap    N silent connections, MCP_MAX_CONNECTIONS_PER_PEER=0 (a flood
#                     from many addresses: only the total cap, 4096, and the header
#                     timeout hold it)
#   baseline          again, to show how much the machine drifted meanwhile
# Loopback only, bounded in count (N) and time (about a minute after the build).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
N=${SLOWLORIS_CONNECTIONS:-1000}
DURATION=${SLOWLORIS_DURATION:-8s}
PORT=29501
[ "$N" -ge 1 ] && [ "$N" -le 20000 ] || { echo "slowloris.sh: SLOWLORIS_CONNECTIONS must be 1..20000" >&2; exit 2; }
# shellcheck source=wrk.sh
. "$ROOT/bench/wrk.sh"
wrk_ensure
command -v python3 >/dev/null || { echo "slowloris.sh: needs python3" >&2; exit 1; }
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY
# The holder's sockets and the server's, with room to spare.
want=$((N * 2 + 512))
hard=$(ulimit -Hn)
if [ "$hard" != unlimited ] && [ "$hard" -lt "$want" ]; then want=$hard; fi
ulimit -n "$want" 2>/dev/null || echo "slowloris.sh: could not raise the open-file limit to $want (now $(ulimit -n))" >&2

work=$(mktemp -d "${TMPDIR:-/tmp}/mcp-bench-slowloris.XXXXXX")
pids=()
cleanup() {
    for p in ${pids[@]+"${pids[@]}"}; do kill "$p" 2>/dev/null || true; done
    rm -rf "$work"
}
trap cleanup EXIT

cargo build -q --release --example everything
exe=target/release/examples/everything
wrk_tools_call test_simple_text '{}' >"$work/call.lua"

# Holds N silent connections from 127.0.0.2 and watches each until the server
# closes it or WATCH seconds pass; writes "held" to READY once all are open,
# and a summary line when done.
cat >"$work/hold.py" <<'PY'
import selectors, socket, sys, time
n, port, watch, ready = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
sel = selectors.DefaultSelector()
opened, failed = {}, 0
start = time.monotonic()
for _ in range(n):
    s = socket.socket()
    try:
        s.bind(("127.0.0.2", 0))
        s.connect(("127.0.0.1", port))
    except OSError:
        failed += 1
        s.close()
        continue
    s.setblocking(False)
    opened[s] = time.monotonic()
    sel.register(s, selectors.EVENT_READ)
open(ready, "w").write("held\n")
answered, closed = set(), []   # closed: (how, seconds from its open to its close)
deadline = start + watch
while opened and time.monotonic() < deadline:
    for key, _ in sel.select(timeout=0.1):
        s = key.fileobj
        try:
            data = s.recv(4096)
        except OSError:
            data = b""
        if data:
            if data.startswith(b"HTTP/1.1 503"):
                answered.add(s)
            continue
        at = time.monotonic() - opened.pop(s)
        sel.unregister(s)
        closed.append(("503" if s in answered else "closed", at))
        answered.discard(s)
        s.close()
still = len(opened)
def span(times):
    t = sorted(times)
    return f"{len(t)}" + (f" after {t[0]:.2f}-{t[-1]:.2f} s (median {t[len(t)//2]:.2f})" if t else "")
answered_503 = [at for how, at in closed if how == "503"]
# Refusals close at accept (seen late: reading starts once all are open);
# the header timeout closes after 10 s by default.
at_once = [at for how, at in closed if how == "closed" and at < 5]
timed_out = [at for how, at in closed if how == "closed" and at >= 5]
print(f"opened {n - failed} (failed {failed}); answered 503 and closed {span(answered_503)}; "
      f"closed unanswered within 5 s (refused past the 64 lingering) {span(at_once)}; "
      f"closed unanswered after 5 s (the header timeout) {span(timed_out)}; {still} still open after {watch:.0f} s")
PY

start_server() { # [env...]
    env "$@" taskset -c 1 "$exe" --http "127.0.0.1:$PORT" 2>"$work/server.log" &
    server=$!
    pids+=("$server")
    for _ in $(seq 1 100); do grep -q "Streamable HTTP at" "$work/server.log" 2>/dev/null && return 0; sleep 0.1; done
    cat "$work/server.log" >&2
    exit 1
}
stop_server() {
    kill "$server" 2>/dev/null || true
    wait "$server" 2>/dev/null || true
}
run_wrk() {
    taskset -c 0 wrk -t1 -c8 -d"$DURATION" -s "$work/call.lua" "http://127.0.0.1:$PORT/mcp" | awk -F'\t' '/^WRK/{printf "req/s %6d   p50 %6.2f ms   p99 %6.2f ms   errors %d", $2, $3, $4, $5}'
}
phase() { # LABEL [env...]
    local label=$1
    shift
    start_server "$@"
    taskset -c 0 wrk -t1 -c8 -d1s -s "$work/call.lua" "http://127.0.0.1:$PORT/mcp" >/dev/null # warm-up
    if [ "$label" = baseline ]; then
        printf '%-16s %s\n' "$label" "$(run_wrk)"
    else
        rm -f "$work/ready"
        taskset -c 0 python3 "$work/hold.py" "$N" "$PORT" 25 "$work/ready" >"$work/hold.out" &
        holder=$!
        for _ in $(seq 1 300); do [ -s "$work/ready" ] && break; sleep 0.1; done
        local fds
        fds=$(ls "/proc/$server/fd" 2>/dev/null | wc -l)
        local figures
        figures=$(run_wrk)
        wait "$holder"
        printf '%-16s %s   server fds while held %s\n%-16s   %s silent: %s\n' "$label" "$figures" "$fds" "" "$N" "$(cat "$work/hold.out")"
    fi
    stop_server
}

echo "slowloris: examples/everything (release), tools/call test_simple_text, wrk -t1 -c8 -d$DURATION from 127.0.0.1, $N silent connections from 127.0.0.2"
phase baseline
phase defaults
phase "no address cap" MCP_MAX_CONNECTIONS_PER_PEER=0
phase baseline # again: how much the machine drifted meanwhile

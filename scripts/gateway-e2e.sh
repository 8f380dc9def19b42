#!/usr/bin/env bash
# End to end through the gateway (examples/gateway) with servers and a client built on the
# official MCP SDKs, not on this project. For each upstream SDK (py: the Python SDK; ts: the
# TypeScript SDK v2) x transport to the upstream (stdio: the gateway spawns it; http: Streamable
# HTTP on 127.0.0.1) x era the gateway speaks to it (the config's `protocolVersion`, 2026-07-28
# or 2025-11-25) x era the client speaks to the gateway (2025-11-25, the `initialize` handshake;
# or 2026-07-28), sixteen runs in all, each on a fresh upstream and a fresh gateway:
#   1. starts the upstream when it is an HTTP one (a free port; waits until it answers HTTP),
#      writes a gateway config with that one upstream under prefix `up`, starts the gateway on a
#      free port and waits until its tools/list has `up_add`;
#   2. runs the checker (scripts/upstreams.sh check, on the Python SDK client) against
#      http://127.0.0.1:PORT/mcp with --prefix up_ and --mode legacy or --mode 2026-07-28: tools
#      listed and called (add, slow, and hop, whose response stream a 2025-era HTTP upstream
#      closes before the answer, which the gateway resumes with Last-Event-ID), an elicitation
#      round trip through the gateway (greet), the
#      resource and template lists and reads, a prompt, and a list change (grow: the upstream
#      announces tools/list_changed, the gateway refreshes its lists and tells its own client,
#      which then lists and calls `extra`); also that the client got the era it asked for and
#      that the gateway's log names the era it was told to speak to the upstream;
#   3. stops the gateway and the upstream (and, on any exit, everything this script started),
#      and fails the run if a stdio upstream outlives the gateway.
# Each run fresh: the upstreams keep `extra` once grown, so a second client on the same upstream
# would find it listed whether or not the gateway ever refreshed.
#
# A run that hangs is bounded (an upstream 20 s to answer, the gateway 10 s to list up_add, the
# checker 60 s), and runs not started within 270 s fail as not run; a normal pass takes ~90 s.
#
# Prints one line per run, `gateway-e2e: py stdio upstream@2025-11-25 client@2026-07-28: ok`
# (or `FAILED`, then the failed checks and the gateway's warnings and errors, indented), and ends
# with `gateway-e2e: N passed, M failed`. Logs stay in a temporary directory, kept (and named) only
# when a run failed.
#
#   usage: bash scripts/gateway-e2e.sh [WORD...]
#          with WORDs, only the runs whose line has every one of them, e.g. `ts http` or
#          `upstream@2025-11-25`
#
# Installs what the upstreams and the checker need through scripts/upstreams.sh install (PyPI
# `mcp` into a venv, the npm packages of the TypeScript SDK v2, and Node 22 from npm when the node
# on PATH is older than 20; see that script) and builds the example (cargo build --example
# gateway). All traffic stays on loopback.
#
# Exit status: 0 every run passed; 1 a run failed (or the build did); 2 bad usage; 3 the install
# failed.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY all_proxy ALL_PROXY
export NO_PROXY='localhost,127.0.0.1,::1' no_proxy='localhost,127.0.0.1,::1'

UPSTREAMS="$ROOT/scripts/upstreams.sh"
GATEWAY="$ROOT/target/debug/examples/gateway"
UPSTREAM_WAIT=20  # seconds for an HTTP upstream to answer
GATEWAY_WAIT=10   # seconds for the gateway to list up_add (its upstream is up by then)
CHECK_WAIT=60     # seconds for one checker run, start to end (its own per-request limit: 15 s)
BUDGET=270        # seconds for all the runs: a run not started by then fails as not run

for word in "$@"; do
  case "$word" in -h|--help) sed -n '2,/^set -uo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 0 ;; -*) echo "gateway-e2e: unknown option $word" >&2; exit 2 ;; esac
done

work=$(mktemp -d "${TMPDIR:-/tmp}/mcp-gateway-e2e.XXXXXX")
keep_work=0
upstream_pid="" gateway_pid="" children=()

alive() {  # alive PID: running (a zombie, exited but not reaped by its new parent, is not)
  local state
  kill -0 "$1" 2>/dev/null || return 1
  [ -r "/proc/$1/stat" ] || return 0
  state=$(sed 's/^.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f1)
  [ -n "$state" ] && [ "$state" != Z ]
}
stop() {  # stop PID: SIGTERM, up to 5 s, then SIGKILL (and status 1); reaps it
  local pid=$1 killed=0
  [ -n "$pid" ] || return 0
  kill -TERM "$pid" 2>/dev/null || { wait "$pid" 2>/dev/null; return 0; }
  for _ in $(seq 1 50); do
    alive "$pid" || break
    sleep 0.1
  done
  alive "$pid" && { kill -KILL "$pid" 2>/dev/null; killed=1; }
  wait "$pid" 2>/dev/null
  return "$killed"
}
cleanup() {
  stop "$gateway_pid"; gateway_pid=""
  local pid
  for pid in "${children[@]}"; do kill -KILL "$pid" 2>/dev/null; done
  children=()
  stop "$upstream_pid"; upstream_pid=""
  if [ "$keep_work" = 1 ]; then
    echo "gateway-e2e: logs kept in $work" >&2
  else
    rm -rf "$work"
  fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# wait_http URL PID: until anything at URL answers HTTP (any status), while PID lives.
wait_http() {
  python3 - "$1" "$2" "$UPSTREAM_WAIT" <<'PY'
import os, sys, time, urllib.error, urllib.request
url, pid, wait = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
body = b'{"jsonrpc":"2.0","id":0,"method":"ping"}'
deadline = time.monotonic() + wait
while time.monotonic() < deadline:
    try:
        os.kill(pid, 0)
    except OSError:
        sys.exit("exited before answering")
    req = urllib.request.Request(url, data=body, method="POST", headers={
        "Content-Type": "application/json", "Accept": "application/json, text/event-stream"})
    try:
        urllib.request.urlopen(req, timeout=2).close()
        sys.exit(0)
    except urllib.error.HTTPError:
        sys.exit(0)  # it answered
    except OSError:
        time.sleep(0.1)
sys.exit(f"no HTTP answer within {wait:g} s")
PY
}

# wait_tools URL PID NAME: until the server at URL (a 2025-11-25 session) lists tool NAME.
wait_tools() {
  python3 - "$1" "$2" "$3" "$GATEWAY_WAIT" <<'PY'
import json, os, sys, time, urllib.error, urllib.request
url, pid, name, wait = sys.argv[1], int(sys.argv[2]), sys.argv[3], float(sys.argv[4])
deadline = time.monotonic() + wait

def post(message, session=None):
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
               "MCP-Protocol-Version": "2025-11-25"}
    if session:
        headers["Mcp-Session-Id"] = session
    req = urllib.request.Request(url, data=json.dumps(message).encode(), method="POST", headers=headers)
    with urllib.request.urlopen(req, timeout=5) as resp:
        text = resp.read().decode()
        sid = resp.headers.get("Mcp-Session-Id")
        if "text/event-stream" in (resp.headers.get("Content-Type") or ""):
            data = [line[5:].strip() for line in text.splitlines() if line.startswith("data:")]
            replies = [json.loads(d) for d in data if d]
            text = json.dumps(next((r for r in replies if r.get("id") == message.get("id")), {}))
        return (json.loads(text) if text.strip() else {}), sid

last = "no answer"
session = None
while time.monotonic() < deadline:
    try:
        os.kill(pid, 0)
    except OSError:
        sys.exit(f"the gateway exited (last: {last})")
    try:
        if session is None:
            init, session = post({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-11-25", "capabilities": {},
                "clientInfo": {"name": "gateway-e2e-probe", "version": "0"}}})
            if "result" not in init:
                last = f"initialize: {init}"
                session = None
                raise OSError(last)
            post({"jsonrpc": "2.0", "method": "notifications/initialized"}, session)
        reply, _ = post({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, session)
        names = [t.get("name") for t in reply.get("result", {}).get("tools", [])]
        if name in names:
            try:
                req = urllib.request.Request(url, method="DELETE", headers={"Mcp-Session-Id": session})
                urllib.request.urlopen(req, timeout=2).close()
            except OSError:
                pass
            sys.exit(0)
        last = f"tools/list: {names}" if "result" in reply else f"tools/list: {reply}"
    except urllib.error.HTTPError as e:
        last = f"HTTP {e.code}: {e.read()[:300]!r}"
        session = None
    except (OSError, ValueError) as e:
        last = last if isinstance(e, OSError) and str(e) == last else f"{type(e).__name__}: {e}"
    time.sleep(0.2)
sys.exit(f"no {name} in the gateway's tools/list within {wait:g} s (last: {last})")
PY
}

# verdict JSONFILE CLIENT_ERA: "ok", or what failed (one line each) from the checker's JSON line.
verdict() {
  python3 - "$1" "$2" <<'PY'
import json, sys
path, want = sys.argv[1], sys.argv[2]
try:
    lines = [l for l in open(path).read().splitlines() if l.strip()]
    got = json.loads(lines[-1])
except Exception as e:  # noqa: BLE001
    print(f"no JSON line from the checker ({type(e).__name__}: {e})")
    sys.exit(1)
problems = [f"{check}: {got.get('errors', {}).get(check, 'error')}"
            for check, status in got.get("checks", {}).items() if status != "ok"]
problems += [f"{key}: {message}" for key, message in got.get("errors", {}).items() if key not in got.get("checks", {})]
if got.get("checks", {}).get("connect") == "ok" and got.get("protocol_version") != want:
    problems.append(f"era: the client asked for {want}, got {got.get('protocol_version')}")
if not got.get("ok") and not problems:
    problems.append("the checker says not ok")
print("\n".join(problems) if problems else "ok")
sys.exit(1 if problems else 0)
PY
}

indent() { sed 's/^/    /'; }

# --- prepare ---------------------------------------------------------------------------------
if ! bash "$UPSTREAMS" install >"$work/install.log" 2>&1; then
  cat "$work/install.log" >&2
  echo "gateway-e2e: the install failed (scripts/upstreams.sh install)"
  exit 3
fi
mapfile -t cmd_py < <(bash "$UPSTREAMS" command py 2>>"$work/install.log")
mapfile -t cmd_ts < <(bash "$UPSTREAMS" command ts 2>>"$work/install.log")
if [ ${#cmd_py[@]} -lt 2 ] || [ ${#cmd_ts[@]} -lt 2 ]; then
  cat "$work/install.log" >&2
  echo "gateway-e2e: the install failed (scripts/upstreams.sh command)"
  exit 3
fi
if ! (cd "$ROOT" && cargo build -q --example gateway) >"$work/build.log" 2>&1; then
  cat "$work/build.log" >&2
  echo "gateway-e2e: 0 passed, 1 failed (cargo build --example gateway)"
  exit 1
fi

# --- one run ---------------------------------------------------------------------------------
# run SDK TRANSPORT UPSTREAM_ERA CLIENT_ERA DIR: prints the failures, returns non-zero on any.
run() {
  local sdk=$1 transport=$2 up_era=$3 client_era=$4 dir=$5 mode url port gw_port pid
  mkdir -p "$dir"
  [ "$client_era" = 2025-11-25 ] && mode=legacy || mode=$client_era

  if [ "$transport" = http ]; then
    port=$(free_port)
    bash "$UPSTREAMS" http "$sdk" "$port" >"$dir/upstream.log" 2>&1 &
    upstream_pid=$!
    url="http://127.0.0.1:$port/mcp"
    if ! wait_http "$url" "$upstream_pid" 2>"$dir/wait.err"; then
      echo "upstream at $url: $(cat "$dir/wait.err")"
      tail -n 20 "$dir/upstream.log"
      return 1
    fi
    python3 - "$url" "$up_era" >"$dir/gateway.json" <<'PY'
import json, sys
print(json.dumps({"mcpServers": {"up": {"url": sys.argv[1], "prefix": "up", "protocolVersion": sys.argv[2]}}}, indent=2))
PY
  else
    local -n argv="cmd_$sdk"
    python3 - "$up_era" "${argv[@]}" >"$dir/gateway.json" <<'PY'
import json, sys
era, command, args = sys.argv[1], sys.argv[2], sys.argv[3:]
print(json.dumps({"mcpServers": {"up": {"command": command, "args": args, "prefix": "up", "protocolVersion": era}}}, indent=2))
PY
  fi

  gw_port=$(free_port)
  "$GATEWAY" --config "$dir/gateway.json" --http "127.0.0.1:$gw_port" >"$dir/gateway.out" 2>"$dir/gateway.log" &
  gateway_pid=$!
  local gw_url="http://127.0.0.1:$gw_port/mcp" failed=0
  if ! wait_tools "$gw_url" "$gateway_pid" up_add 2>"$dir/wait.err"; then
    echo "gateway: $(cat "$dir/wait.err")"
    failed=1
  else
    # The era the gateway says it speaks to the upstream: `proxying NAME (ERA) under "up"`.
    if ! grep -q "proxying .* ($up_era) under \"up\"" "$dir/gateway.log"; then
      echo "era: the gateway was told to speak $up_era to the upstream; its log says: $(grep -m1 'proxying' "$dir/gateway.log" || echo 'no proxying line')"
      failed=1
    fi
    timeout -k 5 "$CHECK_WAIT" bash "$UPSTREAMS" check --prefix up_ --mode "$mode" --timeout 15 "$gw_url" \
      >"$dir/check.json" 2>"$dir/check.err"
    local rc=$?
    if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
      echo "checker: no verdict within $CHECK_WAIT s"
      failed=1
    elif ! verdict "$dir/check.json" "$client_era" >"$dir/verdict.txt"; then
      cat "$dir/verdict.txt"
      failed=1
    fi
    if [ "$failed" = 1 ]; then  # what the checker said besides its verdicts
      grep -v -e '^check.py: FAIL ' -e '^check.py: not run: ' "$dir/check.err" | tail -n 10
    fi
  fi

  # Stop the gateway, then make sure a stdio upstream it spawned went with it.
  local kids
  kids=$(pgrep -P "$gateway_pid" 2>/dev/null | tr '\n' ' ')
  read -r -a children <<<"$kids"
  if ! stop "$gateway_pid"; then
    echo "the gateway was still running 5 s after SIGTERM (killed)"
    failed=1
  fi
  gateway_pid=""
  for _ in $(seq 1 30); do  # up to 3 s for them to notice
    local left=0
    for pid in "${children[@]}"; do alive "$pid" && left=1; done
    [ "$left" = 0 ] && break
    sleep 0.1
  done
  for pid in "${children[@]}"; do
    if alive "$pid"; then
      echo "process $pid ($(tr '\0' ' ' </proc/"$pid"/cmdline 2>/dev/null)) outlived the gateway"
      kill -KILL "$pid" 2>/dev/null
      failed=1
    fi
  done
  children=()
  stop "$upstream_pid"; upstream_pid=""
  if [ "$failed" = 1 ]; then
    local noise
    noise=$(grep -E ' (WARN|ERROR) | mcp_runtime::(proxy|client)' "$dir/gateway.log" | grep -v 'no requestState keys configured')
    [ -n "$noise" ] && { echo "gateway log ($dir/gateway.log):"; echo "$noise" | tail -n 30 | indent; }
  fi
  return "$failed"
}

# --- all runs --------------------------------------------------------------------------------
passed=0 failed=0 begin=$SECONDS
for sdk in py ts; do
  for transport in stdio http; do
    for up_era in 2026-07-28 2025-11-25; do
      for client_era in 2025-11-25 2026-07-28; do
        label="$sdk $transport upstream@$up_era client@$client_era"
        skip=0
        for word in "$@"; do [[ " $label " == *" $word "* ]] || skip=1; done
        [ "$skip" = 1 ] && continue
        dir="$work/$sdk-$transport-up$up_era-client$client_era"
        if [ $((SECONDS - begin)) -ge "$BUDGET" ]; then
          failed=$((failed + 1))
          echo "gateway-e2e: $label: FAILED (not run: the ${BUDGET} s budget of the whole run is spent)"
          continue
        fi
        start=$SECONDS
        if run "$sdk" "$transport" "$up_era" "$client_era" "$dir" >"$dir.out" 2>&1; then
          passed=$((passed + 1))
          echo "gateway-e2e: $label: ok ($((SECONDS - start)) s)"
        else
          failed=$((failed + 1))
          keep_work=1
          echo "gateway-e2e: $label: FAILED ($((SECONDS - start)) s)"
          indent <"$dir.out"
        fi
      done
    done
  done
done
if [ $((passed + failed)) -eq 0 ]; then
  echo "gateway-e2e: no run matches: $*" >&2
  exit 2
fi
echo "gateway-e2e: $passed passed, $failed failed"
[ "$failed" -eq 0 ]

#!/usr/bin/env bash
# End to end with the official SDK clients: examples/after-sales protected by a real
# authorization server (oidc-provider, scripts/auth-server.sh), and the Python SDK v2
# (ClientCredentialsOAuthProvider) and TypeScript SDK v2 (ClientCredentialsProvider) clients
# (scripts/auth-clients.sh), each finding the authorization server from the server's 401,
# getting a token by the client-credentials grant, listing the tools and calling a protected
# one. Installs what it needs from npm and PyPI when missing; all traffic stays on loopback.
# Ends with `auth-e2e: N passed, M failed`; exits non-zero when a client fails.
#
#   usage: bash scripts/auth-e2e.sh        (builds the example first)
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY all_proxy ALL_PROXY
export NO_PROXY='localhost,127.0.0.1,::1' no_proxy='localhost,127.0.0.1,::1'

work=$(mktemp -d "${TMPDIR:-/tmp}/mcp-auth-e2e.XXXXXX")
server_pid=""
cleanup() {
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null
  bash "$ROOT/scripts/auth-server.sh" down "$work/as" >/dev/null 2>&1
  rm -rf "$work"
}
trap cleanup EXIT

exe="$ROOT/target/debug/examples/after-sales"
# Up to date (nothing to do when `cargo test` built it already).
(cd "$ROOT" && cargo build -q --example after-sales) || { echo "auth-e2e: 0 passed, 1 failed (build)"; exit 1; }
issuer=$(bash "$ROOT/scripts/auth-server.sh" up "$work/as") || { echo "auth-e2e: 0 passed, 1 failed (authorization server)"; exit 1; }
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
url="http://127.0.0.1:$port/mcp"
# Its desk in a SQLite file of this run (not after-sales.db in the working directory).
DATABASE_URL="sqlite://$work/desk.db" \
MCP_AUTH_ISSUER="$issuer" MCP_AUTH_RESOURCE="$url" "$exe" --http "127.0.0.1:$port" 2>"$work/server.log" &
server_pid=$!
for _ in $(seq 1 100); do
  grep -q "Authorization: protected" "$work/server.log" 2>/dev/null && break
  kill -0 "$server_pid" 2>/dev/null || break
  sleep 0.1
done
if ! grep -q "Authorization: protected" "$work/server.log"; then
  cat "$work/server.log" >&2
  echo "auth-e2e: 0 passed, 1 failed (the protected server did not start)"
  exit 1
fi
echo "after-sales at $url, protected by $issuer"

passed=0 failed=0
for sdk in py ts; do
  out=$(MCP_AUTH_ISSUER="$issuer" bash "$ROOT/scripts/auth-clients.sh" "$sdk" "$url" mcp-client mcp-client-secret \
        after_sales_quote '{"order_id": "ORD-1001"}' 2>"$work/$sdk.err")
  verdict=$(printf '%s' "$out" | python3 -c '
import json, sys
try:
    line = sys.stdin.read().strip().splitlines()[-1]
    got = json.loads(line)
except Exception as e:
    print(f"no JSON line from the client: {e}"); sys.exit(0)
tools, result = got.get("tools", []), got.get("result", {})
if "after_sales_create_ticket" not in tools:
    print(f"tickets:write tools missing from the list: {tools}")
elif result.get("isError") or result.get("structuredContent", {}).get("card_cents") != 34900:
    print(f"unexpected result: {result}")
else:
    print("ok")
')
  if [ "$verdict" = ok ]; then
    passed=$((passed + 1))
    echo "  PASS $sdk: 401 -> metadata -> token (client credentials) -> tools/list -> after_sales_quote"
  else
    failed=$((failed + 1))
    echo "  FAIL $sdk: $verdict"
    tail -n 20 "$work/$sdk.err" | sed 's/^/    /'
  fi
done
echo "auth-e2e: $passed passed, $failed failed"
[ "$failed" -eq 0 ]

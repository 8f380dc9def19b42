# wrk for the benchmark scripts (bench/run.sh, bench/callgrind.sh,
# bench/auth.sh, bench/replicas.sh...). Sourced by them, never run.
#
# wrk_ensure               installs wrk from Debian's packages when missing
#                          (scripts/apt-install.sh: as root or with sudo -n)
# wrk_tools_call NAME ARGS [LUA]
#                          prints a wrk script that POSTs a 2026-07-28
#                          `tools/call` of tool NAME with the arguments ARGS
#                          (a JSON object), with the standard MCP headers and
#                          the extra Lua lines LUA (e.g. an Authorization
#                          header), and that ends its output with one line
#                          WRK <tab> requests/s <tab> p50 ms <tab> p99 ms
#                            <tab> errors <tab> requests

wrk_ensure() {
    command -v wrk >/dev/null && return 0
    bash "$(dirname "${BASH_SOURCE[0]}")/../scripts/apt-install.sh" wrk wrk ||
        { echo "wrk is needed and could not be installed (apt-get install wrk)" >&2; return 1; }
}

wrk_tools_call() {
    cat <<LUA
wrk.method = "POST"
wrk.body = [[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"$1","arguments":$2,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}]]
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Accept"] = "application/json, text/event-stream"
wrk.headers["MCP-Protocol-Version"] = "2026-07-28"
wrk.headers["Mcp-Method"] = "tools/call"
wrk.headers["Mcp-Name"] = "$1"
${3:-}
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format("WRK\t%.0f\t%.2f\t%.2f\t%d\t%d\n", summary.requests / (summary.duration / 1e6),
    latency:percentile(50) / 1000, latency:percentile(99) / 1000,
    e.connect + e.read + e.write + e.status + e.timeout, summary.requests))
end
LUA
}

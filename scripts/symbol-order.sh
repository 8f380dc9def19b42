#!/usr/bin/env bash
# Writes a linker symbol ordering file for a stdio MCP server: the functions
# of its own binary that run while it starts and answers some requests.
#
#   scripts/symbol-order.sh [-i REQUESTS] [-o FILE] -- BINARY [ARGS...]
#
# BINARY runs once under valgrind's callgrind with its stdin and stdout on
# pipes (the way a host spawns it, so the transport's pipe path is the one
# traced). It reads REQUESTS, one JSON-RPC message a line (by default a
# `server/discover` and a `tools/list` of revision 2026-07-28); then its stdin
# closes and it exits. A binary with glibc linked in is then started once
# more, natively, for half a second, to read which variants of the string
# functions glibc picked for this CPU (valgrind's differs). The names go to
# FILE (by default standard output), the counts to standard error.
#
# Link the same build with the file, and the code a server runs lies together
# at the start of `.text` instead of over the whole binary (the README's "A
# smaller binary" says what that saves):
#
#   cargo build --release --bin my-server
#   scripts/symbol-order.sh -i requests.jsonl -o order.txt -- target/release/my-server
#   cargo rustc --release --bin my-server -- -C link-arg=-Wl,--symbol-ordering-file=$PWD/order.txt
#
# `cargo rustc` passes the flag to the binary's own crate alone, so only that
# crate is built again: its symbol names, and every dependency's, are those
# the trace saw. The file lists mangled names, tied to one build: write it
# again when the code or the toolchain changes (the linker skips names it does
# not find). Linkers that take it: rust-lld (Rust's default on x86_64 Linux),
# lld, and GNU ld 2.43 and later. Needs valgrind (`apt-get install valgrind`)
# and python3.
set -euo pipefail
usage() { grep -m1 '^#   scripts/symbol-order.sh' "$0" | sed 's/^# *//' >&2; exit 2; }
requests="" out=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    -i) requests=${2:?}; shift 2 ;;
    -o) out=${2:?}; shift 2 ;;
    --) shift; break ;;
    *) usage ;;
  esac
done
[[ $# -ge 1 ]] || usage
binary=$1
[[ -x "$binary" ]] || { echo "${0##*/}: $binary is not an executable file" >&2; exit 2; }
command -v valgrind >/dev/null || { echo "${0##*/}: needs valgrind (apt-get install valgrind)" >&2; exit 1; }
command -v python3 >/dev/null || { echo "${0##*/}: needs python3" >&2; exit 1; }
[[ -z "$requests" || -r "$requests" ]] || { echo "${0##*/}: cannot read $requests" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
meta='"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}'
send() {
  if [[ -n "$requests" ]]; then
    cat "$requests"
  else
    echo '{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{'"$meta"'}}'
    echo '{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{'"$meta"'}}'
  fi
  # Stdin stays open a moment, as a host's does: the requests are served
  # while the stream is open, not only while it ends.
  sleep 1
}
send | valgrind --tool=callgrind --demangle=no --callgrind-out-file="$work/trace" "$@" 2>"$work/stderr" |
  cat >/dev/null || true
[[ -s "$work/trace" ]] || { echo "${0##*/}: the trace is empty; the binary's stderr:" >&2; cat "$work/stderr" >&2; exit 1; }
# Callgrind names each object and function once, in `ob=`/`cob=` and
# `fn=`/`cfn=` lines, then refers to it by number; a function's own cost
# follows its `fn=` line, so every name that has one inside the binary's
# object ran. Which order they are linked in matters little: together, they
# fill the fewest pages.
python3 - "$work/trace" "$(readlink -f "$binary")" "$work/order" "$@" <<'PY'
import re, subprocess, sys, time
trace, binary, out, command = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
names, objects, current, seen, order = {}, {}, None, set(), []
for line in open(trace, encoding="utf-8", errors="replace"):
    line = line.strip()
    m = re.match(r"^(c?ob)=\((\d+)\)(?: (.*))?$", line)
    if m:
        if m.group(3):
            objects[m.group(2)] = m.group(3)
        if m.group(1) == "ob":
            current = objects.get(m.group(2))
        continue
    m = re.match(r"^(c?fn)=\((\d+)\)(?: (.*))?$", line)
    if m:
        if m.group(3):
            # `'2` marks a recursive call's frame, not another function.
            names[m.group(2)] = re.sub(r"'\d+$", "", m.group(3))
        name = names.get(m.group(2))
        # An address is a name callgrind could not resolve, and a name in
        # parentheses one of its own ("(below main)"): nothing to order.
        real = name and not name.startswith(("0x", "("))
        if m.group(1) == "fn" and current == binary and real and name not in seen:
            seen.add(name)
            order.append(name)
# glibc picks a string function's variant (memcpy for SSE2, AVX2, EVEX,
# AVX-512...) by the CPU it runs on, and valgrind's CPU is not the host's (it
# has no AVX-512): the variant that ran under the trace may not be the one
# that runs. A binary that links glibc in picks them at start-up, through its
# IRELATIVE relocations: the binary is started once more, natively, and the
# functions its slots hold then (read from /proc) are listed after the rest.
def picked():
    """The link-time addresses the IRELATIVE slots hold in a native run,
    [] when the binary has none, None when they could not be read."""
    try:
        relocs = subprocess.run(["readelf", "-rW", binary], capture_output=True, text=True, check=True).stdout
        header = subprocess.run(["readelf", "-hW", binary], capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    try:
        slots = [int(line.split()[0], 16) for line in relocs.splitlines() if "IRELATIV" in line]
    except (IndexError, ValueError):
        return None
    if not slots:
        return []
    pie = re.search(r"Type:\s+DYN", header) is not None
    try:
        run = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    except OSError:
        return None
    try:
        # The slots are filled before main; stdin stays open, so it waits.
        time.sleep(0.5)
        base = 0
        if pie:
            with open(f"/proc/{run.pid}/maps") as maps:
                for line in maps:
                    fields = line.split()
                    if len(fields) >= 6 and fields[5] == binary and int(fields[2], 16) == 0:
                        base = int(fields[0].split("-")[0], 16)
                        break
        with open(f"/proc/{run.pid}/mem", "rb") as mem:
            found = []
            for slot in slots:
                mem.seek(base + slot)
                found.append(int.from_bytes(mem.read(8), "little") - base)
            return found
    except (OSError, ValueError):
        return None
    finally:
        run.kill()
        run.wait()

ran, added = len(order), 0
addresses = picked()
if addresses is None:
    print("the string functions glibc picks for this CPU are not listed: the binary's run could not be read",
          file=sys.stderr)
elif addresses:
    try:
        nm = subprocess.run(["nm", "--defined-only", binary], capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        nm = ""
        print("the string functions glibc picks for this CPU are not listed: nm (binutils) did not run",
              file=sys.stderr)
    wanted, listed = set(addresses), 0
    for line in nm.splitlines():
        parts = line.split()
        if len(parts) != 3 or parts[1] not in "tTW" or int(parts[0], 16) not in wanted:
            continue
        listed += 1
        if parts[2] not in seen:
            seen.add(parts[2])
            order.append(parts[2])
            added += 1
    if listed:
        print(f"{listed} functions glibc picked for this CPU are listed, {added} of them not traced", file=sys.stderr)
    else:
        print("the string functions glibc picks for this CPU are not listed: no function lies where the "
              "binary's run pointed", file=sys.stderr)
open(out, "w").write("".join(n + "\n" for n in order))
print(f"{ran} functions of {binary} ran", file=sys.stderr)
if not order:
    sys.exit(1)
PY
if [[ -n "$out" ]]; then cp "$work/order" "$out"; else cat "$work/order"; fi

#!/usr/bin/env bash
# The README's symbol ordering recipe, end to end, on examples/quickstart:
#
#   bash scripts/symbol-order-e2e.sh
#
# 1. builds the example (debug: the recipe does not care which profile);
# 2. lists the functions it runs with `scripts/symbol-order.sh`, answering a
#    `tools/list` and a `tools/call` over pipes under valgrind (installed from
#    Debian's packages when missing);
# 3. links the example again with the file through `cargo rustc`, which builds
#    the example's own crate alone;
# 4. checks that the linker found the names (the dependencies' and the
#    example's symbols are those the trace saw), that the functions now lead
#    `.text` in a block, and that the relinked server still answers.
# Then the README's static recipe the same way: glibc linked in
# (`-C target-feature=+crt-static`, for the host's triple named with
# `--target`), ordered, with packed relative relocations; checked to be a
# static-pie binary with no program interpreter that answers, and to list
# the string functions glibc picked for the CPU in a native run.
# Exits 3 when valgrind is missing and cannot be installed.
set -euo pipefail
cd "$(dirname "$0")/.."
say() { echo "symbol-order-e2e: $*" >&2; }
fail() { say "FAIL: $*"; exit 1; }

command -v valgrind >/dev/null || bash scripts/apt-install.sh symbol-order-e2e valgrind || exit

work=$(mktemp -d)
trap 'rm -rf "$work"; touch examples/quickstart/main.rs' EXIT
target_dir=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')
meta='"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}'
cat >"$work/requests.jsonl" <<EOF
{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{$meta}}
{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"convert_temperature","arguments":{"value":100,"from":"celsius","to":"fahrenheit"},$meta}}
EOF

# The recipe for the example Cargo builds at $1, with the cargo arguments
# after it (and RUSTFLAGS as the caller sets them); link arguments of its
# own in $extra.
recipe() {
  local bin=$1
  shift
  cargo build -q "$@" --example quickstart
  bash scripts/symbol-order.sh -i "$work/requests.jsonl" -o "$work/order.txt" -- "$bin" 2>"$work/trace-stderr.txt" ||
    { cat "$work/trace-stderr.txt" >&2; fail "symbol-order.sh failed"; }
  cat "$work/trace-stderr.txt" >&2
  ran=$(wc -l <"$work/order.txt")
  [ "$ran" -ge 200 ] || fail "only $ran functions listed"
  grep -q '^_ZN10quickstart' "$work/order.txt" || fail "none of the example's own functions listed"
  grep -q '^_ZN11mcp_runtime' "$work/order.txt" || fail "none of mcp_runtime's functions listed"

  # Touched, so that Cargo links again whatever it built before; the trap
  # touches it again so the next plain build links the default layout back.
  touch examples/quickstart/main.rs
  # shellcheck disable=SC2086
  cargo rustc -q "$@" --example quickstart -- \
    -C link-arg=-Wl,--symbol-ordering-file="$work/order.txt" $extra -W linker-messages 2>"$work/link.txt" \
    || { cat "$work/link.txt" >&2; fail "the link with the ordering file failed"; }
  # The linker names each entry it cannot find; a few may be folded away.
  missing=$(grep -c 'symbol ordering file: no such symbol' "$work/link.txt" || true)
  [ "$missing" -le $((ran / 50)) ] || fail "$missing of $ran names not found by the linker"

  python3 - "$bin" "$work/order.txt" <<'PY' || fail "the listed functions do not lead .text"
import subprocess, sys
binary, order = sys.argv[1], [l.strip() for l in open(sys.argv[2]) if l.strip()]
symbols = [l.split() for l in subprocess.run(["nm", "-n", binary], capture_output=True, text=True, check=True).stdout.splitlines()]
text = [s[2] for s in symbols if len(s) == 3 and s[1] in "tTwW"]
listed = set(order)
head = text[:len(order)]
share = sum(name in listed for name in head) / len(head)
print(f"symbol-order-e2e: {share:.0%} of the first {len(head)} functions of .text are listed ones", file=sys.stderr)
sys.exit(0 if share >= 0.9 else 1)
PY

  replies=$("$bin" <"$work/requests.jsonl" 2>/dev/null)
  answers=$(grep -c . <<<"$replies" || true)
  [ "$answers" -eq 2 ] || fail "the relinked server gave $answers answers to 2 requests"
  grep -q '"value":212' <<<"$replies" || fail "the relinked server's tools/call answer is wrong"
}

extra=""
recipe "$target_dir/debug/examples/quickstart"
say "ok: $ran functions listed, $missing not found at the link, the relinked server answers"

# Linked static. `--target` names the host's triple, so that build scripts
# and proc-macros (which run inside the compiler) are built without the flag.
# Rust makes a static binary position-independent on x86_64 Linux with glibc.
triple=$(rustc -vV | awk '/^host:/ { print $2 }')
case "$triple" in
  x86_64-*-linux-gnu)
    static=$target_dir/$triple/debug/examples/quickstart
    extra="-C link-arg=-Wl,-z,pack-relative-relocs"
    RUSTFLAGS="-C target-feature=+crt-static" recipe "$static" --target "$triple"
    # Read whole before they are searched (a reader cut short by `grep -q`
    # would fail the pipeline).
    program=$(readelf -lW "$static")
    header=$(readelf -hW "$static")
    dynamic=$(readelf -dW "$static")
    if grep -q 'Requesting program interpreter' <<<"$program"; then fail "the static build has a program interpreter"; fi
    grep -Eq 'Type:[[:space:]]+DYN' <<<"$header" || fail "the static build is not position-independent"
    grep -q '(RELR)' <<<"$dynamic" || fail "the static build's relative relocations are not packed"
    # glibc, linked in, picks memmove's variant by the CPU (valgrind's has no
    # AVX-512): the one it picked in a native run is listed, whichever ran
    # under the trace.
    grep -Eq '^[0-9]+ functions glibc picked for this CPU are listed' "$work/trace-stderr.txt" ||
      fail "the functions glibc picked for this CPU were not read: $(cat "$work/trace-stderr.txt")"
    grep -Eq '^(0|1) functions glibc picked' "$work/trace-stderr.txt" &&
      fail "fewer than two functions glibc picked are listed: $(cat "$work/trace-stderr.txt")"
    say "ok, linked static: $ran functions listed, $missing not found at the link, static-pie, the relinked server answers"
    ;;
  *) say "the static recipe is checked on x86_64 Linux with glibc; $triple skipped" ;;
esac

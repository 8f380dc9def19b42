# A Python venv with pinned requirements, for the scripts that run the official MCP Python SDK
# (scripts/auth-clients.sh, scripts/upstreams.sh). Sourced by them, never run; the sourcing
# script defines `die CODE MESSAGE`.
#
# pyvenv_ready DIR REQUIREMENTS         whether DIR/venv holds REQUIREMENTS as they are now
#                                       (DIR/.stamp is the file's SHA-256)
# pyvenv_install DIR REQUIREMENTS NAME  (re)creates DIR/venv with REQUIREMENTS from PyPI
#                                       (Python >= 3.10); NAME prefixes what it says; exits 3
#                                       when that cannot be done

pyvenv_stamp() { sha256sum "$1" | cut -c1-64; }

pyvenv_ready() {
  [ -x "$1/venv/bin/python" ] && [ -f "$1/.stamp" ] && [ "$(cat "$1/.stamp")" = "$(pyvenv_stamp "$2")" ]
}

pyvenv_install() {
  local dir=$1 requirements=$2 name=$3
  command -v python3 >/dev/null || die 3 "python3 is needed"
  python3 -c 'import sys; sys.exit(sys.version_info < (3, 10))' || die 3 "python3 >= 3.10 is needed, found $(python3 --version 2>&1)"
  echo "$name: installing $(grep -v '^#' "$requirements" | xargs) into $dir/venv" >&2
  rm -rf "$dir"
  mkdir -p "$dir"
  if ! { python3 -m venv "$dir/venv" &&
         "$dir/venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$requirements"; } >&2; then
    rm -rf "$dir"
    die 3 "the Python install failed (python3 -m venv needs the python3-venv package on Debian)"
  fi
  pyvenv_stamp "$requirements" >"$dir/.stamp"
}

#!/usr/bin/env bash
# A multi-replica deployment on loopback: Redis, N replicas of an example
# server sharing it, and nginx in front; with MCP_DEPLOY_DATABASE=postgres,
# a PostgreSQL they share too (scripts/postgres.sh). Installs redis-server
# and nginx (and postgresql) from Debian's packages when they are missing.
#
#   bash deploy/cluster.sh up [N]          start Redis, N replicas (default 3), nginx
#   bash deploy/cluster.sh down            stop them all
#   bash deploy/cluster.sh stop I          SIGTERM replica I (1-based) and wait for it to exit
#   bash deploy/cluster.sh start I         start replica I again
#   bash deploy/cluster.sh kill I          kill -9 replica I
#   bash deploy/cluster.sh redis-restart   stop Redis and start it again (its data is lost)
#   bash deploy/cluster.sh redis-stop      stop Redis (redis-start starts it again)
#   bash deploy/cluster.sh neighbours EXAMPLE N [ARG...]
#                                          start N replicas of another example server on
#                                          the same Redis (its own namespace; no nginx),
#                                          each given the ARGs after --http ADDR (the
#                                          gateway's --config FILE)
#   bash deploy/cluster.sh neighbours-down stop them (down stops them too)
#   bash deploy/cluster.sh ports           print NGINX_PORT, REDIS_PORT, each replica's port
#                                          and each neighbour's, and DATABASE_URL
#
# Environment: MCP_DEPLOY_DIR (state, logs; default /tmp/mcp-deploy),
# MCP_DEPLOY_EXAMPLE (default everything), MCP_DEPLOY_PROFILE (debug or
# release; default debug), MCP_DEPLOY_BASE_PORT (default 28400: nginx on it,
# Redis on +1, PostgreSQL on +2, replica I on +10+I, neighbour I on +50+I),
# MCP_DEPLOY_DATABASE (`up` only: postgres starts a throwaway PostgreSQL in
# MCP_DEPLOY_DIR/postgres; default: a new SQLite file, MCP_DEPLOY_DIR/after-sales.db).
# Every replica and neighbour gets that database as DATABASE_URL (the servers
# that keep data, examples/after-sales, use it; the others ignore it). A
# replica started by `up` or `start` inherits the other MCP_* variables of
# the environment (MCP_RATE_LIMIT, MCP_PRINCIPAL_HEADER...).
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
RUN="${MCP_DEPLOY_DIR:-/tmp/mcp-deploy}"
EXAMPLE="${MCP_DEPLOY_EXAMPLE:-everything}"
PROFILE="${MCP_DEPLOY_PROFILE:-debug}"
BASE="${MCP_DEPLOY_BASE_PORT:-28400}"
NGINX_PORT=$BASE
REDIS_PORT=$((BASE + 1))
POSTGRES_PORT=$((BASE + 2))

die() { echo "cluster: $*" >&2; exit 1; }
replica_port() { echo $((BASE + 10 + $1)); }
neighbour_port() { echo $((BASE + 50 + $1)); }
count() { cat "$RUN/replicas" 2>/dev/null || echo 0; }
neighbours_count() { cat "$RUN/neighbours" 2>/dev/null || echo 0; }

install_missing() {
    local missing=()
    command -v redis-server >/dev/null || missing+=(redis-server)
    command -v nginx >/dev/null || [ -x /usr/sbin/nginx ] || missing+=(nginx)
    [ ${#missing[@]} -eq 0 ] && return 0
    # As root, or with a sudo that asks no password (scripts/apt-install.sh).
    bash "$ROOT/scripts/apt-install.sh" cluster "${missing[@]}" || die "cannot install ${missing[*]}"
    # The packages may start their own system services; ours use other ports.
}

nginx_bin() { command -v nginx || echo /usr/sbin/nginx; }

wait_port() { # PORT SECONDS
    local i
    for ((i = 0; i < $2 * 10; i++)); do
        (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
        sleep 0.1
    done
    return 1
}

start_redis() {
    redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save '' --appendonly no --daemonize yes \
        --pidfile "$RUN/redis.pid" --logfile "$RUN/redis.log" --dir "$RUN" >/dev/null \
        || die "redis-server did not start (see $RUN/redis.log)"
    wait_port "$REDIS_PORT" 10 || die "Redis is not listening on $REDIS_PORT"
}

stop_redis() {
    local pid
    pid=$(cat "$RUN/redis.pid" 2>/dev/null) || return 0
    kill "$pid" 2>/dev/null
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    rm -f "$RUN/redis.pid"
}

# The database of the deployment: a throwaway PostgreSQL when asked for,
# else a new SQLite file; its URL in $RUN/database-url.
start_database() {
    rm -f "$RUN"/after-sales.db*
    if [ "${MCP_DEPLOY_DATABASE:-sqlite}" = postgres ]; then
        MCP_POSTGRES_PORT=$POSTGRES_PORT bash "$ROOT/scripts/postgres.sh" up "$RUN/postgres" >"$RUN/database-url" \
            || die "PostgreSQL did not start (see $RUN/postgres/log)"
    else
        echo "sqlite://$RUN/after-sales.db" >"$RUN/database-url"
    fi
}

stop_database() {
    [ -d "$RUN/postgres" ] && bash "$ROOT/scripts/postgres.sh" down "$RUN/postgres"
    rm -f "$RUN/database-url"
}

database_url() { cat "$RUN/database-url" 2>/dev/null || echo "sqlite://$RUN/after-sales.db"; }

start_replica() { # I
    local i=$1 port
    port=$(replica_port "$i")
    DATABASE_URL="$(database_url)" \
    MCP_REDIS_URL="redis://127.0.0.1:$REDIS_PORT" \
    MCP_REQUEST_STATE_KEYS="$(cat "$RUN/keys")" \
    MCP_SESSION_PREFIX="r$i-" \
    MCP_SHUTDOWN_GRACE=10 \
    RUST_LOG="${RUST_LOG:-info}" \
        setsid "$(cat "$RUN/bin")" --http "127.0.0.1:$port" >>"$RUN/replica$i.log" 2>&1 </dev/null &
    echo $! >"$RUN/replica$i.pid"
    wait_port "$port" 30 || die "replica $i is not listening on $port (see $RUN/replica$i.log)"
}

stop_replica() { # I SIGNAL
    local pid
    pid=$(cat "$RUN/replica$1.pid" 2>/dev/null) || return 0
    kill "-$2" "$pid" 2>/dev/null
    for _ in $(seq 1 150); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$pid" 2>/dev/null && kill -9 "$pid" 2>/dev/null
    rm -f "$RUN/replica$1.pid"
}

build_example() { # EXAMPLE: prints the binary's path
    local flag=() target
    [ "$PROFILE" = release ] && flag=(--release)
    (cd "$ROOT" && cargo build --quiet "${flag[@]}" --example "$1") >&2 || die "cannot build the $1 example"
    target="${CARGO_TARGET_DIR:-$ROOT/target}"
    echo "$target/$PROFILE/examples/$1"
}

# Another server on the same Redis: its replicas join in the namespace of
# its own name, and must neither hear the main server's events nor see its
# tasks (nor the other way round).
neighbours() { # EXAMPLE N [ARG...]
    local example=${1:?example} n=${2:-2} i port bin
    shift $(($# < 2 ? $# : 2))
    [[ "$n" =~ ^[1-9]$ ]] || die "neighbours EXAMPLE N: N must be 1 to 9"
    [ -f "$RUN/replicas" ] || die "neighbours: the cluster is not up"
    stop_neighbours
    bin=$(build_example "$example") || exit 1
    python3 -c 'import base64, os; print(base64.b64encode(os.urandom(32)).decode())' >"$RUN/neighbour-keys"
    for ((i = 1; i <= n; i++)); do
        port=$(neighbour_port "$i")
        DATABASE_URL="$(database_url)" \
        MCP_REDIS_URL="redis://127.0.0.1:$REDIS_PORT" \
        MCP_REQUEST_STATE_KEYS="$(cat "$RUN/neighbour-keys")" \
        MCP_SESSION_PREFIX="n$i-" \
        MCP_SHUTDOWN_GRACE=10 \
        RUST_LOG="${RUST_LOG:-info}" \
            setsid "$bin" --http "127.0.0.1:$port" "$@" >>"$RUN/neighbour$i.log" 2>&1 </dev/null &
        echo $! >"$RUN/neighbour$i.pid"
        echo "$i" >"$RUN/neighbours"
        wait_port "$port" 30 || die "neighbour $i is not listening on $port (see $RUN/neighbour$i.log)"
    done
    echo "cluster: $n replicas of $example on 127.0.0.1:$(neighbour_port 1).. sharing Redis 127.0.0.1:$REDIS_PORT"
}

stop_neighbours() {
    local i pid
    for ((i = 1; i <= $(neighbours_count); i++)); do
        pid=$(cat "$RUN/neighbour$i.pid" 2>/dev/null) || continue
        kill -TERM "$pid" 2>/dev/null
        for _ in $(seq 1 150); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -0 "$pid" 2>/dev/null && kill -9 "$pid" 2>/dev/null
        rm -f "$RUN/neighbour$i.pid"
    done
    rm -f "$RUN/neighbours"
}

write_nginx_conf() { # N
    local n=$1 i servers="" map="" ups="" user=""
    for ((i = 1; i <= n; i++)); do
        servers+="        server 127.0.0.1:$(replica_port "$i") max_fails=1 fail_timeout=1s;"$'\n'
        map+="        ~^r$i- mcp_r$i;"$'\n'
        ups+=$'\n'"    upstream mcp_r$i {"$'\n'"        server 127.0.0.1:$(replica_port "$i");"$'\n'"    }"$'\n'
    done
    [ "$(id -u)" -eq 0 ] && user="user root;"
    mkdir -p "$RUN"/nginx-{body,proxy,fastcgi,uwsgi,scgi}
    SERVERS="$servers" MAP="$map" UPS="$ups" USER_LINE="$user" RUN_DIR="$RUN" LISTEN="127.0.0.1:$NGINX_PORT" \
        python3 - "$ROOT/deploy/nginx.conf.in" "$RUN/nginx.conf" <<'PY'
import os, sys
text = open(sys.argv[1]).read()
for key, env in (("@UPSTREAM_SERVERS@\n", "SERVERS"), ("@SESSION_MAP@\n", "MAP"), ("@SESSION_UPSTREAMS@", "UPS"),
                 ("@USER@", "USER_LINE"), ("@RUN_DIR@", "RUN_DIR"), ("@LISTEN@", "LISTEN")):
    text = text.replace(key, os.environ[env])
open(sys.argv[2], "w").write(text)
PY
}

up() {
    local n=${1:-3} i
    [[ "$n" =~ ^[1-9][0-9]?$ ]] || die "up N: N must be 1 to 99"
    [ -f "$RUN/replicas" ] && down
    mkdir -p "$RUN"
    install_missing
    local bin
    bin=$(build_example "$EXAMPLE") || exit 1
    echo "$bin" >"$RUN/bin"
    # One requestState key for every replica: any replica opens any round.
    python3 -c 'import base64, os; print(base64.b64encode(os.urandom(32)).decode())' >"$RUN/keys"
    echo "$n" >"$RUN/replicas"
    start_redis
    start_database
    for ((i = 1; i <= n; i++)); do start_replica "$i"; done
    write_nginx_conf "$n"
    "$(nginx_bin)" -c "$RUN/nginx.conf" -p "$RUN" -e "$RUN/nginx-error.log" || die "nginx did not start (see $RUN/nginx-error.log)"
    wait_port "$NGINX_PORT" 10 || die "nginx is not listening on $NGINX_PORT"
    echo "cluster: nginx http://127.0.0.1:$NGINX_PORT/mcp -> $n replicas of $EXAMPLE ($PROFILE), Redis 127.0.0.1:$REDIS_PORT, database $(database_url); state in $RUN"
}

down() {
    local n i pid
    n=$(count)
    if pid=$(cat "$RUN/nginx.pid" 2>/dev/null); then
        kill -QUIT "$pid" 2>/dev/null
        for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -9 "$pid" 2>/dev/null
    fi
    for ((i = 1; i <= n; i++)); do stop_replica "$i" TERM; done
    stop_neighbours
    stop_redis
    stop_database
    rm -f "$RUN/replicas" "$RUN/nginx.pid"
    echo "cluster: stopped"
}

cmd="${1:-}"
shift || true
case "$cmd" in
    up) up "$@" ;;
    down) down ;;
    stop) stop_replica "${1:?replica}" TERM ;;
    kill) stop_replica "${1:?replica}" KILL ;;
    start) start_replica "${1:?replica}" ;;
    redis-restart) stop_redis; start_redis ;;
    redis-stop) stop_redis ;;
    redis-start) start_redis ;;
    neighbours) neighbours "$@" ;;
    neighbours-down) stop_neighbours ;;
    ports)
        echo "NGINX_PORT=$NGINX_PORT"
        echo "REDIS_PORT=$REDIS_PORT"
        for ((i = 1; i <= $(count); i++)); do echo "REPLICA_${i}_PORT=$(replica_port "$i")"; done
        for ((i = 1; i <= $(neighbours_count); i++)); do echo "NEIGHBOUR_${i}_PORT=$(neighbour_port "$i")"; done
        echo "DATABASE_URL=$(database_url)"
        ;;
    *) sed -n '2,30p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
esac

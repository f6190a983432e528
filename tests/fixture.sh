# shellcheck shell=bash
# Sourced by the suites that drive examples/conformance (tests/conformance,
# tests/legacy, tests/cluster): where its binary is.
#
# fixture_server ROOT prints the path of the conformance-server binary:
# CONFORMANCE_SERVER when set (.ci/run sets it: its test step built the
# binary, and its lanes must not wait on cargo's lock), else the debug
# build of the workspace at ROOT, built first (honours CARGO_TARGET_DIR).
# The debug build: what the suites check does not depend on optimisation,
# and debug assertions are on.
fixture_server() {
    local root=$1 target_dir
    if [[ -n ${CONFORMANCE_SERVER:-} ]]; then
        printf '%s\n' "$CONFORMANCE_SERVER"
        return
    fi
    printf '==> building conformance-server\n' >&2
    (cd "$root" && cargo build --quiet -p conformance-server) >&2
    target_dir=$(cd "$root" && cargo metadata --format-version 1 --no-deps |
        python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')
    printf '%s\n' "$target_dir/debug/conformance-server"
}

# A free loopback TCP port (free when asked: bind it soon).
free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# A fresh MCP_STATE_KEY (32 random bytes, base64), the way a deployment
# makes one.
new_state_key() {
    python3 -c 'import base64, os; print(base64.b64encode(os.urandom(32)).decode())'
}

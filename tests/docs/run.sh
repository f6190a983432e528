#!/usr/bin/env bash
# The guide (docs/) and the READMEs, checked offline:
#
#   tests/docs/run.sh                 # check, build the book, check the built links
#   tests/docs/run.sh --install-only  # just install mdBook (what .ci/install does)
#
# 1. check.py: every fenced block names its language, every Rust block is
#    compiled (a doctest of tests/src/lib.rs or mcp-runtime/src/lib.rs, a
#    verbatim excerpt of compiled source, or the new user's crate), every
#    link and include resolves, SUMMARY.md lists every chapter;
# 2. `mdbook build docs` with the pinned mdBook, into a temporary directory;
# 3. check.py --html: every link of the built book names a page and an id
#    mdBook made;
# 4. the benchmark charts (docs/src/charts/) redrawn from benches/RESULTS.md
#    are the committed ones, so that the book's charts show its table.
# The snippets themselves are compiled by `cargo test --workspace` (the
# doctests of the mcp-tests package) and tests/new-user/run.sh.
#
# mdBook is built from crates.io at the version below (without its
# file-watching server), once per machine, into ~/.cache/mcp-runtime-ci.
set -euo pipefail

here=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
root=$(cd -- "$here/../.." && pwd)
mdbook_version=0.5.4
tools=${XDG_CACHE_HOME:-$HOME/.cache}/mcp-runtime-ci/mdbook-$mdbook_version
mdbook=$tools/bin/mdbook

if [[ ! -x $mdbook ]]; then
    echo "==> installing mdBook $mdbook_version into $tools" >&2
    # A target directory of its own, so that the workspace's (and its
    # lock) are not touched while the CI's builds run.
    CARGO_TARGET_DIR=$tools/target cargo install mdbook --version "=$mdbook_version" --locked \
        --no-default-features --features search --root "$tools" --quiet
    rm -rf "$tools/target"
fi
"$mdbook" --version >&2
[[ ${1:-} == --install-only ]] && exit 0

out=$(mktemp -d "${TMPDIR:-/tmp}/mcp-book.XXXXXX")
trap 'rm -rf "$out"' EXIT

echo "==> the guide's and READMEs' blocks and links" >&2
python3 "$here/check.py"
echo "==> mdbook build docs" >&2
"$mdbook" build "$root/docs" --dest-dir "$out"
echo "==> the built book's links" >&2
python3 "$here/check.py" --html "$out"
echo "==> the charts, redrawn from benches/RESULTS.md, are the committed ones" >&2
(cd "$root" && cargo run -q -p mcp-bench-charts -- benches/RESULTS.md "$out/redrawn")
for chart in "$root"/docs/src/charts/*.svg; do
    cmp "$chart" "$out/redrawn/$(basename "$chart")" || {
        echo "error: docs/src/charts/$(basename "$chart") is not drawn from benches/RESULTS.md: run cargo run -p mcp-bench-charts" >&2
        exit 1
    }
done

#!/usr/bin/env bash
# Runs the benchmark suite and writes benches/RESULTS.md:
#
#   benches/run.sh
#
# Installs wrk (Debian's package) if it is missing, builds the quickstart,
# the floor servers and the 50-tool server in release mode and the 10,000-
# and 50-tool servers compared with each other in the `scale` profile (the
# first build of the 10,000 tools takes about fifteen minutes and 4.5 GB), then
# runs `bench` pinned to core 1 (servers are pinned to core 0).
# The tracker stage needs PostgreSQL: tests/postgres.sh's ensure_postgres
# uses the machine's at 127.0.0.1:5432 or starts one (installing Debian's
# package if need be), and stops the one it started at the end.
# BENCH_ROUNDS (default 7) and BENCH_SECONDS (default 3) shorten a run while
# iterating; BENCH_ONLY=http, BENCH_ONLY=stdio, BENCH_ONLY=tasks or
# BENCH_ONLY=tracker runs that stage alone (BENCH_WORKLOADS=echo,list picks
# HTTP workloads by name) and prints its table (RESULTS.md is then left as
# it was; a single stage builds only what it runs, not the scale servers). At the end
# benches/charts draws RESULTS.md's tables as SVG into docs/src/charts/.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v wrk >/dev/null; then
    echo "==> installing wrk" >&2
    if [ "$(id -u)" = 0 ]; then apt-get install -y wrk >/dev/null || { apt-get update >/dev/null && apt-get install -y wrk >/dev/null; }
    else sudo apt-get install -y wrk >/dev/null; fi
fi
command -v taskset >/dev/null || { echo "error: taskset (util-linux) is needed" >&2; exit 1; }
if [ "$(nproc)" -lt 2 ]; then
    echo "error: the benchmark pins the server and the load generator to separate cores; this machine has $(nproc)" >&2
    exit 1
fi

echo "==> building (release, then the scale profile)" >&2
# Without mcp-bench's default feature `tracker`: features are unified within
# one cargo invocation, and the tracker's (mcp-runtime's `auth` among them)
# must not reach the quickstart and the servers compared with the floors.
if [ "${BENCH_ONLY:-}" = tracker ]; then
    cargo build --release -q -p mcp-bench --no-default-features --bin bench
else
    cargo build --release -q -p quickstart -p mcp-bench --bins --no-default-features
    # Alone, so that its runtime is built without the default features.
    cargo build --release -q -p stdio-only
fi
if [ -z "${BENCH_ONLY:-}" ]; then
    # The scale servers have their own workspace (benches/scale), pinned to
    # the main lock file's versions. Only the full run measures them.
    cp Cargo.lock benches/scale/Cargo.lock
    cargo build --manifest-path benches/scale/Cargo.toml --profile scale -q --bin bench-scale --bin bench-tools
fi
tracker_stage=
if [ -z "${BENCH_ONLY:-}" ] || [ "$BENCH_ONLY" = tracker ]; then tracker_stage=1; fi
if [ -n "$tracker_stage" ]; then
    # The tracker stage: the tracker alone, as its users build it, then its
    # axum + sqlx floor and the seeding program.
    cargo build --release -q -p tracker
    cargo build --release -q -p mcp-bench --bin floor-tracker --bin bench-tracker-db
fi
target=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')

if [ -n "$tracker_stage" ]; then
    # shellcheck source=tests/postgres.sh
    source tests/postgres.sh
    ensure_postgres
    trap stop_postgres EXIT
fi

results=benches/results
mkdir -p "$results"
echo "==> running (about 15 minutes)" >&2
scale_target=$(cargo metadata --manifest-path benches/scale/Cargo.toml --format-version 1 --no-deps | python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')
taskset -c 1 "$target/release/bench" "$target/release" "$scale_target/scale" "$results"
[ -z "${BENCH_ONLY:-}" ] || exit 0

{
    echo "# Benchmark results"
    echo
    echo "Reproduce with \`benches/run.sh\` on a 2-core Linux machine (it installs wrk and builds everything)."
    echo "Each server is pinned to core 0 (\`taskset\`), the load generator to core 1. In each of ${BENCH_ROUNDS:-7} rounds"
    echo "both servers are started and, for each load, ours and the floor run back to back (${BENCH_SECONDS:-3} s each),"
    echo "in an order that alternates from round to round. Req/s and latencies are each side's medians; the ratios"
    echo "are the medians of the per-round ratios (ours / floor), which a machine whose speed drifts does not skew."
    echo "The floor is hyper 1.x + serde_json (\`benches/src/bin/floor-http.rs\`) or a bare stdio loop"
    echo "(\`floor-stdio.rs\`) answering the same bytes as our server, captured and checked before each run."
    echo "Rate limiting is off (\`--rate-limit 0\`) so that every request runs the tool."
    echo "The tracker stage's floor is axum + sqlx on PostgreSQL (\`floor-tracker.rs\`); its notes follow its table."
    echo
    echo "Run on $(date -u +%Y-%m-%d), $(uname -sr), $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'))."
    echo
    cat "$results/RESULTS.md"
    # benches/cluster/run.sh's latest tables (several instances, Redis).
    if [ -f benches/cluster/RESULTS.md ]; then echo; sed 's/^# /## /' benches/cluster/RESULTS.md; fi
    if [ -f benches/NOTES.md ]; then echo; cat benches/NOTES.md; fi
} > benches/RESULTS.md
echo "==> wrote benches/RESULTS.md" >&2
# The book's charts (docs/src/charts/*.svg) from the tables just written;
# alone: `cargo run -p mcp-bench-charts`.
cargo run -q -p mcp-bench-charts -- benches/RESULTS.md docs/src/charts

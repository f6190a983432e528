#!/usr/bin/env bash
# Allocator retention after bursts of idle HTTP connections (not run in CI):
#
#   benches/retention.sh
#
# Builds the release quickstart, then for each allocator setting starts it
# over HTTP on loopback (`--rate-limit 0`, so that every request runs the
# tool) and runs `benches/retention.py` against it: RETENTION_CYCLES cycles
# (default 5) of RETENTION_CONNECTIONS idle keep-alive connections (default
# 6,000, 200 per client address: 127.1.0.1, 127.1.0.2, ..., below the
# per-address connection cap), each opened after one answered
# `tools/call echo`, held, then closed, with the server's VmRSS / RssAnon /
# VmHWM from /proc/PID/status at the start, with the connections open and
# after they closed (3 s later: the server forgets a closed connection at
# its next sweep, every header_timeout / 8 = 1.25 s by default), and 12 s
# after the last cycle.
#
# Settings compared (RETENTION_VARIANTS, space-separated, default all):
#   glibc       the default: glibc malloc, one arena per worker thread
#   arena1      MALLOC_ARENA_MAX=1 (every thread in the main arena)
#   trim128k    MALLOC_TRIM_THRESHOLD_=131072 MALLOC_TOP_PAD_=0
#   jemalloc    LD_PRELOAD of Debian's libjemalloc2 (installed if missing)
#   jemalloc-bg the same with MALLOC_CONF=background_thread:true (purges
#               while the server is idle)
#   mimalloc    LD_PRELOAD of Debian's libmimalloc2.0 (installed if missing)
# With gdb installed, the glibc runs end with glibc's own account
# (`malloc_stats()`: bytes the arenas hold from the system and bytes in use),
# then call `malloc_trim(0)` in the server through gdb and sample RSS again:
# bytes in use back at their level before the bursts, bytes held well above
# it and RSS falling with the trim is retention, not a leak.
#
# RETENTION_BIN runs another server binary (one built elsewhere, for an
# A/B of a runtime change) instead of building this tree's quickstart, and
# RETENTION_ENV adds assignments to the server's environment (for example
# RUST_LOG=debug).
# Results go to target/retention/ (RETENTION_OUT; one .tsv and one log per
# setting), and a summary to stdout.
set -euo pipefail
cd "$(dirname "$0")/.."

connections=${RETENTION_CONNECTIONS:-6000}
cycles=${RETENTION_CYCLES:-5}
variants=${RETENTION_VARIANTS:-glibc arena1 trim128k jemalloc jemalloc-bg mimalloc}
out=${RETENTION_OUT:-target/retention}
mkdir -p "$out"

# The server and the client each hold one descriptor per connection.
need=$((connections + 512))
if [ "$(ulimit -Hn)" != unlimited ] && [ "$(ulimit -Hn)" -lt "$need" ]; then
    echo "error: the hard limit on open files ($(ulimit -Hn)) is below $need" >&2
    exit 1
fi
ulimit -n "$need"

if [ -n "${RETENTION_BIN:-}" ]; then
    server=$RETENTION_BIN
else
    echo "==> building the quickstart (release)" >&2
    CARGO_INCREMENTAL=0 cargo build --release -q -p quickstart --bin quickstart
    target=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')
    server=$target/release/quickstart
fi

libdir=/usr/lib/$(gcc -dumpmachine 2>/dev/null || echo x86_64-linux-gnu)
preload() { # preload LIBRARY DEBIAN_PACKAGE
    if [ ! -e "$libdir/$1" ]; then
        echo "==> installing $2" >&2
        apt-get install -y "$2" >/dev/null 2>&1 || { apt-get update >/dev/null && apt-get install -y "$2" >/dev/null; }
    fi
    echo "$libdir/$1"
}

# Starts the server with the environment in "$@"; sets `pid` and `address`.
start() {
    local log=$1
    shift
    # shellcheck disable=SC2086 # RETENTION_ENV is a list of assignments
    env RUST_LOG=info "$@" ${RETENTION_ENV:-} "$server" --http 127.0.0.1:0 --rate-limit 0 </dev/null >/dev/null 2>"$log" &
    pid=$! address=
    for _ in $(seq 100); do
        address=$(grep -o 'address=[0-9.:]*' "$log" | head -1 | cut -d= -f2 || true)
        [ -n "$address" ] && break
        sleep 0.1
    done
    [ -n "$address" ] || { echo "error: the server did not start:" >&2; cat "$log" >&2; exit 1; }
}

# One sample line of the server's memory, as retention.py prints them.
memory() { # memory PID LABEL
    awk -v label="$2" '/^VmRSS/ { rss = $2 } /^RssAnon/ { anon = $2 } /^VmHWM/ { hwm = $2 }
        END { printf "%s\t%s\t%s\t%s\n", label, rss, anon, hwm }' "/proc/$1/status"
}

# glibc's account of its arenas, printed by the server to its stderr.
glibc_stats() { # glibc_stats PID LOG LABEL
    local before
    before=$(wc -l <"$2")
    gdb -p "$1" -batch -ex 'call (void) malloc_stats()' >/dev/null 2>&1 || return 0
    sleep 0.2
    tail -n +"$((before + 1))" "$2" | awk -v label="$3" '
        /^Total/ { total = 1 }
        total && /system bytes/ { held = $NF }
        total && /in use bytes/ { used = $NF }
        END { if (held) printf "%s\tmalloc_stats: system %.1f MiB, in use %.1f MiB\n", label, held / 1048576, used / 1048576 }'
}

pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null || true' EXIT
summary=$out/summary.txt
: >"$summary"
for variant in $variants; do
    case $variant in
        glibc) env=() ;;
        arena1) env=(MALLOC_ARENA_MAX=1) ;;
        trim128k) env=(MALLOC_TRIM_THRESHOLD_=131072 MALLOC_TOP_PAD_=0) ;;
        jemalloc) env=("LD_PRELOAD=$(preload libjemalloc.so.2 libjemalloc2)") ;;
        jemalloc-bg) env=("LD_PRELOAD=$(preload libjemalloc.so.2 libjemalloc2)" MALLOC_CONF=background_thread:true) ;;
        mimalloc) env=("LD_PRELOAD=$(preload libmimalloc.so.2 libmimalloc2.0)") ;;
        *) echo "error: unknown variant $variant" >&2; exit 1 ;;
    esac
    echo "==> $variant: $cycles cycles of $connections connections" >&2
    log=$out/$variant.log
    start "$log" "${env[@]}"
    python3 benches/retention.py "$address" "$pid" --connections "$connections" --cycles "$cycles" >"$out/$variant.tsv"
    if command -v gdb >/dev/null && [ "${variant#jemalloc}" = "$variant" ] && [ "$variant" != mimalloc ]; then
        glibc_stats "$pid" "$log" "before malloc_trim(0)" >>"$out/$variant.tsv"
        gdb -p "$pid" -batch -ex 'call (int) malloc_trim(0)' >/dev/null 2>&1 || true
        memory "$pid" "after malloc_trim(0)" >>"$out/$variant.tsv"
    fi
    kill "$pid"
    wait "$pid" 2>/dev/null || true
    pid=
    {
        echo "## $variant ${env[*]:-}"
        awk -F'\t' '
            NF == 4 { printf "%-28s %8.1f MiB  (anon %6.1f MiB, peak %6.1f MiB)\n", $1, $2 / 1024, $3 / 1024, $4 / 1024 }
            NF == 2 { printf "%-28s %s\n", $1, $2 }' "$out/$variant.tsv"
        echo
    } | tee -a "$summary"
done
echo "==> wrote $summary" >&2

#!/usr/bin/env bash
# A soak of mixed load against the release hostile-server over HTTP on
# loopback (not run in CI):
#
#   benches/soak.sh                      # 10 minutes
#   SOAK_SECONDS=60 SOAK_WARMUP=15 benches/soak.sh
#
# Builds `hostile-server` (the quickstart's tools, resources and prompts)
# in release mode, starts it with its defaults (rate limit, timeouts,
# in-flight cap) and runs `benches/soak.py` (Python 3, standard library):
#
# - well-behaved clients on 127.0.0.1 (SOAK_CLIENTS, default 8; SOAK_RATE
#   requests/s in all, default 40, about half of them tool calls, below
#   the default limit of 50 tool calls/s per client address): a mix of
#   server/discover, tools/list, tools/call (echo, add, divide, a 60 ms
#   countdown), an MRTR round trip (confirm_delete), resources/read and
#   prompts/get, every answer checked;
# - hostile clients on 127.0.0.2 (the client socket bound to that source
#   address; all of 127.0.0.0/8 is loopback on Linux): SOAK_SLOW_BODIES
#   (64) connections sending a complete head, then one body byte every
#   SOAK_TRICKLE_SECONDS (3); SOAK_SLOWLORIS (64) sending a head the same
#   way; SOAK_SLOW_CALLS (50) calls a second, each on its own connection,
#   of `countdown {"from":100,"delay_ms":1000}` (100 s each), held until
#   answered (at most SOAK_SLOW_CALLS_MAX, 6,000, at once); SOAK_JUNK (5)
#   oversized or malformed requests a second.
# - pool floods from SOAK_FLOOD_ADDRESSES (8) more addresses, 127.0.0.3
#   on: SOAK_FLOOD_EACH (128) slow calls and as many `subscriptions/listen`
#   streams from each, held open and opened again a second after the
#   server refuses or ends one (8 x 128 was every slot of the default 1,024
#   in flight, 2 x 128 every one of the 256 streams); meanwhile a
#   well-behaved client opens a listen stream every SOAK_LISTEN_EVERY (2)
#   seconds, which must be acknowledged.
#
# It reports every error a well-behaved client saw, by kind (any status but
# 200, 429 and 503 included; target: none), their latency (p50, p99), what
# the server did to each kind of hostile client, and the server's RSS at
# launch, after the warm-up (SOAK_WARMUP seconds, default 120: the slow
# calls take 100 s to reach their steady state), at its peak and at the
# end (target: the end within SOAK_RSS_TOLERANCE, 0.10, of the level after
# the warm-up). Exits 1 when a target is missed.
#
# SOAK_MALLOC_STATS=1 (with gdb installed) adds glibc's count of bytes in
# use after the warm-up and at the end, which tells a leak (it grows) from
# the allocator keeping freed memory (RSS grows, bytes in use do not).
# SOAK_BIN runs another server binary instead of building this tree's;
# SOAK_ARGS adds arguments to its command line. The server's log is
# target/soak/server.log.
set -euo pipefail
cd "$(dirname "$0")/.."

# Thousands of connections at once, in the server and in the client.
ulimit -n "$(ulimit -Hn)" 2>/dev/null || ulimit -n 65536 2>/dev/null || true
if [ "$(ulimit -n)" != unlimited ] && [ "$(ulimit -n)" -lt 16384 ]; then
    echo "warning: at most $(ulimit -n) open files; lower SOAK_SLOW_CALLS_MAX below it" >&2
fi
python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.3", 0))' 2>/dev/null || {
    echo "error: cannot bind a socket to 127.0.0.3 (the hostile clients' addresses are 127.0.0.2 on)" >&2
    exit 1
}

if [ -n "${SOAK_BIN:-}" ]; then
    server=$SOAK_BIN
else
    echo "==> building hostile-server (release)" >&2
    CARGO_INCREMENTAL=0 cargo build --release -q -p mcp-hostile-tests --bin hostile-server
    target=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')
    server=$target/release/hostile-server
fi

out=target/soak
mkdir -p "$out"
log=$out/server.log
# shellcheck disable=SC2086 # SOAK_ARGS is a list of arguments
RUST_LOG=${RUST_LOG:-warn} "$server" --http 127.0.0.1:0 ${SOAK_ARGS:-} </dev/null >/dev/null 2>"$log" &
pid=$!
trap 'kill "$pid" 2>/dev/null || true' EXIT
# The address line is logged at info; with RUST_LOG=warn, find the port
# from the listening socket instead.
address=
for _ in $(seq 100); do
    address=$(grep -o 'address=[0-9.:]*' "$log" | head -1 | cut -d= -f2 || true)
    [ -z "$address" ] && address=$(ss -Htlnp 2>/dev/null | awk -v pid="pid=$pid," 'index($0, pid) { print $4; exit }')
    [ -n "$address" ] && break
    kill -0 "$pid" 2>/dev/null || { echo "error: the server exited:" >&2; cat "$log" >&2; exit 1; }
    sleep 0.1
done
[ -n "$address" ] || { echo "error: the server is not listening" >&2; exit 1; }

# glibc's own account (bytes in use, bytes held from the system), read in
# the server through gdb just after the warm-up and just before the end:
# bytes in use that stay level while RSS climbs is the allocator keeping
# freed memory, not a leak. Each reading stops the server for about a
# second, hence opt-in.
stats=$out/malloc-stats.txt
: >"$stats"
reader=
if [ "${SOAK_MALLOC_STATS:-0}" = 1 ] && command -v gdb >/dev/null; then
    (
        reading() {
            local before
            before=$(wc -l <"$log")
            gdb -p "$pid" -batch -ex 'call (void) malloc_stats()' >/dev/null 2>&1 || return 0
            sleep 0.5
            tail -n +"$((before + 1))" "$log" | awk -v label="$1" '
                /^Total/ { total = 1 }
                total && /system bytes/ { held = $NF }
                total && /in use bytes/ { used = $NF }
                END { if (held) printf "glibc %s: in use %.1f MiB, held from the system %.1f MiB\n", label, used / 1048576, held / 1048576 }' >>"$stats"
        }
        warmup=${SOAK_WARMUP:-120} seconds=${SOAK_SECONDS:-600}
        sleep "$warmup" && reading "after the warm-up"
        sleep "$(awk -v a="$seconds" -v b="$warmup" 'BEGIN { d = a - b - 3; print (d > 0 ? d : 0) }')" && reading "at the end"
    ) &
    reader=$!
fi

status=0
python3 benches/soak.py "$address" "$pid" || status=$?
[ -n "$reader" ] && wait "$reader"
cat "$stats"
kill -0 "$pid" 2>/dev/null || { echo "error: the server died during the soak" >&2; status=1; }
echo "server log: $log ($(wc -l <"$log") lines; warnings and errors: $(grep -cE ' (WARN|ERROR) ' "$log" || true))"
exit "$status"

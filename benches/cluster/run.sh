#!/usr/bin/env bash
# Several instances of examples/conformance behind nginx, with the shared
# state in Redis, and what each Redis-backed feature costs a request:
#
#   benches/cluster/run.sh
#
# Writes benches/cluster/RESULTS.md (3 minutes after the build on a quiet
# machine, more while it waits for a quiet one).
#
# 1. Installs wrk and nginx (Debian's packages) if they are missing, and
#    redis-server if no Redis answers at 127.0.0.1:6379; builds
#    conformance-server in release mode (it installs the Redis plugin when MCP_REDIS_URL is set).
# 2. Redis: the machine's at 127.0.0.1:6379 if it answers PING, else one of
#    its own on a free port (no persistence). Every key under a prefix of
#    this run's own, deleted at the end; nothing else in that Redis is
#    touched.
# 3. tools/call greet under wrk: one instance directly, one behind nginx,
#    three behind nginx (round robin, no stickiness), all sharing one
#    MCP_STATE_KEY and the Redis prefix, with --rate-limit 0.
# 4. Each Redis-backed feature, one instance directly, with and without
#    MCP_REDIS_URL: the shared rate limit (--rate-limit 1000000: the limiter
#    runs and never refuses), the replay check of a single-use requestState
#    (round 2 of confirm_delete, a fresh state per request, so bench.py's
#    Python client instead of wrk), and tasks/get of a working task (the
#    Redis task store against the in-memory one).
#
# Each wrk measurement: 2 s of warm-up, then 10 s, 2 threads, 32
# connections. Nothing is pinned: on a 2-core machine the instances, nginx,
# Redis and the load generator share both cores. Any request that fails
# (non-2xx, or a body that is not a result) fails the run.
# Before each measurement it waits (BENCH_QUIET_WAIT, default 60 s, at
# most) until the rest of the machine uses less than BENCH_QUIET_CORES
# (default 0.3) of a core, and measures again (BENCH_ATTEMPTS, default 3
# times in all) if it used more during the timed part; the quietest is
# kept, and the table says how much the rest used meanwhile.
# BENCH_SECONDS (default 10) and MRTR_COUNT (default 20000) shorten a run
# while iterating.
set -euo pipefail
cd "$(dirname "$0")/../.."
here=benches/cluster
started=$SECONDS
log() { printf '==> [%3ds] %s\n' "$((SECONDS - started))" "$*" >&2; }
seconds=${BENCH_SECONDS:-10}
mrtr_count=${MRTR_COUNT:-20000}
export PATH="$PATH:/usr/sbin:/sbin"
load_before=$(cut -d' ' -f1-3 /proc/loadavg)

apt_install() {
    log "installing $* (Debian's packages)"
    local sudo=()
    [ "$(id -u)" = 0 ] || sudo=(sudo)
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get -y -o DPkg::Lock::Timeout=300 install "$@" >/dev/null ||
        { "${sudo[@]}" apt-get -o DPkg::Lock::Timeout=300 update >/dev/null &&
            "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get -y -o DPkg::Lock::Timeout=300 install "$@" >/dev/null; }
}
missing=()
command -v wrk >/dev/null || missing+=(wrk)
command -v nginx >/dev/null || missing+=(nginx)
machine_redis=
if python3 "$here/bench.py" ping 127.0.0.1 6379; then machine_redis=1
elif ! command -v redis-server >/dev/null; then missing+=(redis-server); fi
((${#missing[@]} == 0)) || apt_install "${missing[@]}"

log "building conformance-server (release)"
cargo build --release -q -p conformance-server
target=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')
server="$target/release/conformance-server"

work=$(mktemp -d "${TMPDIR:-/tmp}/mcp-bench-cluster.XXXXXX")
rows="$work/rows.jsonl"
: >"$rows"
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
instance_pids=()
nginx_pid=
redis_pid=
redis_url=
prefix=
finished=

cleanup() {
    local pid
    for pid in "${instance_pids[@]}" $nginx_pid; do kill "$pid" 2>/dev/null || true; done
    for pid in "${instance_pids[@]}" $nginx_pid; do wait "$pid" 2>/dev/null || true; done
    if [[ -n $redis_pid ]]; then
        kill "$redis_pid" 2>/dev/null || true
        wait "$redis_pid" 2>/dev/null || true
    elif [[ -n $prefix ]]; then
        # Only this run's keys (its own prefix), after its instances stopped.
        python3 "$here/bench.py" redis-del "$redis_url" "$prefix" >/dev/null || true
    fi
    if [[ -z $finished ]]; then
        echo "error: stopped early; the last lines of the logs:" >&2
        tail -n 5 "$work"/*.log >&2 2>/dev/null || true
    fi
    rm -rf "$work"
}
trap cleanup EXIT

# --- Redis ---------------------------------------------------------------------
if [[ -n $machine_redis ]]; then
    redis_url=redis://127.0.0.1:6379
    redis_where="the machine's, at 127.0.0.1:6379"
else
    port=$(free_port)
    redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no \
        --dir "$work" --logfile "$work/redis.log" &
    redis_pid=$!
    until python3 "$here/bench.py" ping 127.0.0.1 "$port"; do
        kill -0 "$redis_pid" 2>/dev/null || { echo "error: redis-server did not start" >&2; exit 1; }
        sleep 0.05
    done
    redis_url=redis://127.0.0.1:$port
    redis_where="one of its own (redis-server --save '' --appendonly no, port $port)"
fi
read -r redis_version redis_proc < <(python3 "$here/bench.py" redis-info "$redis_url")
prefix="bench-cluster-$(python3 -c 'import secrets; print(secrets.token_hex(6))'):"
state_key=$(python3 -c 'import base64, os; print(base64.b64encode(os.urandom(32)).decode())')
log "Redis $redis_where, key prefix $prefix"

# --- Instances and nginx ---------------------------------------------------------
# start_instance NAME PORT RATE [REDIS_PREFIX]: without REDIS_PREFIX, no
# MCP_REDIS_URL (everything in the instance's memory). Sets $pid.
start_instance() {
    local name=$1 port=$2 rate=$3
    if [[ -n ${4:-} ]]; then
        MCP_STATE_KEY=$state_key MCP_REDIS_URL=$redis_url MCP_REDIS_PREFIX=$4 \
            "$server" --http "127.0.0.1:$port" --rate-limit "$rate" 2>>"$work/instance-$name.log" &
    else
        env -u MCP_REDIS_URL -u MCP_REDIS_PREFIX MCP_STATE_KEY="$state_key" \
            "$server" --http "127.0.0.1:$port" --rate-limit "$rate" 2>>"$work/instance-$name.log" &
    fi
    pid=$!
    instance_pids+=("$pid")
    python3 "$here/bench.py" ready "http://127.0.0.1:$port/mcp"
}

stop_all() {
    local p
    for p in "${instance_pids[@]}" $nginx_pid; do kill "$p" 2>/dev/null || true; done
    for p in "${instance_pids[@]}" $nginx_pid; do wait "$p" 2>/dev/null || true; done
    instance_pids=()
    nginx_pid=
}

# start_nginx PORT UPSTREAM_PORT...: nginx in the foreground, its config,
# temp files and logs under $work/nginx. Sets $nginx_pid.
start_nginx() {
    local listen=$1 dir="$work/nginx" p
    shift
    rm -rf "$dir"
    mkdir -p "$dir"
    {
        [ "$(id -u)" = 0 ] && echo "user root;"
        cat <<EOF
worker_processes auto;
daemon off;
pid $dir/nginx.pid;
error_log $dir/error.log warn;
events { worker_connections 1024; }
http {
    # Which instance answered, and with what: bench.py counts them.
    log_format upstream '\$upstream_addr \$status';
    access_log $dir/access.log upstream buffer=256k flush=1s;
    client_body_temp_path $dir/client_body_temp;
    proxy_temp_path $dir/proxy_temp;
    fastcgi_temp_path $dir/fastcgi_temp;
    uwsgi_temp_path $dir/uwsgi_temp;
    scgi_temp_path $dir/scgi_temp;
    upstream mcp {
        # Round robin, nginx's default: no ip_hash, hash or sticky.
EOF
        for p in "$@"; do echo "        server 127.0.0.1:$p;"; done
        cat <<EOF
        keepalive 64;
    }
    server {
        listen 127.0.0.1:$listen;
        location /mcp {
            proxy_pass http://mcp;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            # The instances answer loopback Host names only.
            proxy_set_header Host \$host:\$server_port;
            proxy_buffering off;
        }
    }
}
EOF
    } >"$dir/nginx.conf"
    nginx -t -q -p "$dir" -e "$dir/error.log" -c "$dir/nginx.conf"
    nginx -p "$dir" -e "$dir/error.log" -c "$dir/nginx.conf" &
    nginx_pid=$!
    python3 "$here/bench.py" ready "http://127.0.0.1:$listen/mcp"
}

greet_lua="$work/greet.lua"
python3 "$here/bench.py" lua "$greet_lua" greet
measure() { # GROUP LABEL SETUP STATE URL LUA [bench.py wrk options]
    python3 "$here/bench.py" wrk --rows "$rows" --group "$1" --label "$2" --setup "$3" --state "$4" \
        --url "$5" --lua "$6" --seconds "$seconds" --warmup 2 --threads 2 --connections 32 "${@:7}"
}
redis_cpu=(--redis "$redis_url")
[[ -z $redis_proc ]] || redis_cpu+=(--cpu "redis=$redis_proc")
# The request, checked once with curl before any load.
port=$(free_port)
start_instance check "$port" 0 "${prefix}check:"
curl -sS --fail-with-body "http://127.0.0.1:$port/mcp" -o "$work/greet.json" \
    -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
    -H 'MCP-Protocol-Version: 2026-07-28' -H 'Mcp-Method: tools/call' -H 'Mcp-Name: greet' \
    --data-binary '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"greet","arguments":{"name":"bench"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}'
grep -q '"text":"Hello, bench!"' "$work/greet.json" || { echo "error: unexpected answer: $(cat "$work/greet.json")" >&2; exit 1; }
log "curl: tools/call greet -> 200, $(cat "$work/greet.json")"
stop_all

# --- 1. One, one behind nginx, three behind nginx -----------------------------
log "tools/call greet, one instance, directly, without Redis (the reference)"
port=$(free_port)
start_instance reference "$port" 0
measure cluster greet "1 instance, directly" memory "http://127.0.0.1:$port/mcp" "$greet_lua" \
    --cpu "server=$pid" "${redis_cpu[@]}"
stop_all

log "tools/call greet, one instance, directly (Redis, --rate-limit 0)"
port=$(free_port)
start_instance direct "$port" 0 "${prefix}a:"
measure cluster greet "1 instance, directly" redis "http://127.0.0.1:$port/mcp" "$greet_lua" \
    --cpu "server=$pid" "${redis_cpu[@]}"
stop_all

log "tools/call greet, one instance behind nginx"
port=$(free_port) listen=$(free_port)
start_instance behind-1 "$port" 0 "${prefix}b:"
servers=$pid
start_nginx "$listen" "$port"
measure cluster greet "1 instance behind nginx" redis "http://127.0.0.1:$listen/mcp" "$greet_lua" \
    --cpu "server=$servers" --cpu "nginx=$nginx_pid" "${redis_cpu[@]}" --access-log "$work/nginx/access.log"
stop_all

log "tools/call greet, three instances behind nginx (round robin)"
ports=() servers=
for n in 1 2 3; do
    port=$(free_port)
    start_instance "three-$n" "$port" 0 "${prefix}c:"
    ports+=("$port")
    servers+="${servers:+,}$pid"
done
listen=$(free_port)
start_nginx "$listen" "${ports[@]}"
measure cluster greet "3 instances behind nginx, round robin" redis "http://127.0.0.1:$listen/mcp" "$greet_lua" \
    --cpu "server=$servers" --cpu "nginx=$nginx_pid" "${redis_cpu[@]}" --access-log "$work/nginx/access.log"
stop_all

# --- 2. Each Redis-backed feature, with and without Redis ------------------------
# with_and_without RATE CALLBACK: CALLBACK STATE URL runs once with an
# instance in memory, once with its state in Redis.
with_and_without() {
    local rate=$1 run=$2 state port
    for state in memory redis; do
        port=$(free_port)
        if [[ $state == redis ]]; then start_instance "$state-$run" "$port" "$rate" "${prefix}$run:"
        else start_instance "$state-$run" "$port" "$rate"; fi
        "$run" "$state" "http://127.0.0.1:$port/mcp"
        stop_all
    done
}

rate_limit() {
    measure feature "shared rate limit (\`--rate-limit 1000000\`), \`tools/call greet\`" "1 instance, directly" \
        "$1" "$2" "$greet_lua" --cpu "server=$pid" "${redis_cpu[@]}"
}
log "the rate limit: --rate-limit 1000000, in memory, then in Redis"
with_and_without 1000000 rate_limit

replay() {
    local threads
    # 8 threads for throughput, 1 for the latency without queueing.
    for threads in 8 1; do
        python3 "$here/bench.py" mrtr --rows "$rows" --group feature \
            --label "replay check: MRTR round 2 of \`confirm_delete\` (single-use state), a fresh state each" \
            --setup "1 instance, directly" --state "$1" --url "$2" --threads "$threads" --count "$mrtr_count" \
            --warmup 2 --cpu "server=$pid" "${redis_cpu[@]}"
    done
}
log "the replay check: round 2 of confirm_delete, in memory, then in Redis ($mrtr_count states a load)"
with_and_without 0 replay

task_poll() {
    local task
    task=$(python3 "$here/bench.py" task "$2" --seconds 600)
    python3 "$here/bench.py" lua "$work/task.lua" "$task"
    measure feature "task poll: \`tasks/get\` of a working task" "1 instance, directly" \
        "$1" "$2" "$work/task.lua" --cpu "server=$pid" "${redis_cpu[@]}"
}
log "the task poll: tasks/get of a working slow_compute task, in memory, then in Redis"
with_and_without 0 task_poll

# --- The table ----------------------------------------------------------------------
{
    echo "# Several instances behind nginx: results"
    echo
    echo "Generated by \`benches/cluster/run.sh\` on $(date -u +%Y-%m-%d), $(uname -sr), $(nproc) cores"
    echo "($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')); load average before the run: $load_before."
    echo "Nothing is pinned: the instances, nginx ($(nginx -v 2>&1 | sed 's/.*nginx\///'), \`worker_processes auto\`), Redis"
    echo "($redis_version, $redis_where) and the load generator share the machine's $(nproc) cores."
    echo "Every instance is the release \`conformance-server\`, with one \`MCP_STATE_KEY\` and, where the state is in Redis,"
    echo "\`MCP_REDIS_URL\` and a \`MCP_REDIS_PREFIX\` of this run's own. wrk ($(wrk -v 2>&1 | head -1 | cut -d' ' -f2)): 2 s of warm-up, then"
    echo "${seconds} s, 2 threads, 32 connections, every answer checked (2xx and a result) and none failed. The replay"
    echo "check needs a fresh \`requestState\` per request, which wrk cannot send: there, a Python client (http.client,"
    echo "keep-alive; 8 threads, then 1) first fetches ${mrtr_count} round-1 states, then times their round 2, each state once"
    echo "(after 2 s of warm-up). CPU per request is read from \`/proc\` (the instances, nginx's master and workers, Redis's"
    echo "process) and Redis commands from its \`INFO\` (\`total_commands_processed\`, which counts a script's own commands"
    echo "too): both count every client of that Redis. \"Rest of the machine\": cores busy with anything but the measured"
    echo "processes and the load generator (other processes, kernel time charged to none) during the timed part; a"
    echo "measurement is repeated (3 times at most) while that is 0.3 cores or more, and the quietest is shown."
    echo
    python3 "$here/bench.py" table "$rows"
    echo
    echo "Full run: $((SECONDS - started)) s, the build included."
} >"$here/RESULTS.md.new"
mv "$here/RESULTS.md.new" "$here/RESULTS.md"
cat "$here/RESULTS.md"
finished=1
log "wrote $here/RESULTS.md"

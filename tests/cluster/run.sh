#!/usr/bin/env bash
# Every feature across three instances of examples/conformance behind a
# plain round-robin nginx (no stickiness), with Redis as the shared state,
# then faults injected with their outcomes counted:
#
#   tests/cluster/run.sh                 # everything (about 4 minutes)
#   tests/cluster/run.sh --install-only  # nginx, redis-server and the suites
#
# 1. Installs Debian's nginx and redis-server when missing, and the two
#    suites' clients (their run.sh --install-only); builds the fixture
#    (CONFORMANCE_SERVER names one already built) and runs a copy of it.
# 2. Redis: the machine's at 127.0.0.1:6379 if it answers, else one of
#    its own (tests/redis.sh); every key under a prefix of this run's own,
#    deleted at the end (nothing else in that Redis is touched). And a
#    second Redis, this run's alone, for fault d.
# 3. Three instances (1..3) on free loopback ports, one MCP_STATE_KEY,
#    MCP_REDIS_URL and MCP_REDIS_PREFIX, and --rate-limit 0: behind a proxy
#    every client has the proxy's address, so the setting behind a gateway
#    is off. Two more with --rate-limit 5 for the rate-limit check (rl-1,
#    rl-2), two more on the second Redis for fault d (d-1, d-2).
# 4. nginx from nginx.conf.template (the deployment example the guide
#    quotes), unprivileged, in the foreground, under results/nginx/.
# 5. faults.py rate-limit: one budget for two instances (directly).
# 6. listen.py: change notifications across instances and through nginx.
# 7. Through nginx: the conformance suite (2026-07-28 scored, the pending
#    scenarios, the tasks-* scenarios, 2025-11-25 scored) and the legacy
#    HTTP clients (CONFORMANCE_URL / LEGACY_URL, see their run.sh).
# 8. faults.py, with the processes killed and restarted here:
#    a. kill -9 of instance 2 at ~15 s of 60 s of load through nginx (8
#       threads), restarted at ~30 s;
#    b. kill -9 of instance 1 between MRTR rounds, answered through nginx;
#    c. kill -9 of instance 3 while it runs a task: `failed` within the
#       lease, through nginx and on every instance;
#    d. the second Redis killed and started again (empty) under load on
#       d-1 and d-2.
# 9. A table of every check (also results/checks.jsonl); exits 1 if any
#    failed.
#
# Results and logs go to tests/cluster/results/: instance-NAME.log (each
# start and kill marked), nginx/ (config, access and error logs),
# conformance/ and conformance.out, legacy/ and legacy.out, *.events.
set -euo pipefail

here=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
root=$(cd -- "$here/../.." && pwd)
results="$here/results"
started=$SECONDS
# No __pycache__ beside the scripts (summary.py imports judge.py).
export PYTHONDONTWRITEBYTECODE=1
log() { printf '\n==> [%3ds] %s\n' "$((SECONDS - started))" "$*" >&2; }

# --- 1. Installs ------------------------------------------------------------
apt_install() {
    log "installing Debian's $* (apt-get)"
    # Waits for the dpkg lock, as tests/redis.sh does.
    apt-get -o DPkg::Lock::Timeout=300 update -qq
    DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 install -y -qq "$@" >/dev/null
}
export PATH="$PATH:/usr/sbin:/sbin"
missing=()
command -v nginx >/dev/null || missing+=(nginx)
command -v redis-server >/dev/null || missing+=(redis-server)
((${#missing[@]} == 0)) || apt_install "${missing[@]}"
"$root/tests/conformance/run.sh" --install-only
"$root/tests/legacy/run.sh" --install-only
[[ ${1:-} == --install-only ]] && exit 0

source "$root/tests/fixture.sh"
server=$(fixture_server "$root")
[[ -x $server ]] || { echo "error: no conformance-server at $server" >&2; exit 1; }

rm -rf "$results"
mkdir -p "$results"
# A copy: every instance, restarted ones included, runs this very build
# even if cargo rebuilds the original meanwhile.
cp "$server" "$results/conformance-server"
server="$results/conformance-server"
checks="$results/checks.jsonl"
: >"$checks"
cd "$here"

record() { python3 summary.py record --checks "$checks" "$@"; }
mark() { printf '%s %s\n' "$1" "$EPOCHREALTIME" >>"$2"; }

# --- 2. Redis -----------------------------------------------------------------
# shellcheck source=SCRIPTDIR/../redis.sh
source "$root/tests/redis.sh"
ensure_redis
redis_url=$MCP_TEST_REDIS_URL
prefix="cluster-$(python3 -c 'import secrets; print(secrets.token_hex(6))'):"
state_key=$(new_state_key)
log "Redis $redis_url, key prefix $prefix"

# Fault d's Redis: this run's own, started now so that it has been up a
# while when the single-use state is used before its restart (a guard
# refuses states issued within seconds of its Redis's start).
own_redis_port=$(free_port)
own_redis() {
    redis-server --port "$own_redis_port" --bind 127.0.0.1 --save '' --appendonly no \
        --dir "$results" --logfile "$results/own-redis.log" &
    own_redis_pid=$!
    local deadline=$((SECONDS + 10))
    until redis_answers 127.0.0.1 "$own_redis_port"; do
        if ((SECONDS >= deadline)); then
            echo "error: redis-server did not start on $own_redis_port; results/own-redis.log says:" >&2
            tail -n 20 "$results/own-redis.log" >&2
            exit 1
        fi
        sleep 0.05
    done
}

# --- 3. Instances -------------------------------------------------------------
# NAME -> pid / port / Redis URL / prefix / --rate-limit, so a killed
# instance restarts exactly as it ran (same port, same environment).
declare -A pid=() port=() inst_redis=() inst_prefix=() inst_rate=()
nginx_pid=
own_redis_pid=
load_pid=
finished=

cleanup() {
    local name
    [[ -z $load_pid ]] || kill "$load_pid" 2>/dev/null || true
    for name in "${!pid[@]}"; do
        [[ -z ${pid[$name]} ]] || kill "${pid[$name]}" 2>/dev/null || true
    done
    [[ -z $nginx_pid ]] || kill "$nginx_pid" 2>/dev/null || true
    [[ -z $own_redis_pid ]] || kill "$own_redis_pid" 2>/dev/null || true
    wait 2>/dev/null || true
    rm -f "$results/conformance-server"
    # This run's keys, and only those (a unique prefix), in a Redis that
    # outlives the run.
    if [[ -z $REDIS_STARTED_DIR ]] && command -v redis-cli >/dev/null; then
        redis-cli -u "$redis_url" --scan --pattern "${prefix}*" 2>/dev/null |
            xargs -r -n 100 redis-cli -u "$redis_url" DEL >/dev/null 2>&1 || true
    fi
    stop_redis
    if [[ -z $finished ]]; then
        record "harness: ran to the end" FAIL "stopped early (see the error above); checks so far:"
        python3 summary.py table --checks "$checks" || true
    fi
}
trap cleanup EXIT

start_instance() { # NAME PORT REDIS_URL PREFIX RATE
    local name=$1
    port[$name]=$2 inst_redis[$name]=$3 inst_prefix[$name]=$4 inst_rate[$name]=$5
    printf -- '--- started at %s\n' "$(date -u +%FT%T.%3NZ)" >>"$results/instance-$name.log"
    MCP_STATE_KEY=$state_key MCP_REDIS_URL=$3 MCP_REDIS_PREFIX=$4 \
        "$server" --http "127.0.0.1:$2" --rate-limit "$5" 2>>"$results/instance-$name.log" &
    pid[$name]=$!
}

restart_instance() { # NAME
    start_instance "$1" "${port[$1]}" "${inst_redis[$1]}" "${inst_prefix[$1]}" "${inst_rate[$1]}"
}

kill_instance() { # NAME: kill -9, as a crash
    kill -9 "${pid[$1]}"
    wait "${pid[$1]}" 2>/dev/null || true
    printf -- '--- killed (SIGKILL) at %s\n' "$(date -u +%FT%T.%3NZ)" >>"$results/instance-$1.log"
    pid[$1]=
}

stop_instance() { # NAME
    kill "${pid[$1]}" 2>/dev/null || true
    wait "${pid[$1]}" 2>/dev/null || true
    pid[$1]=
}

url_of() { printf 'http://127.0.0.1:%s/mcp' "${port[$1]}"; }

# Until NAME (or the URL $2) answers server/discover, 15 s at most.
discovers() {
    python3 -c '
import sys
from mcpwire import call
sys.exit(0 if call(sys.argv[1], "server/discover", {}, timeout=2).ok else 1)' "$1"
}
wait_ready() { # NAME [URL]
    local name=$1 url=${2:-$(url_of "$1")} deadline=$((SECONDS + 15))
    until discovers "$url"; do
        if [[ -n ${pid[$name]:-} ]] && ! kill -0 "${pid[$name]}" 2>/dev/null; then
            echo "error: $name exited; results/instance-$name.log says:" >&2
            tail -n 20 "$results/instance-$name.log" >&2
            exit 1
        fi
        if ((SECONDS >= deadline)); then
            echo "error: $name did not answer server/discover at $url within 15 s" >&2
            exit 1
        fi
        sleep 0.1
    done
}

log "starting 3 instances, 2 with a rate limit (its check) and 2 on a Redis of their own (fault d)"
for n in 1 2 3; do
    start_instance "$n" "$(free_port)" "$redis_url" "$prefix" 0
done
# --rate-limit 5: 5 calls/s, bursts of 10, the budget in Redis.
for n in rl-1 rl-2; do
    start_instance "$n" "$(free_port)" "$redis_url" "${prefix}rl:" 5
done
own_redis
for n in d-1 d-2; do
    start_instance "$n" "$(free_port)" "redis://127.0.0.1:$own_redis_port" "${prefix}d:" 0
done
for n in 1 2 3 rl-1 rl-2 d-1 d-2; do wait_ready "$n"; done
for n in 1 2 3; do log "instance $n: $(url_of "$n") (pid ${pid[$n]})"; done

# --- 4. nginx -------------------------------------------------------------------
ndir="$results/nginx"
mkdir -p "$ndir"
nginx_port=$(free_port)
python3 - "$here/nginx.conf.template" "$ndir/nginx.conf" "$nginx_port" "${port[1]}" "${port[2]}" "${port[3]}" "$EUID" <<'PY'
import sys
template, out, listen, one, two, three, euid = sys.argv[1:]
text = open(template).read()
for old, new in (("listen 127.0.0.1:8080;", f"listen 127.0.0.1:{listen};"),
                 ("server 127.0.0.1:8001 ", f"server 127.0.0.1:{one} "),
                 ("server 127.0.0.1:8002 ", f"server 127.0.0.1:{two} "),
                 ("server 127.0.0.1:8003 ", f"server 127.0.0.1:{three} ")):
    if text.count(old) != 1:
        sys.exit(f"error: nginx.conf.template has {text.count(old)} of {old!r}, not 1")
    text = text.replace(old, new)
if euid == "0":
    # As root, workers would run as nobody, who cannot write the temp dirs.
    text = "user root;\n" + text
open(out, "w").write(text)
PY
nginx -t -q -p "$ndir" -e "$ndir/error.log" -c "$ndir/nginx.conf"
nginx -p "$ndir" -e "$ndir/error.log" -c "$ndir/nginx.conf" &
nginx_pid=$!
via="http://127.0.0.1:$nginx_port/mcp"
wait_ready nginx "$via"
log "nginx: $via (config: results/nginx/nginx.conf)"

# --- 5. One rate budget across instances (then those two stop) -------------
log "rate limit shared by two instances"
python3 faults.py --checks "$checks" rate-limit --rate 5 "$(url_of rl-1)" "$(url_of rl-2)" || true
stop_instance rl-1
stop_instance rl-2

# --- 6. Change notifications across instances -----------------------------
log "listeners across instances"
python3 listen.py --checks "$checks" --via "$via" "$(url_of 1)" "$(url_of 2)" "$(url_of 3)" || true

# --- 7. The suites, through nginx ------------------------------------------
log "conformance suite through nginx (results/conformance/)"
status=0
CONFORMANCE_URL=$via CONFORMANCE_RESULTS="$results/conformance" \
    "$root/tests/conformance/run.sh" >"$results/conformance.out" 2>&1 || status=$?
sed -n '/^\[scored\]/,$p' "$results/conformance.out" | grep -v '^  ✓' >&2 || true
python3 summary.py conformance --checks "$checks" "$results/conformance" "$status"

log "legacy HTTP clients through nginx (results/legacy/)"
status=0
LEGACY_URL=$via LEGACY_RESULTS="$results/legacy" \
    "$root/tests/legacy/run.sh" >"$results/legacy.out" 2>&1 || status=$?
python3 summary.py legacy --checks "$checks" "$results/legacy" "$results/legacy.out" "$status"

# --- 8a. kill -9 under load -------------------------------------------------
log "fault a: kill -9 instance 2 at ~15 s of a 60 s load through nginx, restart at ~30 s"
events="$results/kill.events"
: >"$events"
python3 faults.py --checks "$checks" load-kill --url "$via" --threads 8 --duration 60 \
    --events "$events" --access-log "$ndir/access.log" --killed "127.0.0.1:${port[2]}" &
load_pid=$!
sleep 15
mark kill "$events"
kill_instance 2
mark killed "$events"
sleep 15
restart_instance 2
wait_ready 2
mark ready "$events"
wait "$load_pid" || true
load_pid=

# --- 8b. kill -9 between MRTR rounds -----------------------------------------
log "fault b: first MRTR rounds on instance 1, kill -9 it, later rounds through nginx"
python3 faults.py --checks "$checks" mrtr-start --url "$(url_of 1)" --out "$results/mrtr.json" || true
kill_instance 1
python3 faults.py --checks "$checks" mrtr-finish --url "$via" --state "$results/mrtr.json" || true
restart_instance 1
wait_ready 1

# --- 8c. kill -9 of the instance running a task -------------------------------
log "fault c: a 120 s task on instance 3, kill -9 it, poll through nginx (lease 30 s, limit 45 s)"
events="$results/task.events"
: >"$events"
python3 faults.py --checks "$checks" task-start --url "$(url_of 3)" --out "$results/task.json" || true
mark kill "$events"
kill_instance 3
python3 faults.py --checks "$checks" task-orphan --via "$via" --others "$(url_of 1)" "$(url_of 2)" \
    --task "$results/task.json" --events "$events" --limit 45 || true
restart_instance 3
wait_ready 3
python3 faults.py --checks "$checks" task-same --url "$(url_of 3)" --task "$results/task.json" || true

# --- 8d. Redis restarted under load -----------------------------------------------
# A Redis of this run's own, never the machine's: killed and started again
# (empty: no persistence) on the same port.
log "fault d: the Redis of its own, killed at ~5 s of a 20 s load on two instances, back ~3 s later"
events="$results/redis.events"
: >"$events"
marker="$results/redis.started"
rm -f "$marker"
python3 faults.py --checks "$checks" redis-restart --threads 4 --duration 20 --events "$events" \
    --marker "$marker" "$(url_of d-1)" "$(url_of d-2)" &
load_pid=$!
deadline=$((SECONDS + 20))
until [[ -e $marker ]] || ((SECONDS >= deadline)); do sleep 0.05; done
sleep 5
mark down "$events"
kill -9 "$own_redis_pid"
wait "$own_redis_pid" 2>/dev/null || true
own_redis_pid=
sleep 3
own_redis
mark up "$events"
wait "$load_pid" || true
load_pid=
stop_instance d-1
stop_instance d-2

# --- 9. The table -------------------------------------------------------------------
log "done in $((SECONDS - started)) s"
finished=yes
python3 summary.py table --checks "$checks"

"""The measuring half of benches/cluster/run.sh (Python stdlib only).

run.sh starts and stops the processes (Redis, instances, nginx); this file
talks to them:

  bench.py ping HOST PORT          exit 0 if a Redis answers PING there
  bench.py redis-info URL          the Redis server's version and pid (if here)
  bench.py redis-del URL PREFIX    deletes the keys under PREFIX (SCAN + DEL)
  bench.py ready URL               waits until tools/call greet answers 200
  bench.py lua OUT METHOD NAME BODY  writes wrk's script for one request
  bench.py task URL                creates a slow_compute task, prints its id
  bench.py wrk ...                 warm-up, then one timed wrk run (a row)
  bench.py mrtr ...                round 2 of confirm_delete, fresh states
  bench.py table ROWS              the Markdown tables, from the rows

Each measurement appends one JSON row to the rows file; any failed request
(non-2xx, or a body that is not a result) fails the measurement.
"""

import argparse
import http.client
import json
import os
import resource
import socket
import subprocess
import sys
import threading
import time
import urllib.parse

VERSION = "2026-07-28"
HEADERS = {
    "Content-Type": "application/json",
    "Accept": "application/json, text/event-stream",
    "MCP-Protocol-Version": VERSION,
}
TASKS_CAPS = {"extensions": {"io.modelcontextprotocol/tasks": {}}}
ELICIT_CAPS = {"elicitation": {}}
# The single-use fixture tool: `destructive`, so a state opens once.
DELETE = "confirm_delete"
DELETE_ARGS = {"filename": "ledger.txt"}
DELETED = "Deleted ledger.txt"


def request_body(method: str, params: dict, caps: dict) -> str:
    params = dict(params)
    params["_meta"] = {
        "io.modelcontextprotocol/protocolVersion": VERSION,
        "io.modelcontextprotocol/clientCapabilities": caps,
    }
    return json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params},
                      separators=(",", ":"))


def greet_body() -> str:
    # Exactly the body the brief names (key order and all).
    return request_body("tools/call", {"name": "greet", "arguments": {"name": "bench"}}, {})


def split(url: str) -> tuple[str, int, str]:
    parts = urllib.parse.urlsplit(url)
    return parts.hostname, parts.port or 80, parts.path or "/"


def post(conn: http.client.HTTPConnection, path: str, method: str, name: str,
         body: str | bytes) -> tuple[int, dict | None, bytes]:
    headers = dict(HEADERS, **{"Mcp-Method": method, "Mcp-Name": name})
    conn.request("POST", path, body=body, headers=headers)
    response = conn.getresponse()
    raw = response.read()
    try:
        message = json.loads(raw)
    except ValueError:
        message = None
    return response.status, message, raw


# --- Redis (RESP over a socket: redis-cli need not be installed) -----------

class Resp:
    def __init__(self, url: str):
        parts = urllib.parse.urlsplit(url)
        self.sock = socket.create_connection((parts.hostname or "127.0.0.1", parts.port or 6379), 2)
        self.file = self.sock.makefile("rb")
        if parts.password:
            self.call(*(["AUTH", parts.username, parts.password] if parts.username else ["AUTH", parts.password]))
        db = (parts.path or "/").strip("/")
        if db:
            self.call("SELECT", db)

    def call(self, *args):
        out = [f"*{len(args)}\r\n".encode()]
        for arg in args:
            data = arg if isinstance(arg, bytes) else str(arg).encode()
            out.append(b"$%d\r\n%s\r\n" % (len(data), data))
        self.sock.sendall(b"".join(out))
        return self.read()

    def read(self):
        line = self.file.readline()
        kind, rest = line[:1], line[1:-2]
        if kind == b"+":
            return rest.decode()
        if kind == b"-":
            raise RuntimeError(rest.decode())
        if kind == b":":
            return int(rest)
        if kind == b"$":
            n = int(rest)
            if n < 0:
                return None
            data = self.file.read(n + 2)[:-2]
            return data
        if kind == b"*":
            n = int(rest)
            return None if n < 0 else [self.read() for _ in range(n)]
        raise RuntimeError(f"unexpected reply {line!r}")


def cmd_ping(args) -> int:
    try:
        return 0 if Resp(f"redis://{args.host}:{args.port}").call("PING") == "PONG" else 1
    except (OSError, RuntimeError):
        return 1


def cmd_redis_info(args) -> int:
    info = dict(line.split(":", 1) for line in Resp(args.url).call("INFO", "server").decode().splitlines()
                if ":" in line)
    pid = info.get("process_id", "").strip()
    # Only a Redis whose process this machine shows (not one in a container
    # of its own) has its CPU time measured.
    print(info.get("redis_version", "?").strip(), pid if pid and os.path.exists(f"/proc/{pid}/stat") else "")
    return 0


def cmd_redis_del(args) -> int:
    redis = Resp(args.url)
    cursor, deleted = "0", 0
    while True:
        cursor, keys = redis.call("SCAN", cursor, "MATCH", args.prefix + "*", "COUNT", 1000)
        cursor = cursor.decode()
        if keys:
            deleted += redis.call("DEL", *keys)
        if cursor == "0":
            break
    print(deleted)
    return 0


# --- Process CPU time, from /proc --------------------------------------------

TICK = os.sysconf("SC_CLK_TCK")


def descendants(pid: int) -> list[int]:
    """pid and every process below it (nginx's workers)."""
    parent = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
                parent[int(entry)] = int(fields[1])
            except OSError:
                pass
    found, todo = [], [pid]
    while todo:
        p = todo.pop()
        found.append(p)
        todo.extend(c for c, pp in parent.items() if pp == p)
    return found


def cpu_seconds(pids: list[int]) -> float:
    total = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])  # utime, stime
        except OSError:
            pass
    return total / TICK


class Cpu:
    """CPU seconds of named process groups: `server=1,2` `nginx=3` (with
    descendants) `redis=4`; with a Redis URL, also the commands Redis
    processed (every client's: INFO's `total_commands_processed`)."""

    def __init__(self, specs: list[str], redis: str | None = None):
        self.redis = redis
        self.groups = {}
        for spec in specs:
            name, _, pids = spec.partition("=")
            listed = [int(p) for p in pids.split(",") if p]
            if name == "nginx":
                listed = [d for p in listed for d in descendants(p)]
            self.groups[name] = listed

    def snapshot(self) -> dict[str, float]:
        seen = {name: cpu_seconds(pids) for name, pids in self.groups.items()}
        # The load generator: wrk (a child, once it has been waited for) or
        # this process's own threads.
        usage = [resource.getrusage(who) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)]
        seen["client"] = sum(u.ru_utime + u.ru_stime for u in usage)
        with open("/proc/stat") as f:
            ticks = [int(x) for x in f.readline().split()[1:]]
        # Everything but idle and iowait, on every core.
        seen["busy"] = (sum(ticks[:8]) - ticks[3] - ticks[4]) / TICK
        seen["wall"] = time.monotonic()
        if self.redis:
            info = Resp(self.redis).call("INFO", "stats").decode()
            seen["commands"] = next(int(line.split(":")[1]) for line in info.splitlines()
                                    if line.startswith("total_commands_processed:"))
        return seen

    @staticmethod
    def per_request(before: dict, after: dict, requests: int) -> dict[str, float]:
        """CPU µs per request by group, and Redis commands per request."""
        n = max(requests, 1)
        extra = ("commands", "busy", "wall")
        out = {name: round((after[name] - before[name]) * 1e6 / n, 1) for name in before if name not in extra}
        # Cores busy with anything else (other processes, and kernel time
        # charged to no process) while this ran.
        ours = sum(after[name] - before[name] for name in before if name not in extra)
        out["other_cores"] = round((after["busy"] - before["busy"] - ours) / (after["wall"] - before["wall"]), 2)
        if "commands" in before:
            # Less the INFO that took the first snapshot's count.
            out["redis_commands"] = round((after["commands"] - before["commands"] - 1) / n, 3)
        return out


def wait_quiet(cpu: Cpu, label: str) -> None:
    """Waits (BENCH_QUIET_WAIT seconds at most, default 60) until the rest
    of the machine uses less than BENCH_QUIET_CORES (default 0.3) of a core
    for a second: other people's builds skew a run on 2 cores."""
    limit = float(os.environ.get("BENCH_QUIET_WAIT", "60"))
    threshold = float(os.environ.get("BENCH_QUIET_CORES", "0.3"))
    waited, told = 0.0, False
    while True:
        before = cpu.snapshot()
        time.sleep(1)
        busy = Cpu.per_request(before, cpu.snapshot(), 1)["other_cores"]
        if busy < threshold:
            if told:
                print(f"    quiet after {waited:.0f} s", file=sys.stderr)
            return
        if waited >= limit:
            print(f"    warning: {label}: the rest of the machine still uses {busy:.2f} cores after "
                  f"{waited:.0f} s; measuring anyway", file=sys.stderr)
            return
        if not told:
            print(f"    waiting for a quiet machine (the rest uses {busy:.2f} cores)", file=sys.stderr)
            told = True
        waited += 1


# --- Readiness, the task ---------------------------------------------------------

def cmd_ready(args) -> int:
    host, port, path = split(args.url)
    deadline = time.monotonic() + args.timeout
    while True:
        try:
            conn = http.client.HTTPConnection(host, port, timeout=2)
            status, message, _ = post(conn, path, "tools/call", "greet", greet_body())
            conn.close()
            if status == 200 and message and "result" in message:
                return 0
        except OSError:
            pass
        if time.monotonic() > deadline:
            print(f"error: {args.url} did not answer tools/call greet within {args.timeout} s", file=sys.stderr)
            return 1
        time.sleep(0.1)


def cmd_task(args) -> int:
    host, port, path = split(args.url)
    conn = http.client.HTTPConnection(host, port, timeout=10)
    body = request_body("tools/call", {"name": "slow_compute",
                                       "arguments": {"seconds": args.seconds, "label": "bench"}}, TASKS_CAPS)
    status, message, raw = post(conn, path, "tools/call", "slow_compute", body)
    result = (message or {}).get("result") or {}
    if status != 200 or result.get("resultType") != "task" or not result.get("taskId"):
        print(f"error: slow_compute did not create a task: {status} {raw[:300]!r}", file=sys.stderr)
        return 1
    task = result["taskId"]
    # The poll wrk will repeat, checked once here.
    status, message, raw = post(conn, path, "tasks/get", task, tasks_get_body(task))
    result = (message or {}).get("result") or {}
    if status != 200 or result.get("taskId") != task or result.get("status") != "working":
        print(f"error: tasks/get {task}: {status} {raw[:300]!r}", file=sys.stderr)
        return 1
    print(task)
    return 0


def tasks_get_body(task: str) -> str:
    return request_body("tasks/get", {"taskId": task}, TASKS_CAPS)


# --- wrk ---------------------------------------------------------------------------

LUA = r"""-- Generated by benches/cluster/bench.py: one request, repeated.
wrk.method = "POST"
wrk.body = [==[%(body)s]==]
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Accept"] = "application/json, text/event-stream"
wrk.headers["MCP-Protocol-Version"] = "%(version)s"
wrk.headers["Mcp-Method"] = "%(method)s"
wrk.headers["Mcp-Name"] = "%(name)s"

local threads = {}
function setup(thread)
  table.insert(threads, thread)
end

function init(args)
  seen, bad = 0, 0
end

-- Counted as failed: any status but 2xx, and any 2xx whose body is not a
-- complete result (a JSON-RPC error also comes with 200).
function response(status, headers, body)
  seen = seen + 1
  if status < 200 or status > 299 or not string.find(body, '"resultType":"complete"', 1, true) then
    bad = bad + 1
    if bad <= 3 then
      io.stderr:write("failed response: " .. status .. " " .. string.sub(body, 1, 300) .. "\n")
    end
  end
end

function done(summary, latency, requests)
  local seen_all, bad_all = 0, 0
  for _, thread in ipairs(threads) do
    seen_all = seen_all + thread:get("seen")
    bad_all = bad_all + thread:get("bad")
  end
  local e = summary.errors
  io.write(string.format(
    'RESULT {"requests":%%d,"duration_us":%%d,"seen":%%d,"bad":%%d,' ..
    '"p50_us":%%d,"p99_us":%%d,"mean_us":%%.1f,"max_us":%%d,' ..
    '"errors":{"connect":%%d,"read":%%d,"write":%%d,"status":%%d,"timeout":%%d}}\n',
    summary.requests, summary.duration, seen_all, bad_all,
    latency:percentile(50), latency:percentile(99), latency.mean, latency.max,
    e.connect, e.read, e.write, e.status, e.timeout))
end
"""


def cmd_lua(args) -> int:
    if args.what == "greet":
        method, name, body = "tools/call", "greet", greet_body()
    else:
        method, name, body = "tasks/get", args.what, tasks_get_body(args.what)
    with open(args.out, "w") as f:
        f.write(LUA % {"body": body, "version": VERSION, "method": method, "name": name})
    return 0


def run_wrk(args, seconds: int) -> dict:
    command = ["wrk", f"-t{args.threads}", f"-c{args.connections}", f"-d{seconds}s",
               "--timeout", "5s", "-s", args.lua, args.url]
    done = subprocess.run(command, capture_output=True, text=True)
    line = next((l for l in done.stdout.splitlines() if l.startswith("RESULT ")), None)
    if done.returncode != 0 or line is None:
        sys.exit(f"error: wrk failed ({done.returncode}): {done.stdout}{done.stderr}")
    result = json.loads(line[len("RESULT "):])
    failed = result["bad"] + sum(result["errors"].values())
    if failed or result["requests"] == 0:
        sys.exit(f"error: {args.label}: {failed} of {result['requests']} requests failed "
                 f"({result['bad']} not a 2xx result, socket errors {result['errors']}):\n{done.stderr}")
    return result


def upstreams(log: str, start: int) -> tuple[dict, dict]:
    """Requests per instance in nginx's access log from byte `start`, and
    the count of each status."""
    counts, statuses = {}, {}
    with open(log) as f:
        f.seek(start)
        for line in f:
            upstream, _, status = line.strip().rpartition(" ")
            counts[upstream] = counts.get(upstream, 0) + 1
            statuses[status] = statuses.get(status, 0) + 1
    return counts, statuses


def wrk_once(args, cpu: Cpu) -> dict:
    warm = run_wrk(args, args.warmup)
    if args.access_log:
        time.sleep(1.2)  # nginx flushes its log buffer every second
        start = os.path.getsize(args.access_log)
    before = cpu.snapshot()
    result = run_wrk(args, args.seconds)
    after = cpu.snapshot()
    row = {
        "group": args.group, "label": args.label, "setup": args.setup, "state": args.state,
        "rps": result["requests"] * 1e6 / result["duration_us"],
        "p50_us": result["p50_us"], "p99_us": result["p99_us"], "mean_us": result["mean_us"],
        "requests": result["requests"], "failed": 0, "warmup_requests": warm["requests"],
        "cpu_us": Cpu.per_request(before, after, result["requests"]),
        "client": f"wrk, {args.threads} threads, {args.connections} connections",
    }
    if args.access_log:
        time.sleep(1.2)
        counts, statuses = upstreams(args.access_log, start)
        # 499: wrk closed the connection of a request still in flight when
        # its time was up (at most one a connection); wrk counts none of them.
        cut = statuses.pop("499", 0)
        statuses.pop("200", None)
        if statuses or cut > args.connections:
            sys.exit(f"error: {args.label}: nginx logged answers that were not 200: {statuses}, 499: {cut}")
        row["upstreams"] = counts
        row["cut_off"] = cut
    print(f"    {args.label} [{args.setup}, {args.state}]: {row['rps']:.0f} req/s, "
          f"p50 {row['p50_us']} us, p99 {row['p99_us']} us, {row['requests']} requests, none failed; "
          f"the rest of the machine used {row['cpu_us']['other_cores']:.2f} cores", file=sys.stderr)
    return row


def quietest(args, cpu: Cpu, once) -> int:
    """Measures until the rest of the machine stayed under
    BENCH_QUIET_CORES during the timed part (BENCH_ATTEMPTS times at
    most, default 3), and keeps the quietest measurement."""
    attempts = int(os.environ.get("BENCH_ATTEMPTS", "3"))
    threshold = float(os.environ.get("BENCH_QUIET_CORES", "0.3"))
    best = None
    for attempt in range(1, attempts + 1):
        wait_quiet(cpu, args.label)
        row = once()
        row["attempt"] = attempt
        if best is None or row["cpu_us"]["other_cores"] < best["cpu_us"]["other_cores"]:
            best = row
        if row["cpu_us"]["other_cores"] < threshold:
            break
        if attempt < attempts:
            print("    measuring again: something else ran meanwhile", file=sys.stderr)
    with open(args.rows, "a") as f:
        f.write(json.dumps(best) + "\n")
    return 0


def cmd_wrk(args) -> int:
    cpu = Cpu(args.cpu, args.redis)
    return quietest(args, cpu, lambda: wrk_once(args, cpu))


# --- MRTR round 2 with fresh states ------------------------------------------------

def round_one(conn, path) -> bytes:
    """Round 1 of confirm_delete; returns the body of its round 2."""
    status, message, raw = post(conn, path, "tools/call", DELETE,
                                request_body("tools/call", {"name": DELETE, "arguments": DELETE_ARGS}, ELICIT_CAPS))
    result = (message or {}).get("result") or {}
    if status != 200 or result.get("resultType") != "input_required" or not result.get("requestState"):
        raise RuntimeError(f"round 1: {status} {raw[:300]!r}")
    params = {
        "name": DELETE,
        "arguments": DELETE_ARGS,
        "inputResponses": {key: {"action": "accept", "content": {"confirm": True}}
                           for key in result["inputRequests"]},
        "requestState": result["requestState"],
    }
    return request_body("tools/call", params, ELICIT_CAPS).encode()


def round_two(conn, path, body: bytes) -> None:
    status, message, raw = post(conn, path, "tools/call", DELETE, body)
    result = (message or {}).get("result") or {}
    content = result.get("content") or [{}]
    if status != 200 or result.get("resultType") != "complete" or content[0].get("text") != DELETED:
        raise RuntimeError(f"round 2: {status} {raw[:300]!r}")


def cmd_mrtr(args) -> int:
    host, port, path = split(args.url)
    conns: list[http.client.HTTPConnection] = []
    errors: list[str] = []

    def in_threads(work):
        threads = [threading.Thread(target=work, args=(i,)) for i in range(args.threads)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        if errors:
            sys.exit(f"error: {args.label}: {len(errors)} requests failed, the first: {errors[0]}")

    cpu = Cpu(args.cpu, args.redis)
    return quietest(args, cpu, lambda: mrtr_once(args, cpu, conns, path, in_threads, errors))


def mrtr_once(args, cpu: Cpu, conns: list, path: str, in_threads, errors: list) -> dict:
    # New connections each attempt: the server closes idle ones while
    # wait_quiet waits.
    host, port, _ = split(args.url)
    for conn in conns:
        conn.close()
    conns[:] = [http.client.HTTPConnection(host, port, timeout=10) for _ in range(args.threads)]
    # Warm-up: whole exchanges (round 1, then its round 2) for a while.
    def warm(i):
        end = time.monotonic() + args.warmup
        try:
            while time.monotonic() < end:
                round_two(conns[i], path, round_one(conns[i], path))
        except (OSError, RuntimeError) as e:
            errors.append(str(e))
    in_threads(warm)

    # Round 1 for every request to time: a fresh state each.
    share = [args.count // args.threads + (i < args.count % args.threads) for i in range(args.threads)]
    bodies: list[list[bytes]] = [[] for _ in range(args.threads)]

    def fetch(i):
        try:
            bodies[i] = [round_one(conns[i], path) for _ in range(share[i])]
        except (OSError, RuntimeError) as e:
            errors.append(str(e))
    in_threads(fetch)

    # Round 2, timed: each state used once.
    latencies: list[list[float]] = [[] for _ in range(args.threads)]
    gate = threading.Barrier(args.threads + 1)

    def send(i):
        gate.wait()
        mine = latencies[i]
        clock = time.perf_counter
        try:
            for body in bodies[i]:
                t0 = clock()
                round_two(conns[i], path, body)
                mine.append(clock() - t0)
        except (OSError, RuntimeError) as e:
            errors.append(str(e))

    threads = [threading.Thread(target=send, args=(i,)) for i in range(args.threads)]
    for t in threads:
        t.start()
    before = cpu.snapshot()
    gate.wait()
    t0 = time.perf_counter()
    for t in threads:
        t.join()
    elapsed = time.perf_counter() - t0
    after = cpu.snapshot()
    if errors:
        sys.exit(f"error: {args.label}: {len(errors)} round-2 requests failed, the first: {errors[0]}")
    # What was measured is the replay check: a used state is refused
    # (-32602, over HTTP 400).
    status, message, raw = post(conns[0], path, "tools/call", DELETE, bodies[0][0])
    if ((message or {}).get("error") or {}).get("code") != -32602:
        sys.exit(f"error: {args.label}: a replayed round 2 was not refused: {status} {raw[:300]!r}")
    every = sorted(x for mine in latencies for x in mine)
    n = len(every)
    row = {
        "group": args.group, "label": args.label, "setup": args.setup, "state": args.state,
        "rps": n / elapsed,
        "p50_us": round(every[n // 2] * 1e6), "p99_us": round(every[min(n - 1, n * 99 // 100)] * 1e6),
        "mean_us": round(sum(every) / n * 1e6, 1),
        "requests": n, "failed": 0, "seconds": round(elapsed, 2),
        "cpu_us": Cpu.per_request(before, after, n),
        "client": f"Python http.client, {args.threads} thread{'s' if args.threads != 1 else ''}, keep-alive",
    }
    print(f"    {args.label} [{args.setup}, {args.state}]: {row['rps']:.0f} req/s, mean {row['mean_us']} us, "
          f"{n} round-2 requests in {elapsed:.1f} s, each with its own state, none failed; "
          f"the rest of the machine used {row['cpu_us']['other_cores']:.2f} cores", file=sys.stderr)
    return row


# --- The tables ------------------------------------------------------------------------

def cpu_cell(row: dict) -> str:
    cpu = row["cpu_us"]
    return " / ".join(f"{cpu[k]:.1f}" if k in cpu else "-" for k in ("server", "nginx", "redis"))


def commands(row: dict) -> str:
    n = row["cpu_us"].get("redis_commands")
    return "-" if n is None else f"{n:.2f}"


def other(row: dict) -> str:
    return f"{row['cpu_us']['other_cores']:.2f}"


def lat(row: dict) -> str:
    return f"{row['p50_us']} / {row['p99_us']}"


def cmd_table(args) -> int:
    rows = [json.loads(line) for line in open(args.rows) if line.strip()]
    out = []
    cluster = [r for r in rows if r["group"] == "cluster"]
    if cluster:
        base = next((r for r in cluster if r["state"] == "redis"), cluster[0])["rps"]
        out += ["| `tools/call greet`, `--rate-limit 0` | state | req/s | vs 1 instance directly, Redis | p50 / p99 (µs) "
                "| CPU µs / request: instances / nginx / Redis | Redis commands / request | rest of the machine (cores) "
                "| requests (failed) |",
                "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
        for r in cluster:
            state = "Redis" if r["state"] == "redis" else "memory (no `MCP_REDIS_URL`)"
            out.append(f"| {r['setup']} | {state} | {r['rps']:.0f} | {r['rps'] / base:.2f}x | {lat(r)} "
                       f"| {cpu_cell(r)} | {commands(r)} | {other(r)} | {r['requests']} (0) |")
        for r in cluster:
            if len(r.get("upstreams", {})) > 1:
                total = sum(r["upstreams"].values())
                shares = ", ".join(f"{100 * n / total:.1f} %" for _, n in sorted(r["upstreams"].items()))
                out += ["", f"{r['setup']}: nginx's access log gives the instances {shares} of the timed "
                            f"run's {total} requests, all answered 200 but the {r.get('cut_off', 0)} still in "
                            f"flight when wrk stopped (logged 499, not counted by wrk)."]
        out.append("")
    features = [r for r in rows if r["group"] != "cluster"]
    if features:
        out += ["| feature (1 instance, directly) | client | without Redis: req/s, p50 / p99 (µs) "
                "| with Redis: req/s, p50 / p99 (µs) | req/s with / without | instance CPU µs / request, "
                "without -> with | with Redis: Redis CPU µs, commands / request | rest of the machine (cores), "
                "without / with | requests (failed) |",
                "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
        keys = []
        for r in features:
            if (r["label"], r["client"]) not in keys:
                keys.append((r["label"], r["client"]))
        for label, client in keys:
            pair = {r["state"]: r for r in features if (r["label"], r["client"]) == (label, client)}
            without, with_ = pair.get("memory"), pair.get("redis")
            if not (without and with_):
                continue
            if "Python" in client:
                cells = [f"{r['rps']:.0f}, mean {r['mean_us']:.0f} ({lat(r)})" for r in (without, with_)]
            else:
                cells = [f"{r['rps']:.0f}, {lat(r)}" for r in (without, with_)]
            redis = with_["cpu_us"].get("redis")
            out.append(f"| {label} | {client} | {cells[0]} | {cells[1]} | {with_['rps'] / without['rps']:.2f}x "
                       f"| {without['cpu_us']['server']:.1f} -> {with_['cpu_us']['server']:.1f} "
                       f"| {'-' if redis is None else f'{redis:.1f}'}, {commands(with_)} "
                       f"| {other(without)} / {other(with_)} | {without['requests']} + {with_['requests']} (0) |")
        out.append("")
    print("\n".join(out))
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("ping")
    p.add_argument("host")
    p.add_argument("port", type=int)
    p.set_defaults(run=cmd_ping)
    p = sub.add_parser("redis-info")
    p.add_argument("url")
    p.set_defaults(run=cmd_redis_info)
    p = sub.add_parser("redis-del")
    p.add_argument("url")
    p.add_argument("prefix")
    p.set_defaults(run=cmd_redis_del)
    p = sub.add_parser("ready")
    p.add_argument("url")
    p.add_argument("--timeout", type=float, default=15)
    p.set_defaults(run=cmd_ready)
    p = sub.add_parser("lua", help="WHAT: greet, or a task id for tasks/get")
    p.add_argument("out")
    p.add_argument("what")
    p.set_defaults(run=cmd_lua)
    p = sub.add_parser("task")
    p.add_argument("url")
    p.add_argument("--seconds", type=int, default=600)
    p.set_defaults(run=cmd_task)
    for name, run in (("wrk", cmd_wrk), ("mrtr", cmd_mrtr)):
        p = sub.add_parser(name)
        p.add_argument("--rows", required=True)
        p.add_argument("--group", required=True)
        p.add_argument("--label", required=True)
        p.add_argument("--setup", required=True)
        p.add_argument("--state", required=True, help="redis or memory")
        p.add_argument("--url", required=True)
        p.add_argument("--cpu", action="append", default=[], help="NAME=PID[,PID...]")
        p.add_argument("--redis", help="count the commands this Redis processes")
        p.add_argument("--warmup", type=int, default=2)
        p.add_argument("--threads", type=int, default=2)
        p.set_defaults(run=run)
    wrk = sub.choices["wrk"]
    wrk.add_argument("--lua", required=True)
    wrk.add_argument("--seconds", type=int, default=10)
    wrk.add_argument("--connections", type=int, default=32)
    wrk.add_argument("--access-log")
    sub.choices["mrtr"].add_argument("--count", type=int, default=20000)
    p = sub.add_parser("table")
    p.add_argument("rows")
    p.set_defaults(run=cmd_table)
    args = parser.parse_args()
    return args.run(args)


if __name__ == "__main__":
    sys.exit(main())

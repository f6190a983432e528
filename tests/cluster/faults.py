#!/usr/bin/env python3
"""Fault injection with counted outcomes, the client side (stdlib only).

tests/cluster/run.sh kills and restarts the processes; this script is the
client that measures what that does. Each subcommand appends its checks to
the harness's checks file (--checks, one JSON line each) and prints them.
Times of what run.sh did come from an events file (`NAME EPOCH_SECONDS`
lines, written with bash's $EPOCHREALTIME).

  load-kill     greet calls from N threads through nginx while run.sh kills
                an instance (kill -9) and restarts it: failures only among
                the calls in flight at the kill, none once the restarted
                instance is back (+2 s), and it serves again.
  mrtr-start    the first round of two MRTR tools on one instance ...
  mrtr-finish   ... and the later rounds through nginx once it is dead.
  task-start    a long task (slow_compute, 120 s) on one instance ...
  task-orphan   ... polled through nginx once it is dead: `failed` with a
                JSON-RPC error within the lease (+ slack), the same on
                every other instance.
  task-same     ... and the same on the restarted instance.
  redis-restart plain calls and Redis-backed operations on two instances of
                a dedicated Redis that run.sh restarts (empty): plain calls
                never fail, the rest recovers within 5 s, and a single-use
                requestState used before the restart is not accepted again.
  rate-limit    one rate budget for two instances sharing a Redis.
"""

import argparse
import json
import re
import sys
import threading
import time
from collections import Counter
from pathlib import Path

from mcpwire import ELICIT_CAPS, TASKS_CAPS, Checks, Endpoint, Listener, call, now


def read_events(path: str) -> dict[str, float]:
    events = {}
    for line in Path(path).read_text().splitlines():
        if line.strip():
            name, stamp = line.split()
            events[name] = float(stamp)
    return events


def wait_for_events(path: str, names: list[str], timeout: float) -> dict[str, float]:
    deadline = now() + timeout
    while True:
        events = read_events(path) if Path(path).exists() else {}
        if all(name in events for name in names) or now() > deadline:
            return events
        time.sleep(0.1)


def greet_loop(endpoints: list[Endpoint], stop: threading.Event, records: list, tag: str):
    """Calls greet until `stop`, round the endpoints; records
    (started, ended, ok, detail, call id) of each call."""
    n = 0
    while not stop.is_set():
        n += 1
        who = f"{tag}-{n}"
        endpoint = endpoints[n % len(endpoints)]
        started = now()
        reply = endpoint.call("tools/call", {"name": "greet", "arguments": {"name": who}},
                              extra_headers={"X-Call-Id": who})
        ended = now()
        ok = reply.ok and reply.text() == f"Hello, {who}!"
        records.append((started, ended, ok, None if ok else reply.describe(), who))


def run_load(endpoints_of, threads: int, seconds: float) -> tuple[list, float, float]:
    stop = threading.Event()
    records: list = []
    workers = [threading.Thread(target=greet_loop, args=(endpoints_of(i), stop, records, f"t{i}"))
               for i in range(threads)]
    began = now()
    for worker in workers:
        worker.start()
    time.sleep(seconds)
    stop.set()
    for worker in workers:
        worker.join()
    return records, began, now()


# `$msec ... upstream=ADDR[, ADDR...] upstream_status=... call=ID`
# (nginx.conf.template)
ACCESS = re.compile(r"^(?P<msec>\d+\.\d+) .*? upstream=(?P<upstream>.*?) upstream_status=(?P<status>\S.*?) "
                    r"mcp_method=.* call=(?P<call>\S*)$")


def served_by(access_log: str) -> list[tuple[float, str, str, str]]:
    """(time, the instance that answered, its status, the client's call id)
    per access-log line."""
    rows = []
    for line in Path(access_log).read_text().splitlines():
        match = ACCESS.match(line)
        if match:
            # Tried in turn: the last address and status are the answer's.
            upstream = match["upstream"].split(",")[-1].strip()
            status = match["status"].split(",")[-1].strip()
            rows.append((float(match["msec"]), upstream, status, match["call"]))
    return rows


def load_kill(args, checks: Checks) -> None:
    endpoint_for = lambda i: [Endpoint(args.url)]  # noqa: E731 - one keep-alive connection per thread
    records, began, ended = run_load(endpoint_for, args.threads, args.duration)
    events = read_events(args.events)
    kill, killed, ready = events.get("kill"), events.get("killed"), events.get("ready")
    if kill is None or killed is None or ready is None:
        checks.record("kill -9 under load: failures bounded", False, f"run.sh's events are missing: {events}")
        return
    settled = ready + 2
    # The process died between `kill` (just before kill -9) and `killed`
    # (once reaped): a call in flight on it at its death overlapped that.
    before = [r for r in records if r[1] < kill]
    in_flight = [r for r in records if r[0] <= killed and r[1] >= kill]
    outage = [r for r in records if killed < r[0] < settled]
    after = [r for r in records if r[0] >= settled]
    fails = lambda rs: [r for r in rs if not r[2]]  # noqa: E731
    total = len(records)
    print(f"  load: {total} greet calls from {args.threads} threads in {ended - began:.1f} s "
          f"({total / (ended - began):.0f}/s); kill -9 at {kill - began:.2f} s (reaped "
          f"{(killed - kill) * 1000:.0f} ms later), restarted instance "
          f"answered discover at {ready - began:.1f} s")
    for name, rows in (("before the kill", before), ("in flight at the kill", in_flight),
                       ("started after the kill, before ready + 2 s", outage), ("ready + 2 s -> end", after)):
        print(f"    {name:<44} {len(rows):>6} calls, {len(fails(rows)):>3} failed")
    kinds = Counter(r[3] for r in records if not r[2])
    for kind, count in kinds.most_common(5):
        print(f"    failure x{count}: {kind}")
    bounded = len(fails(in_flight)) + len(fails(outage))
    bound = min(len(in_flight), args.threads)
    checks.record("kill -9 under load: no failure before the kill", not fails(before) and len(before) > 0,
                  f"{len(before)} calls, {len(fails(before))} failed")
    checks.record("kill -9 under load: failures <= calls in flight at the kill", bounded <= bound,
                  f"{bounded} failed between the kill and ready + 2 s ({len(fails(in_flight))} of those "
                  f"in flight at the kill, {len(fails(outage))} started after it); {len(in_flight)} calls "
                  f"were in flight at the kill ({args.threads} threads)")
    checks.record("kill -9 under load: zero failures from ready + 2 s", not fails(after) and len(after) > 0,
                  f"{len(after)} calls, {len(fails(after))} failed")
    # Through nginx: all three served before the kill, and the restarted
    # one serves again.
    rows = served_by(args.access_log)
    check_failures_on_killed(checks, rows, fails(records), args.killed, (began, ended + 1))
    spread = Counter(u for t, u, _, _ in rows if began <= t < kill)
    back = Counter(u for t, u, s, _ in rows if t >= settled and s == "200")
    checks.record("kill -9 under load: round-robin reaches every instance, the restarted one again",
                  len(spread) == 3 and back[args.killed] > 0,
                  f"before the kill {dict(spread)}; after ready + 2 s the restarted {args.killed} "
                  f"answered {back[args.killed]} of {sum(back.values())}")


def check_failures_on_killed(checks: Checks, rows, failed, killed: str, window) -> None:
    """Each call the clients saw fail was answered (or cut off) by the
    killed instance, found by its call id in nginx's log; and each non-200
    answer in the load's window was such a failed call. A call cut off
    after its headers logs 200 upstream, so statuses alone do not match."""
    by_call = {call: upstream for _, upstream, _, call in rows}
    failed_ids = {r[4] for r in failed}
    where = Counter(by_call.get(call, "not in the log") for call in failed_ids)
    stray = [(call, upstream, status) for t, upstream, status, call in rows
             if window[0] <= t <= window[1] and status != "200" and call not in failed_ids]
    checks.record("kill -9 under load: every failure was on the killed instance",
                  set(where) <= {killed} and not stray,
                  f"failed calls by the instance nginx sent them to: {dict(where)}; "
                  f"non-200 answers to calls the clients saw succeed: {stray[:5]}")


ELICIT_TOOL = "test_input_required_result_elicitation"
ROUNDS_TOOL = "test_input_required_result_multi_round"


def accept(result: dict, content: dict) -> dict:
    """The retry's params answering every input request of an
    `input_required` result with `content`."""
    return {
        "inputResponses": {key: {"action": "accept", "content": content} for key in result["inputRequests"]},
        "requestState": result["requestState"],
    }


def mrtr_start(args, checks: Checks) -> None:
    endpoint = Endpoint(args.url)
    first = endpoint.tool(ELICIT_TOOL, {}, ELICIT_CAPS)
    rounds = endpoint.tool(ROUNDS_TOOL, {}, ELICIT_CAPS)
    fine = all(r.result.get("resultType") == "input_required" and r.result.get("requestState")
               for r in (first, rounds))
    checks.record("kill between MRTR rounds: first rounds on the instance to kill", fine,
                  f"{ELICIT_TOOL}: {list(first.result.get('inputRequests', {})) or first.describe()}; "
                  f"{ROUNDS_TOOL}: {list(rounds.result.get('inputRequests', {})) or rounds.describe()}")
    if fine:
        Path(args.out).write_text(json.dumps({"elicit": first.result, "rounds": rounds.result}))


def mrtr_finish(args, checks: Checks) -> None:
    if not Path(args.state).exists():
        checks.record("kill between MRTR rounds: answered through nginx", False, "no first rounds (see above)")
        return
    saved = json.loads(Path(args.state).read_text())
    endpoint = Endpoint(args.url)
    done = endpoint.tool(ELICIT_TOOL, {}, ELICIT_CAPS, **accept(saved["elicit"], {"name": "Ada"}))
    checks.record("kill between MRTR rounds: answered through nginx", done.text() == "Hello, Ada!",
                  f"{ELICIT_TOOL} -> {done.text()!r}" + ("" if done.ok else f" ({done.describe()})"))
    second = endpoint.tool(ROUNDS_TOOL, {}, ELICIT_CAPS, **accept(saved["rounds"], {"name": "Ada"}))
    if second.result.get("resultType") != "input_required":
        checks.record("kill between MRTR rounds: three rounds, two instances", False,
                      f"round 2: {second.describe()}")
        return
    third = endpoint.tool(ROUNDS_TOOL, {}, ELICIT_CAPS, **accept(second.result, {"color": "teal"}))
    checks.record("kill between MRTR rounds: three rounds, two instances", third.text() == "Ada likes teal.",
                  f"round 2 asked {list(second.result['inputRequests'])}, round 3 -> {third.text()!r}"
                  + ("" if third.ok else f" ({third.describe()})"))


def task_get(url: str, task_id: str):
    return call(url, "tasks/get", {"taskId": task_id}, TASKS_CAPS)


def task_start(args, checks: Checks) -> None:
    created = Endpoint(args.url).tool("slow_compute", {"seconds": 120, "label": "orphan"}, TASKS_CAPS)
    task_id = created.result.get("taskId")
    status = task_get(args.url, task_id).result.get("status") if task_id else None
    fine = created.result.get("resultType") == "task" and status == "working"
    checks.record("kill the task's instance: a task running there", fine,
                  f"taskId {task_id}, status {status}" + ("" if task_id else f" ({created.describe()})"))
    if fine:
        Path(args.out).write_text(json.dumps({"taskId": task_id}))


def terminal(reply) -> tuple[str | None, dict | None]:
    return reply.result.get("status"), reply.result.get("error")


def task_orphan(args, checks: Checks) -> None:
    if not Path(args.task).exists():
        checks.record("kill the task's instance: failed within the lease", False, "no task (see above)")
        return
    saved = json.loads(Path(args.task).read_text())
    task_id = saved["taskId"]
    kill = read_events(args.events)["kill"]
    seen = Counter()
    status, error, last = None, None, None
    while now() - kill < args.limit + 5:
        last = task_get(args.via, task_id)
        status, error = terminal(last)
        seen[status or last.describe()] += 1
        if status not in ("working", "input_required"):
            break
        time.sleep(0.5)
    took = now() - kill
    fine = status == "failed" and isinstance(error, dict) and "code" in error and "message" in error
    checks.record("kill the task's instance: failed within the lease", fine and took <= args.limit,
                  f"{status} after {took:.1f} s (limit {args.limit:.0f} s), error {json.dumps(error)}; "
                  f"polls through nginx: {dict(seen)}")
    saved["final"] = {"status": status, "error": error}
    Path(args.task).write_text(json.dumps(saved))
    others = {url: terminal(task_get(url, task_id)) for url in args.others}
    same = all(v == (status, error) for v in others.values())
    checks.record("kill the task's instance: every other instance says the same", fine and same,
                  "; ".join(f"{url}: {s} {json.dumps(e)}" for url, (s, e) in others.items()))


def task_same(args, checks: Checks) -> None:
    saved = json.loads(Path(args.task).read_text()) if Path(args.task).exists() else {}
    final = saved.get("final")
    if not final:
        checks.record("kill the task's instance: the restarted instance says the same", False, "no verdict above")
        return
    status, error = terminal(task_get(args.url, saved["taskId"]))
    checks.record("kill the task's instance: the restarted instance says the same",
                  (status, error) == (final["status"], final["error"]) and status == "failed",
                  f"{status} {json.dumps(error)}")


# Destructive (a task tool, run synchronously without the Tasks
# extension): its requestState is single use, in Redis's replay guard.
DELETE = "confirm_delete"
DELETE_ARGS = {"filename": "ledger.txt"}


def single_use_round(x: Endpoint, y: Endpoint) -> tuple[dict | None, str]:
    """Round 1 on x, round 2 on y; returns round 2's params (to replay)."""
    first = x.tool(DELETE, DELETE_ARGS, ELICIT_CAPS)
    if first.result.get("resultType") != "input_required":
        return None, f"round 1: {first.describe()}"
    answers = accept(first.result, {"confirm": True})
    done = y.tool(DELETE, DELETE_ARGS, ELICIT_CAPS, **answers)
    if done.text() != "Deleted ledger.txt":
        return None, f"round 2: {done.describe()}"
    return answers, "round 2 -> 'Deleted ledger.txt'"


def replay(endpoint: Endpoint, answers: dict, patience: float = 5) -> tuple[str, object]:
    """Sends round 2 again: 'refused' (with the JSON-RPC error code),
    'accepted' (a result: the tool ran again), 'asked again' (a new round),
    or 'unknown' (no verdict: the instance could only say it cannot check
    now, -31001, for `patience` seconds, or the call did not get through)."""
    deadline = now() + patience
    while True:
        reply = endpoint.tool(DELETE, DELETE_ARGS, ELICIT_CAPS, **answers)
        if reply.ok:
            kind = reply.result.get("resultType")
            return ("asked again", kind) if kind == "input_required" else ("accepted", reply.text())
        code = (reply.error or {}).get("code")
        if code is not None and code != -31001:
            return "refused", code
        if now() > deadline:
            return "unknown", reply.describe()
        time.sleep(0.2)


def probe_tasks(a: Endpoint, b: Endpoint) -> tuple[bool, str]:
    created = a.tool("slow_compute", {"seconds": 1, "label": "probe"}, TASKS_CAPS)
    task_id = created.result.get("taskId")
    if created.result.get("resultType") != "task" or not task_id:
        return False, created.describe()
    got = b.call("tasks/get", {"taskId": task_id}, TASKS_CAPS)
    if got.result.get("taskId") != task_id:
        return False, f"created on one, tasks/get on the other: {got.describe()}"
    return True, "ok"


def probe_listen(url: str) -> tuple[bool, str]:
    listener = Listener(url, {"toolsListChanged": True}, ident="probe", timeout=1)
    try:
        if listener.acknowledged(1):
            return True, "ok"
        return False, listener.refusal.describe() if listener.refusal else "no acknowledgement within 1 s"
    finally:
        listener.close()


def prober(x: str, y: str, stop: threading.Event, rows: list):
    """Every 200 ms: a task created on one instance and read on the other,
    and a listener opened (alternating which instance)."""
    pair = [(Endpoint(x, 2), Endpoint(y, 2)), (Endpoint(y, 2), Endpoint(x, 2))]
    n = 0
    while not stop.is_set():
        a, b = pair[n % 2]
        at = now()
        tasks_ok, tasks_said = probe_tasks(a, b)
        listen_ok, listen_said = probe_listen([x, y][n % 2])
        rows.append((at, tasks_ok, tasks_said, listen_ok, listen_said))
        n += 1
        time.sleep(max(0, 0.2 - (now() - at)))


def fan_out(listen_url: str, announcer: Endpoint) -> tuple[bool, str]:
    """A tools listener on `listen_url` hears a change `announcer` makes
    within 3 s."""
    listener = Listener(listen_url, {"toolsListChanged": True}, ident="after")
    try:
        if not listener.acknowledged():
            return False, "listener not opened: " + (listener.refusal.describe() if listener.refusal else "no ack")
        started = now()
        announced = announcer.tool("test_trigger_tool_change", {})
        if not announced.ok:
            return False, f"announcing failed: {announced.describe()}"
        got = listener.wait_for("notifications/tools/list_changed", 3)
        return (True, f"heard after {got[0] - started:.3f} s") if got else (False, "not heard within 3 s")
    finally:
        listener.close()


def recovery(rows: list, index: int, down: float, up: float) -> tuple[int, float | None, int]:
    """Failures seen during the outage, the first success after Redis came
    back (seconds after `up`), and failures after that first success."""
    during = sum(1 for r in rows if down <= r[0] <= up and not r[index])
    first = next((r[0] for r in rows if r[0] >= up and r[index]), None)
    later = sum(1 for r in rows if first is not None and r[0] > first and not r[index])
    return during, (first - up if first is not None else None), later


def redis_restart(args, checks: Checks) -> None:
    x_url, y_url = args.instances
    x, y = Endpoint(x_url), Endpoint(y_url)
    answers, said = single_use_round(x, y)
    before = [replay(e, answers) for e in (x, y)] if answers else []
    checks.record("Redis restart: a single-use state is used once (before the restart)",
                  answers is not None and all(v == "refused" for v, _ in before),
                  f"{said}; replays on both instances: {before}")
    bus = Listener(x_url, {"toolsListChanged": True}, ident="bus-watch")
    bus_open = bus.acknowledged()

    stop = threading.Event()
    probes: list = []
    probe_thread = threading.Thread(target=prober, args=(x_url, y_url, stop, probes))
    Path(args.marker).write_text(f"{now()}\n")  # run.sh starts its clock now
    probe_thread.start()
    records, began, ended = run_load(lambda i: [Endpoint(x_url), Endpoint(y_url)], args.threads, args.duration)
    stop.set()
    probe_thread.join()
    events = wait_for_events(args.events, ["down", "up"], 10)
    down, up = events.get("down"), events.get("up")
    if down is None or up is None:
        checks.record("Redis restart: plain calls never fail", False, f"run.sh's events are missing: {events}")
        return

    failed = [r for r in records if not r[2]]
    print(f"  load: {len(records)} greet calls in {ended - began:.1f} s; Redis killed at "
          f"{down - began:.1f} s, answering again at {up - began:.1f} s")
    for kind, count in Counter(r[3] for r in failed).most_common(5):
        print(f"    failure x{count}: {kind}")
    checks.record("Redis restart: plain calls never fail", not failed and len(records) > 0,
                  f"{len(records)} greet calls on 2 instances, {len(failed)} failed "
                  f"(Redis down {up - down:.1f} s)")

    # The open listener ends when the bus drops (clients listen anew).
    told = None
    deadline = down + 5
    while (got := bus.next(deadline - now())) is not None:
        message = got[1]
        if message.get("method") == "notifications/cancelled":
            reason = message.get("params", {}).get("reason")
            told = f"notifications/cancelled ({reason!r}) {got[0] - down:.2f} s after the kill"
            break
        if "id" in message:
            told = f"the listen request's response {got[0] - down:.2f} s after the kill"
            break
    if told is None and bus.ended.is_set():
        told = "the stream closed without a message"
    bus.close()
    checks.record("Redis restart: an open listener is told its stream ended", bus_open and told is not None,
                  f"opened={bus_open}; then {told or 'nothing within 5 s of the kill'}")

    for index, name in ((1, "tasks (created on one, read on the other)"), (3, "subscriptions/listen")):
        during, took, later = recovery(probes, index, down, up)
        reasons = Counter(r[index + 1] for r in probes if down <= r[0] <= up and not r[index])
        checks.record(f"Redis restart: {name} recover within 5 s",
                      during > 0 and took is not None and took <= 5 and later == 0,
                      f"{during} probe(s) refused while down ({', '.join(reasons)}); "
                      + (f"first success {took:.2f} s after Redis answered, {later} failure(s) after it"
                         if took is not None else "never succeeded again"))

    # Fan-out across the two instances works again, both ways.
    heard = [fan_out(x_url, y), fan_out(y_url, x)]
    checks.record("Redis restart: changes fan out across instances again",
                  all(ok for ok, _ in heard),
                  f"announced on the second, on the first: {heard[0][1]}; the other way: {heard[1][1]}")

    # The state used before the restart: Redis forgot its nonce.
    if answers:
        after = {url: replay(e, answers) for url, e in ((x_url, x), (y_url, y))}
        checks.record("Redis restart: the used single-use state is refused after Redis lost its memory",
                      all(v == "refused" for v, _ in after.values()),
                      "; ".join(f"{url}: {v} ({said!r})" for url, (v, said) in after.items()))
    else:
        checks.record("Redis restart: the used single-use state is refused after Redis lost its memory",
                      False, "no single-use round to replay (see above)")


def rate_limit(args, checks: Checks) -> None:
    endpoints = [Endpoint(url) for url in args.instances]
    verdicts = []
    started = now()
    for n in range(args.calls):
        reply = endpoints[n % 2].tool("greet", {"name": f"r{n}"})
        verdicts.append((n % 2, reply.status, reply.ok))
    elapsed = now() - started
    accepted = sum(1 for _, _, ok in verdicts if ok)
    limited = Counter(i for i, status, _ in verdicts if status == 429)
    burst = 2 * args.rate
    allowed = burst + args.rate * elapsed + 1
    checks.record("rate limit: one budget for all instances",
                  0 < accepted <= allowed and len(limited) == 2 and accepted + sum(limited.values()) == args.calls,
                  f"{args.calls} calls alternating over 2 instances in {elapsed:.2f} s: {accepted} accepted "
                  f"(one shared budget allows <= {allowed:.0f}; two would allow {2 * burst}+), "
                  f"429 from instance 1: {limited[0]}, from instance 2: {limited[1]}")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--checks")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("load-kill")
    p.add_argument("--url", required=True)
    p.add_argument("--threads", type=int, default=8)
    p.add_argument("--duration", type=float, default=60)
    p.add_argument("--events", required=True)
    p.add_argument("--access-log", required=True)
    p.add_argument("--killed", required=True, help="the killed instance's HOST:PORT")
    p = sub.add_parser("mrtr-start")
    p.add_argument("--url", required=True)
    p.add_argument("--out", required=True)
    p = sub.add_parser("mrtr-finish")
    p.add_argument("--url", required=True)
    p.add_argument("--state", required=True)
    p = sub.add_parser("task-start")
    p.add_argument("--url", required=True)
    p.add_argument("--out", required=True)
    p = sub.add_parser("task-orphan")
    p.add_argument("--via", required=True)
    p.add_argument("--others", nargs="+", required=True)
    p.add_argument("--task", required=True)
    p.add_argument("--events", required=True)
    p.add_argument("--limit", type=float, default=45)
    p = sub.add_parser("task-same")
    p.add_argument("--url", required=True)
    p.add_argument("--task", required=True)
    p = sub.add_parser("redis-restart")
    p.add_argument("--threads", type=int, default=4)
    p.add_argument("--duration", type=float, default=20)
    p.add_argument("--events", required=True)
    p.add_argument("--marker", required=True)
    p.add_argument("instances", nargs=2)
    p = sub.add_parser("rate-limit")
    p.add_argument("--rate", type=int, required=True)
    p.add_argument("--calls", type=int, default=40)
    p.add_argument("instances", nargs=2)
    args = parser.parse_args()
    checks = Checks(args.checks)
    commands = {"load-kill": load_kill, "mrtr-start": mrtr_start, "mrtr-finish": mrtr_finish,
                "task-start": task_start, "task-orphan": task_orphan, "task-same": task_same,
                "redis-restart": redis_restart, "rate-limit": rate_limit}
    commands[args.command](args, checks)
    return 1 if checks.failed else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Change notifications across instances (`subscriptions/listen`).

    listen.py --checks FILE --via NGINX_URL INSTANCE_URL INSTANCE_URL INSTANCE_URL

Opens listeners directly on each instance and one through nginx, then
announces changes on each instance in turn (the fixture's
`test_trigger_tool_change` / `test_trigger_prompt_change`) and through
nginx. Checks:

- a change announced on instance 2 reaches a listener on instance 1 within
  3 s, and one announced on instance 1 a listener on instance 2;
- every tools listener (on every instance, and through nginx) gets each
  change exactly once, whichever instance announced it;
- a listener asking for prompt changes only gets none of the tool changes,
  and gets the prompt change announced on another instance;
- a task created on instance 1 is followed by a listener on instance 2
  (`taskIds`, Tasks extension) through to `completed` with its result.
"""

import argparse
import sys

from mcpwire import ELICIT_CAPS, TASKS_CAPS, Checks, Endpoint, Listener, now

DEADLINE = 3.0  # seconds for a change to reach every listener
QUIET = 0.5  # seconds to wait for a duplicate after the last delivery


def heard_once(listeners: dict, method: str, started: float) -> tuple[dict, float]:
    """For each listener, how many `method` messages it got within
    DEADLINE of `started` (then QUIET more); and the slowest delivery."""
    counts = {name: 0 for name in listeners}
    slowest = 0.0
    deadline = started + DEADLINE
    for name, listener in listeners.items():
        while counts[name] == 0 and (got := listener.next(deadline - now())) is not None:
            if got[1].get("method") == method:
                counts[name] += 1
                slowest = max(slowest, got[0] - started)
    quiet_until = now() + QUIET
    for name, listener in listeners.items():
        while (got := listener.next(quiet_until - now())) is not None:
            if got[1].get("method") == method:
                counts[name] += 1
    return counts, slowest


def trigger(url: str, tool: str) -> tuple[bool, str]:
    reply = Endpoint(url).tool(tool, {})
    return reply.ok and not reply.result.get("isError"), reply.describe()


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--checks")
    parser.add_argument("--via", required=True)
    parser.add_argument("instances", nargs=3)
    args = parser.parse_args()
    checks = Checks(args.checks)
    one, two, three = args.instances
    where = {"instance 1": one, "instance 2": two, "instance 3": three, "nginx": args.via}

    tools = {name: Listener(url, {"toolsListChanged": True}, ident=f"tools-{i}")
             for i, (name, url) in enumerate(where.items())}
    prompts = Listener(three, {"promptsListChanged": True}, ident="prompts-3")
    opened = {name: listener.acknowledged() for name, listener in {**tools, "prompts on 3": prompts}.items()}
    if not all(opened.values()):
        refused = {name: (l.refusal.describe() if l.refusal else "no acknowledgement within 3 s")
                   for name, l in {**tools, "prompts on 3": prompts}.items() if not opened[name]}
        checks.record("listen: streams open on every instance", False, f"not opened: {refused}")
        return 1
    checks.record("listen: streams open on every instance", True,
                  "4 tools listeners (instances 1-3, nginx) and 1 prompts listener acknowledged")

    # The brief's two directions, then every announcer.
    matrix_ok, matrix_notes = True, []
    for announcer in ("instance 2", "instance 1", "instance 3", "nginx"):
        started = now()
        fine, said = trigger(where[announcer], "test_trigger_tool_change")
        if not fine:
            matrix_ok = False
            matrix_notes.append(f"trigger on {announcer} failed: {said}")
            continue
        counts, slowest = heard_once(tools, "notifications/tools/list_changed", started)
        if announcer in ("instance 2", "instance 1"):
            listener = "instance 1" if announcer == "instance 2" else "instance 2"
            checks.record(f"listen: {announcer} -> listener on {listener}", counts[listener] == 1,
                          f"delivered {counts[listener]} time(s) within {DEADLINE:.0f} s"
                          + (f" (slowest listener {slowest * 1000:.0f} ms)" if counts[listener] else ""))
        wrong = {name: n for name, n in counts.items() if n != 1}
        if wrong:
            matrix_ok = False
            matrix_notes.append(f"announced on {announcer}: deliveries {counts}")
        else:
            matrix_notes.append(f"{announcer}: 4/4 once, slowest {slowest * 1000:.0f} ms")
    checks.record("listen: every listener hears every instance exactly once", matrix_ok,
                  "; ".join(matrix_notes))

    stray = [m.get("method") for m in prompts.drain(0.1) if m.get("method") != "notifications/subscriptions/acknowledged"]
    started = now()
    fine, said = trigger(one, "test_trigger_prompt_change")
    counts, slowest = heard_once({"prompts on 3": prompts}, "notifications/prompts/list_changed", started)
    leaked = {name: [m.get("method") for m in l.drain(0.1)] for name, l in tools.items()}
    leaked = {name: methods for name, methods in leaked.items() if methods}
    checks.record("listen: filters hold across instances",
                  fine and not stray and counts["prompts on 3"] == 1 and not leaked,
                  f"prompts listener on 3 got {len(stray)} tool message(s), and the prompt change "
                  f"from instance 1 {counts['prompts on 3']} time(s)"
                  + (f" ({slowest * 1000:.0f} ms)" if counts["prompts on 3"] else "")
                  + (f"; tools listeners got {leaked}" if leaked else "; tools listeners got none of it")
                  + ("" if fine else f"; trigger failed: {said}"))
    for listener in [*tools.values(), prompts]:
        listener.close()

    # A task's status, followed from another instance than its own.
    created = Endpoint(one).tool("slow_compute", {"seconds": 2, "label": "followed"}, TASKS_CAPS)
    task_id = created.result.get("taskId")
    if created.result.get("resultType") != "task" or not task_id:
        checks.record("listen: a task on instance 1 followed on instance 2", False,
                      f"slow_compute did not make a task: {created.describe()}")
        return 1
    follower = Listener(two, {"taskIds": [task_id]}, {**TASKS_CAPS, **ELICIT_CAPS}, ident="tasks-2")
    acked = follower.acknowledged() and follower.ack["params"]["notifications"].get("taskIds") == [task_id]
    statuses, result = [], None
    deadline = now() + 10
    while acked and (got := follower.next(deadline - now())) is not None:
        params = got[1].get("params", {})
        if got[1].get("method") == "notifications/tasks" and params.get("taskId") == task_id:
            statuses.append(params.get("status"))
            if params.get("status") in ("completed", "failed", "cancelled"):
                result = (params.get("result") or {}).get("content", [{}])[0].get("text")
                break
    follower.close()
    checks.record("listen: a task on instance 1 followed on instance 2",
                  acked and statuses[-1:] == ["completed"] and result == "computed followed in 2 s",
                  f"acknowledged={acked}, statuses {statuses}, result {result!r}"
                  + ("" if acked else f" ({follower.refusal.describe() if follower.refusal else follower.ack})"))
    return 1 if checks.failed else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""The cluster harness's bookkeeping: checks recorded from the suites'
results, and the final table.

    summary.py record --checks FILE NAME PASS|FAIL DETAIL
    summary.py conformance --checks FILE RESULTS_DIR EXIT_STATUS
    summary.py legacy --checks FILE RESULTS_DIR OUTPUT_FILE EXIT_STATUS
    summary.py table --checks FILE

`conformance` judges each part of tests/conformance/run.sh's results with
judge.py's own functions (the run's exit status, which judge.py decided,
is a check of its own); `table` prints every check and exits 1 if any
failed.
"""

import contextlib
import io
import json
import sys
from pathlib import Path

from mcpwire import Checks

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "conformance"))
import judge  # noqa: E402 - tests/conformance/judge.py


def quietly(function, *args):
    """Calls a judge.py function without its printing."""
    with contextlib.redirect_stdout(io.StringIO()):
        return function(*args)


def brief(problems: list[str], limit: int = 6) -> str:
    shown = "; ".join(problems[:limit])
    return shown + (f"; and {len(problems) - limit} more" if len(problems) > limit else "")


def conformance(checks: Checks, results: Path, status: str) -> None:
    if not (results / "requirements.txt").exists():
        checks.record("conformance: the suite ran", False, f"run.sh exited {status} before any scenario ran")
        return
    for run, listing, name in (("scored", "requirements.txt", "2026-07-28 scored"),
                               ("scored-legacy", "requirements-legacy.txt", "2025-11-25 scored (legacy adapter)")):
        scenarios = judge.scored_scenarios((results / listing).read_text())
        problems = quietly(judge.judge_scored, results, run, listing)
        exit_file = results / f"{run}.exit"
        code = exit_file.read_text().strip() if exit_file.exists() else "missing"
        if code != "0":
            problems.append(f"the suite exited {code}")
        bad = {p.split(": ")[0].removeprefix(f"[{run}] ") for p in problems}
        checks.record(f"conformance: {name}", not problems,
                      f"{len(scenarios) - len(bad & set(scenarios))}/{len(scenarios)} scenarios clean"
                      + (f"; {brief(problems)}" if problems else ""))
    listing = results / "extensions.txt"
    tasks = listing.read_text().split() if listing.exists() else []
    problems = quietly(judge.judge_extensions, results)
    problems += [f"{n} exited {(results / f'{n}.exit').read_text().strip()}" for n in tasks
                 if (results / f"{n}.exit").exists() and (results / f"{n}.exit").read_text().strip() != "0"]
    checks.record("conformance: tasks-* and sep-2640-* extension scenarios (forced)", bool(tasks) and not problems,
                  f"{len(tasks)} scenarios" + (f"; {brief(problems)}" if problems else ", all clean"))
    alone = [p for p in sorted(results.iterdir())
             if p.is_dir() and p.name not in {"scored", "scored-legacy", "client", *tasks}]
    problems = []
    for run_dir in alone:
        for name, rows in judge.load_checks(run_dir).items():
            problems += judge.problems(name, rows, ("FAILURE",))
        code = (results / f"{run_dir.name}.exit").read_text().strip()
        if code != "0":
            problems.append(f"{run_dir.name} exited {code}")
    checks.record("conformance: pending scenarios", bool(alone) and not problems,
                  f"{', '.join(p.name for p in alone)}" + (f"; {brief(problems)}" if problems else ": clean"))
    checks.record("conformance: verdict of judge.py", status == "0", f"run.sh exited {status}")


def legacy(checks: Checks, results: Path, output: Path, status: str) -> None:
    said = output.read_text() if output.exists() else ""
    for client in ("python-http", "ts-http"):
        log = results / f"{client}.log"
        if not log.exists():
            checks.record(f"legacy: {client} through nginx", False, f"did not run (run.sh exited {status})")
            continue
        failed = f"FAILED: {client} " in said
        stderr = results / f"{client}.stderr"
        tail = [line for line in (stderr.read_text().splitlines() if stderr.exists() else []) if line.strip()]
        passed_lines = [line for line in log.read_text().splitlines() if line.strip()]
        checks.record(f"legacy: {client} through nginx", not failed,
                      (f"{len(passed_lines)} lines of output, last: {passed_lines[-1][:160]!r}" if passed_lines
                       else "no output") + (f"; stderr ends: {' | '.join(tail[-3:])[:400]}" if failed else ""))


def table(path: Path) -> int:
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()] if path.exists() else []
    width = max((len(r["check"]) for r in rows), default=10)
    print(f"\n{'=' * 30} cluster checks {'=' * 30}")
    for row in rows:
        print(f"{row['status']:<5} {row['check']:<{width}}  {row['detail']}")
    failed = [r for r in rows if r["status"] != "PASS"]
    print(f"\n{len(rows) - len(failed)} passed, {len(failed)} failed")
    if not rows:
        print("no checks were recorded")
        return 1
    return 1 if failed else 0


def main() -> int:
    command, args = sys.argv[1], sys.argv[2:]
    if args[:1] != ["--checks"]:
        sys.exit("usage: summary.py COMMAND --checks FILE ...")
    checks, args = Checks(args[1]), args[2:]
    if command == "record":
        name, status, detail = args
        checks.record(name, status == "PASS", detail)
    elif command == "conformance":
        conformance(checks, Path(args[0]), args[1])
    elif command == "legacy":
        legacy(checks, Path(args[0]), Path(args[1]), args[2])
    elif command == "table":
        return table(Path(checks.path))
    else:
        sys.exit(f"unknown command {command}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

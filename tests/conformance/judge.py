#!/usr/bin/env python3
"""Judges a conformance run from the suite's own checks.json files.

The suite's exit code only covers FAILURE rows of scored scenarios, and its
`Total:` line mixes in not-scored ones, so run.sh asks this script instead:

    judge.py RESULTS_DIR

RESULTS_DIR holds what run.sh wrote: `requirements.txt` and
`requirements-legacy.txt` (the output of `conformance list --requirements
...` for 2026-07-28 and 2025-11-25), then for each run NAME a directory
NAME/ (the suite's `-o` output) and NAME.exit (its exit code). The runs
named `scored` and `scored-legacy` are the `--requirements` runs; every
other run is one not-scored scenario run on its own.

Verdict (exit status 1 if any of these holds):
- a run exited non-zero;
- a scored scenario is missing, or has a FAILURE or WARNING row;
- a single-scenario run has a FAILURE row;
- an extension's server scenario (Tasks, Skills: listed in
  `extensions.txt`) did not run, or has a FAILURE or WARNING row, or a
  SKIPPED row other than in the suite's own placeholder
  (`tasks-status-notifications`, which always skips);
- an extension's client scenario (Skills, client credentials: listed in
  `client-extensions.txt`, run into `client-extensions/`) did not run, or
  has a FAILURE, WARNING or SKIPPED row, or its run exited non-zero.
Not-scored scenarios inside the scored run (the tasks extension, and the
pending scenarios that run.sh also runs on their own) are listed, not judged.

The client leg (`client/`, the `conformance client --requirements` run,
whose exit code is in client.status) is skipped when run.sh tested an
external server (CONFORMANCE_URL: it writes `client.skipped`, holding the
URL); otherwise it is judged by its client scenarios:
every one that is not `auth/*`, and the not-scored
`json-schema-2020-12-preservation`, must run with no FAILURE or WARNING
row; the `auth/*` ones must pass exactly as AUTH_PASSING says (the list
the guide gives: docs/src/conformance.md).
"""

import json
import re
import sys
from collections import Counter
from pathlib import Path

# `server-<scenario>-<ISO timestamp with ':' and '.' replaced by '-'>`
RUN_DIR = re.compile(r"^server-(?P<scenario>.+)-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z$")
# A client run: `<scenario>-<timestamp>`, `auth/` scenarios one level down.
CLIENT_RUN_DIR = re.compile(r"^(?P<scenario>.+)-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z$")

# The auth/* client scenarios of --requirements 2026-07-28 that the
# built-in client passes (docs/src/conformance.md): all of them.
AUTH_PASSING: set[str] = {
    "auth/metadata-default",
    "auth/metadata-var1",
    "auth/metadata-var2",
    "auth/metadata-var3",
    "auth/basic-cimd",
    "auth/scope-from-www-authenticate",
    "auth/scope-from-scopes-supported",
    "auth/scope-omitted-when-undefined",
    "auth/scope-step-up",
    "auth/scope-retry-limit",
    "auth/token-endpoint-auth-basic",
    "auth/token-endpoint-auth-post",
    "auth/token-endpoint-auth-none",
    "auth/pre-registration",
    "auth/resource-mismatch",
    "auth/offline-access-scope",
    "auth/offline-access-not-supported",
    "auth/authorization-server-migration",
    "auth/iss-supported",
    "auth/iss-not-advertised",
    "auth/iss-supported-missing",
    "auth/iss-wrong-issuer",
    "auth/iss-unexpected",
    "auth/iss-normalized",
    "auth/metadata-issuer-mismatch",
}
# Client scenarios not scored for 2026-07-28 that we hold ourselves to.
CLIENT_EXTRA = ["json-schema-2020-12-preservation"]
STATUSES = ("SUCCESS", "FAILURE", "WARNING", "INFO", "SKIPPED")


def scored_scenarios(listing: str, section: str = "Server scenarios") -> list[str]:
    """Scenario names of one section of `conformance list --requirements`."""
    names, inside = [], False
    for line in listing.splitlines():
        if line.startswith(section):
            inside = True
        elif inside and line.strip().startswith("- "):
            names.append(line.strip()[2:].strip())
        elif inside and not line.strip():
            break
    return names


def load_checks(run_dir: Path) -> dict[str, list[dict]]:
    """checks.json rows by scenario name."""
    checks = {}
    for path in sorted(run_dir.glob("server-*/checks.json")):
        match = RUN_DIR.match(path.parent.name)
        if match:
            checks[match["scenario"]] = json.loads(path.read_text())
    return checks


def describe(row: dict) -> str:
    message = row.get("errorMessage") or row.get("description") or ""
    return f"    {row['status']:<8} {row['id']}: {message}"[:400]


def problems(name: str, rows: list[dict], bad: tuple[str, ...]) -> list[str]:
    """One line per row whose status is in `bad`."""
    return [f"{name}: {row['status']} {row['id']}" for row in rows if row["status"] in bad]


# `--requirements` runs: (run name, the `conformance list` output naming
# its scored scenarios). The legacy run is judged exactly like the modern.
SCORED_RUNS = (("scored", "requirements.txt"), ("scored-legacy", "requirements-legacy.txt"))


def judge_scored(results: Path, run: str, listing: str) -> list[str]:
    """Judges one --requirements run; returns its problems."""
    failures: list[str] = []
    scored = scored_scenarios((results / listing).read_text())
    if not scored:
        failures.append(f"could not read the scored scenario list from {listing}")
    checks = load_checks(results / run)
    total = Counter()
    passed = 0
    print(f"[{run}] Scored scenarios ({len(scored)}), judged on FAILURE and WARNING rows:")
    for name in scored:
        rows = checks.get(name)
        if rows is None:
            failures.append(f"[{run}] {name}: no checks.json (scenario did not run)")
            print(f"  ✗ {name}: did not run")
            continue
        total += Counter(row["status"] for row in rows)
        found = problems(f"[{run}] {name}", rows, ("FAILURE", "WARNING"))
        failures += found
        passed += not found
        notes = [describe(row) for row in rows if row["status"] != "SUCCESS"]
        if notes:
            print(f"  {'✗' if found else '✓'} {name}:")
            print("\n".join(notes))
    print(f"  => {passed}/{len(scored)} scored scenarios clean; rows: "
          + ", ".join(f"{total[s]} {s}" for s in STATUSES))

    ignored = sorted(set(checks) - set(scored))
    if ignored:
        print(f"[{run}] Not scored, run by --requirements and not judged here: {', '.join(ignored)}")
    return failures


# The suite's placeholder scenario: one SKIPPED row, whatever the server
# does (its harness does not read `subscriptions/listen` yet).
ALWAYS_SKIPPED = {"tasks-status-notifications"}


def judge_extensions(results: Path) -> list[str]:
    """Judges the forced runs of the extensions' server scenarios."""
    listing = results / "extensions.txt"
    if not listing.exists():
        return ["extensions.txt is missing: the tasks-* and sep-2640-* scenarios did not run"]
    failures: list[str] = []
    print("Extension server scenarios (forced), judged on FAILURE, WARNING and SKIPPED rows:")
    for name in listing.read_text().split():
        rows = load_checks(results / name).get(name)
        if rows is None:
            failures.append(f"{name}: no checks.json (scenario did not run)")
            continue
        bad = ("FAILURE", "WARNING") if name in ALWAYS_SKIPPED else ("FAILURE", "WARNING", "SKIPPED")
        found = problems(name, rows, bad)
        failures += found
        counts = Counter(row["status"] for row in rows)
        print(f"  {'✗' if found else '✓'} {name}: "
              + ", ".join(f"{counts[s]} {s}" for s in STATUSES if counts[s]))
    return failures


def judge_client_extensions(results: Path) -> list[str]:
    """Judges the forced runs of the extensions' client scenarios."""
    if (results / "client.skipped").exists():
        return []
    listing = results / "client-extensions.txt"
    if not listing.exists():
        return ["client-extensions.txt is missing: the sep-2640-client-* scenarios did not run"]
    checks = load_client_checks(results / "client-extensions")
    failures: list[str] = []
    print("[client] Extension scenarios (forced), judged on FAILURE, WARNING and SKIPPED rows:")
    for name in listing.read_text().split():
        rows = checks.get(name)
        if rows is None:
            failures.append(f"[client] {name}: no checks.json (scenario did not run)")
            print(f"  ✗ {name}: did not run")
            continue
        found = problems(f"[client] {name}", rows, ("FAILURE", "WARNING", "SKIPPED"))
        status = results / f"client-{name.replace('/', '_')}.status"
        if status.exists() and status.read_text().strip() != "0":
            found.append(f"[client] {name}: the suite exited {status.read_text().strip()}")
        failures += found
        counts = Counter(row["status"] for row in rows)
        print(f"  {'✓' if not found else '✗'} {name}: "
              + ", ".join(f"{counts[s]} {s}" for s in STATUSES if counts[s]))
        notes = [describe(row) for row in rows if row["status"] not in ("SUCCESS", "INFO")]
        if notes:
            print("\n".join(notes))
    return failures


def load_client_checks(run_dir: Path) -> dict[str, list[dict]]:
    """checks.json rows of a client run by scenario name (`auth/...`)."""
    checks = {}
    for path in sorted(run_dir.glob("**/checks.json")):
        match = CLIENT_RUN_DIR.match(path.parent.name)
        if match:
            prefix = "auth/" if path.parent.parent.name == "auth" else ""
            checks[prefix + match["scenario"]] = json.loads(path.read_text())
    return checks


def judge_client(results: Path) -> list[str]:
    """Judges the client leg; returns its problems."""
    skipped = results / "client.skipped"
    if skipped.exists():
        # run.sh with CONFORMANCE_URL: the server under test is not ours
        # to pair with the inspector, and the leg tests the client.
        print(f"client leg: skipped (external server at {skipped.read_text().strip()})")
        return []
    if not (results / "client").is_dir():
        return ["the client leg did not run (no client/ results)"]
    status = (results / "client.status").read_text().strip()
    required = scored_scenarios((results / "requirements.txt").read_text(), "Client scenarios")
    checks = load_client_checks(results / "client")
    failures: list[str] = []
    print(f"[client] Client scenarios ({len(required)}; the suite exited {status}):")
    for name in [*required, *CLIENT_EXTRA]:
        rows = checks.get(name)
        if rows is None:
            failures.append(f"[client] {name}: no checks.json (scenario did not run)")
            continue
        found = problems(f"[client] {name}", rows, ("FAILURE", "WARNING"))
        passed = not found
        if name.startswith("auth/"):
            expected = name in AUTH_PASSING
            if passed != expected:
                failures.append(f"[client] {name}: {'passes' if passed else 'fails'}, "
                                f"but AUTH_PASSING (and the guide) say it {'passes' if expected else 'fails'}")
            print(f"  {'✓' if passed else '✗'} {name}")
            if not passed:
                print("\n".join(describe(row) for row in rows if row["status"] != "SUCCESS"))
            continue
        failures += found
        print(f"  {'✓' if passed else '✗'} {name}")
        notes = [describe(row) for row in rows if row["status"] != "SUCCESS"]
        if notes:
            print("\n".join(notes))
    auth = [n for n in required if n.startswith("auth/")]
    print(f"  => {sum(1 for n in auth if n in AUTH_PASSING)}/{len(auth)} auth/* scenarios expected to pass")
    ignored = sorted(set(checks) - set(required) - set(CLIENT_EXTRA))
    if ignored:
        print(f"[client] Not scored and not judged (extensions): {', '.join(ignored)}")
    return failures


def main() -> int:
    results = Path(sys.argv[1])
    failures: list[str] = []

    for exit_file in sorted(results.glob("*.exit")):
        code = exit_file.read_text().strip()
        if code != "0":
            failures.append(f"run `{exit_file.stem}` exited with status {code}")

    for run, listing in SCORED_RUNS:
        failures += judge_scored(results, run, listing)
    failures += judge_client(results)
    failures += judge_client_extensions(results)

    failures += judge_extensions(results)

    listing = results / "extensions.txt"
    extensions = set(listing.read_text().split()) if listing.exists() else set()
    scored_dirs = {run for run, _ in SCORED_RUNS} | {"client", "client-extensions"} | extensions
    for run_dir in sorted(p for p in results.iterdir() if p.is_dir() and p.name not in scored_dirs):
        for name, rows in load_checks(run_dir).items():
            counts = Counter(row["status"] for row in rows)
            found = problems(name, rows, ("FAILURE",))
            failures += found
            print(f"Not scored, run alone: {'✗' if found else '✓'} {name}: "
                  + ", ".join(f"{counts[s]} {s}" for s in STATUSES if counts[s]))
            notes = [describe(row) for row in rows if row["status"] != "SUCCESS"]
            if notes:
                print("\n".join(notes))

    if failures:
        print(f"\nCONFORMANCE FAILED ({len(failures)} problem(s)):")
        print("\n".join(f"  - {f}" for f in failures))
        return 1
    print("\nCONFORMANCE PASSED")
    return 0


if __name__ == "__main__":
    sys.exit(main())

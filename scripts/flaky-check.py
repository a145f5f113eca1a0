#!/usr/bin/env python3
"""Run ctest cases many times under load and count their failures.

    scripts/flaky-check.py [-n RUNS] [-j PAR] [--load K] [--build DIR]
                           [--timeout S] [--logs DIR] [--note REGEX] REGEX...

Each REGEX selects ctest cases of the build (as `ctest -R`). Every selected
case runs RUNS times (default 200), PAR instances at once (default 2), with
its own ctest command, environment and working directory, while K busy
processes (default: the number of CPUs) compete for the CPUs at the same
niceness, so a race that needs a descheduled thread gets its chance. A run
fails on a non-zero exit (other than a SKIP_RETURN_CODE), a match of
FAIL_REGULAR_EXPRESSION (the sanitizer report patterns every case carries,
cmake/QsTestVerdict.cmake), or its time limit (--timeout, default three times
the case's ctest TIMEOUT capped at 600 s). The output of the first failing
runs is kept in --logs (default /tmp/flaky-check-<pid>). Prints one line per
case: failures/runs, median and max duration; exits 1 if any case failed.
--note REGEX also counts the runs, passing or failing, whose output matches
REGEX and keeps the first of them (e.g. the conformance server's "no progress
round for" report of a process the machine did not run for a second).
"""
import argparse
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor


def ctest_cases(build, regexes):
    out = subprocess.run(["ctest", "--test-dir", build, "--show-only=json-v1"],
                         check=True, capture_output=True, text=True).stdout
    cases = []
    for t in json.loads(out)["tests"]:
        if not any(re.search(r, t["name"]) for r in regexes):
            continue
        props = {p["name"]: p["value"] for p in t.get("properties", [])}
        env = dict(os.environ)
        for kv in props.get("ENVIRONMENT", []):
            k, _, v = kv.partition("=")
            env[k] = v
        cases.append({
            "name": t["name"],
            "command": t["command"],
            "cwd": props.get("WORKING_DIRECTORY", build),
            "env": env,
            "timeout": float(props.get("TIMEOUT", 1500)),
            "skip": props.get("SKIP_RETURN_CODE"),
            "pass_re": props.get("PASS_REGULAR_EXPRESSION"),
            "fail_re": props.get("FAIL_REGULAR_EXPRESSION"),
        })
    return cases


def run_once(case, limit):
    start = time.monotonic()
    proc = subprocess.Popen(case["command"], cwd=case["cwd"], env=case["env"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            start_new_session=True)
    try:
        out, _ = proc.communicate(timeout=limit)
        rc = proc.returncode
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
        rc = "timeout"
    took = time.monotonic() - start
    text = out.decode(errors="replace")
    if rc == "timeout":
        return False, took, f"timed out after {limit:.0f} s\n{text}"
    if case["skip"] is not None and rc == int(case["skip"]):
        return True, took, text
    if case["fail_re"] and any(re.search(r, text) for r in case["fail_re"]):
        return False, took, f"FAIL_REGULAR_EXPRESSION matched\n{text}"
    if case["pass_re"]:
        ok = any(re.search(r, text) for r in case["pass_re"])
        return ok, took, text if ok else f"exit {rc}, no pass line\n{text}"
    return rc == 0, took, text if rc == 0 else f"exit {rc}\n{text}"


def start_load(k):
    # Busy loops at the same niceness as the runs, so they really compete.
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"])
            for _ in range(k)]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("regex", nargs="+")
    ap.add_argument("-n", "--runs", type=int, default=200)
    ap.add_argument("-j", "--parallel", type=int, default=2)
    ap.add_argument("--load", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--build", default="build")
    ap.add_argument("--timeout", type=float, default=None)
    ap.add_argument("--logs", default=None)
    ap.add_argument("--keep", type=int, default=3,
                    help="failing runs' outputs kept per case")
    ap.add_argument("--note", default=None,
                    help="count (and keep) the runs whose output matches")
    a = ap.parse_args()
    cases = ctest_cases(a.build, a.regex)
    if not cases:
        print("flaky-check: no ctest case matches", a.regex, file=sys.stderr)
        return 2
    logs = a.logs or tempfile.mkdtemp(prefix="flaky-check-")
    os.makedirs(logs, exist_ok=True)
    load = start_load(a.load)
    total_failed = 0
    try:
        print(f"flaky-check: {len(cases)} case(s), {a.runs} runs each, "
              f"{a.parallel} at once, {a.load} busy process(es); logs in "
              f"{logs}", flush=True)
        for case in cases:
            limit = a.timeout or min(3 * case["timeout"], 600)
            with ThreadPoolExecutor(a.parallel) as pool:
                results = list(pool.map(lambda _: run_once(case, limit),
                                        range(a.runs)))
            failed = [r for r in results if not r[0]]
            for i, (_, took, text) in enumerate(failed[:a.keep]):
                path = os.path.join(logs, f"{case['name']}.{i}.log")
                with open(path, "w") as f:
                    f.write(text)
            noted = ""
            if a.note:
                hits = [r for r in results if re.search(a.note, r[2])]
                for i, (_, _, text) in enumerate(hits[:a.keep]):
                    path = os.path.join(logs, f"{case['name']}.note{i}.log")
                    with open(path, "w") as f:
                        f.write(text)
                noted = f", {len(hits)} matched --note"
            times = sorted(r[1] for r in results)
            print(f"{case['name']}: {len(failed)}/{a.runs} failed "
                  f"(median {statistics.median(times):.2f} s, "
                  f"max {times[-1]:.2f} s{noted})", flush=True)
            total_failed += bool(failed)
    finally:
        for p in load:
            p.kill()
            p.wait()
    return 1 if total_failed else 0


if __name__ == "__main__":
    sys.exit(main())

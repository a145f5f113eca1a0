#!/usr/bin/env python3
"""List the skipped ctest cases of a CI stage; fail if a required one skipped.

    scripts/ci-skips.py JUNIT_XML BUILD_DIR [--require LIST]

JUNIT_XML is ctest's --output-junit file, BUILD_DIR the build it ran (its
`ctest --show-only=json-v1` gives each case's labels). Prints every case
that did not run (a SKIP_RETURN_CODE exit or a case ctest could not start)
with the last line of its output, which says why, and the cmocka cases
reported "[  SKIPPED ]" inside cases that ran. Then, for each case that
failed, the last lines of its output: CI logs keep the head and the tail
of a stage's output, and a failure's details sit in its middle.

--require (default: the environment's QS_REQUIRE) is a list of labels and
case names separated by ';' or ','. Exits 1 if a case that carries one of
them, or is named by one, was skipped, or if a required label has no case
that ran (its plugin was not built: the ofi plugin is AUTO, and a build
without libfabric quietly has no ofi case). A case labelled "optional"
(one that needs something outside this repository, such as a mochi-margo
snapshot) is listed but never required, unless named.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET

# How many lines of a failed case's output are repeated.
TAIL_LINES = 25


def labels_of(build):
    out = subprocess.run(["ctest", "--test-dir", build, "--show-only=json-v1"],
                         check=True, capture_output=True, text=True).stdout
    labels = {}
    for t in json.loads(out)["tests"]:
        props = {p["name"]: p["value"] for p in t.get("properties", [])}
        labels[t["name"]] = set(props.get("LABELS", []))
    return labels


def reason(text):
    lines = [ln.strip() for ln in (text or "").splitlines() if ln.strip()]
    return lines[-1] if lines else "(no output)"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("junit")
    ap.add_argument("build")
    ap.add_argument("--require", default=os.environ.get("QS_REQUIRE", ""))
    a = ap.parse_args()
    required = [r for r in re.split(r"[;,]", a.require) if r]
    labels = labels_of(a.build)
    skipped, ran, partial, failed = [], set(), [], []
    for tc in ET.parse(a.junit).getroot().iter("testcase"):
        name = tc.get("name")
        out = tc.findtext("system-out") or ""
        if tc.find("skipped") is not None or tc.get("status") in ("notrun", "disabled"):
            skipped.append((name, reason(out)))
            continue
        ran.add(name)
        if tc.get("status") == "fail" or tc.find("failure") is not None:
            failed.append((name, out))
        # cmocka names a skipped case when it skips and again in its
        # summary ("[  SKIPPED ] 1 test(s), listed below:", then the names).
        cases = []
        for m in re.finditer(r"^\[  SKIPPED \] (\S+)(.*)$", out, re.M):
            if "test(s)" not in m.group(2) and m.group(1) not in cases:
                cases.append(m.group(1))
        # ctest cuts a long output short with "...": a name so cut that
        # begins a name already listed is that case again.
        cases = [c for c in cases if not (c.endswith("...") and any(
            o != c and o.startswith(c[:-3]) for o in cases))]
        partial += [(name, c) for c in cases]
    stage = os.path.basename(a.junit)
    print(f"ci-skips {stage}: {len(ran)} ran, {len(skipped)} skipped")
    for name, why in skipped:
        print(f"  skipped {name}: {why}")
    inside = {}
    for name, case in partial:
        inside.setdefault(case, []).append(name)
    for case, names in inside.items():
        print(f"  cmocka case {case} skipped inside {len(names)} "
              f"case(s) that ran: {', '.join(names)}")
    for name, out in failed:
        lines = [ln.rstrip() for ln in out.splitlines() if ln.strip()]
        print(f"ci-skips {stage}: {name} failed; the last lines of its output:")
        for ln in lines[-TAIL_LINES:]:
            print(f"  | {ln}")
    bad = []
    for name, why in skipped:
        mine = labels.get(name, set())
        hit = [r for r in required
               if r == name or (r in mine and "optional" not in mine)]
        if hit:
            bad.append(f"{name} (required: {', '.join(hit)}) was skipped: {why}")
    for r in required:
        if r in labels and r not in ran and not any(n == r for n, _ in skipped):
            bad.append(f"required case {r} did not run")
        elif r not in labels and not any(r in labels.get(n, ()) for n in ran):
            bad.append(f"no case labelled or named {r} ran (plugin not built?)")
    for b in bad:
        print(f"ci-skips {stage}: FAIL: {b}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

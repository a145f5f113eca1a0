#!/usr/bin/env python3
"""check_junit.py JUNIT REPORT SEEDS FAILING...: read qs-sweep's JUnit XML
with Python's xml module, as a CI system would, and check it against the
sweep's printed report: one testcase per seed, a failure exactly for the
failing seeds, each failure's message the replay line the report printed
for that seed, and the failing run's log as the failure's text."""
import re
import sys
import xml.etree.ElementTree as ET


def main():
    junit, report, seeds = sys.argv[1], sys.argv[2], int(sys.argv[3])
    failing = {int(s) for s in sys.argv[4:]}
    replay = {}
    seed = None
    with open(report) as f:
        for line in f:
            m = re.match(r"^(FAIL|HANG|NONDETERMINISTIC) seed (\d+)", line)
            if m:
                seed = int(m.group(2))
            m = re.match(r"^  replay: (.*)$", line.rstrip("\n"))
            if m and seed is not None:
                replay[seed] = m.group(1)
    root = ET.parse(junit).getroot()
    errors = []
    if root.tag != "testsuites":
        errors.append("root is <%s>, want <testsuites>" % root.tag)
    suites = root.findall("testsuite")
    if len(suites) != 1:
        errors.append("%d testsuites, want 1" % len(suites))
    suite = suites[0]
    for node in (root, suite):
        if node.get("tests") != str(seeds):
            errors.append("<%s tests=%s>, want %d" % (node.tag, node.get("tests"), seeds))
        if node.get("failures") != str(len(failing)):
            errors.append("<%s failures=%s>, want %d"
                          % (node.tag, node.get("failures"), len(failing)))
    cases = {}
    for case in suite.findall("testcase"):
        m = re.match(r"^seed (\d+)$", case.get("name", ""))
        if not m:
            errors.append("testcase named %r" % case.get("name"))
            continue
        cases[int(m.group(1))] = case
        float(case.get("time"))
    if sorted(cases) != list(range(1, seeds + 1)):
        errors.append("testcases for seeds %s" % sorted(cases))
    for s, case in sorted(cases.items()):
        fails = case.findall("failure")
        if s not in failing:
            if fails:
                errors.append("seed %d passed but has a <failure>" % s)
            continue
        if len(fails) != 1:
            errors.append("seed %d: %d <failure> elements, want 1" % (s, len(fails)))
            continue
        msg = fails[0].get("message")
        if s not in replay:
            errors.append("seed %d: no replay line in the report" % s)
        elif msg != replay[s]:
            errors.append("seed %d: failure message %r, the report's replay "
                          "line %r" % (s, msg, replay[s]))
        if "planted failure: seed %d" % s not in (fails[0].text or ""):
            errors.append("seed %d: the run's log is not the failure's text" % s)
    for e in errors:
        print("check_junit: " + e)
    if errors:
        return 1
    print("check_junit: %d testcases, %d failures, replay lines match"
          % (len(cases), len(failing)))
    return 0


if __name__ == "__main__":
    sys.exit(main())

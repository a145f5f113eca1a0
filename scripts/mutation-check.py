#!/usr/bin/env python3
"""Plant each bug of tests/mutation/catalogue.txt, one at a time, and see
whether the tests catch it.

For each entry: apply the single-line change to the source tree, rebuild
incrementally, run the chosen ctest labels with a short per-test timeout
(stopping at the first failure), then restore the file. Prints caught/total
and, for every survivor, its diff. A mutant that does not build is reported
as invalid (the catalogue must be fixed), not as caught.

  scripts/mutation-check.py [--build DIR] [--labels REGEX] [--timeout S]
                            [--only NAME[,NAME...]] [--sample N --seed S]
                            [--quick]

The default build directory is build-mutation, configured on first use with
-DQS_SANITIZE=address so that an over-read is reported (configure it
yourself for another build type). The default labels are "sim|unit|fuzz",
without the tests that need a real fabric ("ofi|verbs|vm|bench|examples")
and those that build and install a project of their own (--exclude-tests).
--sample N runs N entries picked by --seed (CI runs a small rotating sample,
scripts/mutation-sample.sh). --quick runs, for an entry that names them
("by:", the tests that caught it when the whole labels ran), only those
tests, building only the library and the programs those tests run: quick,
and still a failure if they stop catching it. An entry none of whose tests
the build defines (a case only another build type adds) is reported NOT RUN
and left out of the figure, and --sample draws only entries the build can
run.

An entry may say "equivalent: <why>": a change no test can tell from the
original (a guard that another guard repeats). It is still planted; if it
survives it is listed apart and left out of caught/total.
"""
import argparse
import json
import os
import random
import re
import signal
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CATALOGUE = os.path.join(ROOT, "tests", "mutation", "catalogue.txt")


def parse_catalogue(path):
    entries, cur = [], {}
    with open(path) as f:
        for raw in f:
            line = raw.rstrip("\n")
            if line.startswith("#"):
                continue
            if not line.strip():
                if cur:
                    entries.append(cur)
                    cur = {}
                continue
            key, _, value = line.partition(": ")
            cur[key.strip()] = value
    if cur:
        entries.append(cur)
    for e in entries:
        for k in ("name", "what", "file", "old", "new"):
            if k not in e:
                sys.exit("catalogue entry %r lacks %r" % (e.get("name"), k))
        e["nth"] = int(e.get("nth", "1"))
    return entries


FUNC_RE = re.compile(r"^([A-Za-z_]\w*)\(")


def enclosing_function(lines, i):
    """The C function whose definition line is the last one above line i
    (the project's style puts the name at the start of its own line)."""
    for j in range(i, -1, -1):
        m = FUNC_RE.match(lines[j])
        if m:
            return m.group(1)
    return None


def mutate(text, entry):
    """Return (mutated text, changed line's number), or a string saying why
    the entry no longer applies: its text is missing, or the line found is
    not in the function the entry names ("in"), which catches an entry
    that drifted to another function when the file was reorganised."""
    lines = text.split("\n")
    seen = 0
    for i, line in enumerate(lines):
        if entry["old"] in line:
            seen += 1
            if seen == entry["nth"]:
                func = enclosing_function(lines, i)
                if "in" in entry and func != entry["in"]:
                    return "line %d is in %s, not in %s" % (i + 1, func,
                                                            entry["in"])
                lines[i] = line.replace(entry["old"], entry["new"], 1)
                return "\n".join(lines), i + 1
    return "text not found"


def run(cmd, cwd, timeout=None):
    """(exit status, output); with TIMEOUT, a command still running after
    that many seconds is killed with its whole process group and its
    status is None."""
    p = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True,
                         start_new_session=timeout is not None)
    try:
        out, _ = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, _ = p.communicate()
        return None, out
    return p.returncode, out


def kill_leftovers(build):
    """Kill the processes still running a program of BUILD: a planted bug
    can leave a test's children behind (qs-sweep runs each seed in a
    process group of its own, which killing ctest's group on a time limit
    does not reach), and a busy one would load every entry after it.
    Returns their command lines."""
    prefix = os.path.realpath(build) + os.sep
    left = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            exe = os.path.realpath("/proc/%s/exe" % pid)
            if not exe.startswith(prefix):
                continue
            with open("/proc/%s/cmdline" % pid, "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode(errors="replace")
            os.kill(int(pid), signal.SIGKILL)
            left.append(cmd.strip())
        except (OSError, ValueError):
            continue  # gone meanwhile, or not ours to read
    return left


def build_tests(build):
    """The ctest cases BUILD defines, each with its command, or None when
    ctest cannot list them."""
    rc, out = run(["ctest", "--test-dir", build, "--show-only=json-v1"],
                  ROOT)
    if rc != 0:
        return None
    return {t["name"]: t.get("command", [])
            for t in json.loads(out).get("tests", [])}


def present_by(entry, cases):
    """The tests an entry names (by:) that this build defines: a case
    another build type adds (an unsanitized build's ASan program, say)
    is not there to run."""
    return [n for n in entry.get("by", "").split(",")
            if n and n in cases]


def test_targets(build, names):
    """The build targets whose programs the ctest cases NAMES run: every
    argument of a case's command that is a program in BUILD and has a
    target of the same name. None when a case is unknown, runs no such
    program, or the build lists no targets (then build everything).
    Building these (and, through them, the library) instead of the whole
    tree is what makes --quick quick: a planted bug in the library
    otherwise relinks every program of the build, twice. BUILD may be a
    make or a Ninja tree."""
    rc, out = run(["cmake", "--build", build, "--target", "help"], ROOT)
    if rc != 0:
        return None
    # make lists a target as "... name", Ninja as "name: rule".
    known = {l[4:].split(" ")[0] for l in out.splitlines()
             if l.startswith("... ")}
    known |= {m.group(1) for m in
              (re.match(r"([\w.+-]+): \S", l) for l in out.splitlines())
              if m}
    commands = build_tests(build)
    if commands is None:
        return None
    prefix = os.path.realpath(build) + os.sep
    targets = set()
    for name in names:
        progs = [os.path.basename(a) for a in commands.get(name, [])
                 if os.path.realpath(a).startswith(prefix)
                 and os.path.isfile(a) and os.access(a, os.X_OK)]
        progs = [p for p in progs if p in known]
        if not progs:
            return None
        targets.update(progs)
    return sorted(targets)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build-mutation"))
    ap.add_argument("--labels", default="sim|unit|fuzz")
    ap.add_argument("--exclude", default="ofi|verbs|vm|bench|examples")
    # Tests that build or install a project of their own (minutes each):
    # they check packaging, not the behaviour a planted bug changes.
    ap.add_argument("--exclude-tests",
                    default="^(install_|thallium_install|sweep_outside)")
    ap.add_argument("--timeout", type=int, default=60)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--only", default="")
    ap.add_argument("--sample", type=int, default=0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--quick", action="store_true",
                    help="run only the tests an entry names (by:)")
    args = ap.parse_args()

    entries = parse_catalogue(CATALOGUE)
    if args.only:
        names = set(args.only.split(","))
        entries = [e for e in entries if e["name"] in names]
    if not os.path.exists(os.path.join(args.build, "CMakeCache.txt")):
        rc, out = run(["cmake", "-S", ROOT, "-B", args.build,
                       "-DCMAKE_BUILD_TYPE=RelWithDebInfo",
                       "-DQS_SANITIZE=address"], ROOT)
        if rc != 0:
            sys.exit(out)
    cases = build_tests(args.build) if args.quick else {}
    if cases is None:
        sys.exit("ctest cannot list the cases of " + args.build)
    if args.sample and args.quick:
        # A rotating sample guards what is caught: entries with "by", of
        # which this build runs at least one.
        entries = [e for e in entries if present_by(e, cases)]
    if args.sample:
        entries = random.Random(args.seed).sample(
            entries, min(args.sample, len(entries)))
    build = ["cmake", "--build", args.build, "-j%d" % args.jobs]
    rc, out = run(build, ROOT)
    if rc != 0:
        sys.exit("the unmutated tree does not build:\n" + out)

    caught, survivors, invalid, equivalent = [], [], [], []
    absent = []
    full_rebuild = False
    for e in entries:
        by = present_by(e, cases) if args.quick else []
        if args.quick and e.get("by") and not by:
            # Running none of its tests would pass for a survivor.
            absent.append(e)
            print("%-26s NOT RUN (this build has none of %s)" % (
                e["name"], e["by"]), flush=True)
            continue
        path = os.path.join(ROOT, e["file"])
        with open(path) as f:
            original = f.read()
        m = mutate(original, e)
        if isinstance(m, str):
            invalid.append((e, m))
            print("%-26s INVALID (%s)" % (e["name"], m), flush=True)
            continue
        mutated, lineno = m
        t0 = time.time()
        # --quick builds only the programs of the tests it runs, and builds
        # them again once the file is restored, so that no program is left
        # holding this bug when the next entry's tests run.
        targets = None
        if by:
            targets = test_targets(args.build, by)
        entry_build = build
        if targets is not None:
            entry_build = build + ["--target"] + targets
        else:
            full_rebuild = True
        try:
            with open(path, "w") as f:
                f.write(mutated)
            rc, out = run(entry_build, ROOT)
            if rc != 0:
                invalid.append((e, "does not build"))
                print("%-26s INVALID (does not build)" % e["name"],
                      flush=True)
                continue
            if by:
                select = ["-R", "^(%s)$" % "|".join(by)]
            else:
                select = ["-L", args.labels, "-LE", args.exclude,
                          "-E", args.exclude_tests]
            # ctest's --timeout only applies to cases without a TIMEOUT
            # property, and most have one (tests/timeouts.txt, scaled by
            # the build: 90 s for a 30 s case under ASan), so the limit is
            # also kept here: a named case that is still running when
            # TIMEOUT seconds per round of JOBS cases have passed has hung
            # on the bug.
            limit = None
            if by:
                rounds = -(-len(by) // args.jobs)
                limit = args.timeout * rounds
            rc, out = run(["ctest", "--test-dir", args.build] + select +
                          ["--timeout", str(args.timeout),
                           "--stop-on-failure", "-j%d" % args.jobs], ROOT,
                          timeout=limit)
            if rc is None:
                out += "\n\t0 - %s (limit of %d s)\n" % (",".join(by), limit)
        finally:
            with open(path, "w") as f:
                f.write(original)
            if targets is not None:
                rc_restore, out_restore = run(entry_build, ROOT)
                if rc_restore != 0:
                    sys.exit("the restored tree does not build:\n" +
                             out_restore)
        left = kill_leftovers(args.build)
        if left:
            print("%-26s left %d process(es) running, killed: %s" % (
                e["name"], len(left), "; ".join(left[:3])), flush=True)
        failed = [l.split("-", 1)[1].strip().split(" ")[0]
                  for l in out.splitlines() if l.startswith("\t")
                  and " - " in l]
        took = time.time() - t0
        if rc != 0:
            caught.append(e)
            print("%-26s caught by %s (%.0f s)" % (
                e["name"], ",".join(failed[:3]) or "ctest", took), flush=True)
        elif e.get("equivalent"):
            equivalent.append(e)
            print("%-26s survived, EQUIVALENT (%s)" % (
                e["name"], e["equivalent"]), flush=True)
        else:
            survivors.append((e, lineno))
            print("%-26s SURVIVED (%.0f s)" % (e["name"], took), flush=True)
    if full_rebuild:
        run(build, ROOT)  # leave the build matching the restored tree

    total = len(caught) + len(survivors)
    print("\ncaught %d of %d (%.0f%%), %d invalid, %d equivalent (not "
          "counted: no test can tell them from the original)" % (
              len(caught), total, 100.0 * len(caught) / total if total else 0,
              len(invalid), len(equivalent)))
    if absent:
        print("not run, their tests not in this build: %d (%s)" % (
            len(absent), ",".join(e["name"] for e in absent)))
    for e, lineno in survivors:
        print("\nsurvivor %s: %s\n  %s:%d\n  - %s\n  + %s" % (
            e["name"], e["what"], e["file"], lineno, e["old"], e["new"]))
    for e, why in invalid:
        print("\ninvalid %s (%s): %s" % (e["name"], why, e["file"]))
    return 0 if not survivors and not invalid else 1


if __name__ == "__main__":
    sys.exit(main())

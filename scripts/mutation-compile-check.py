#!/usr/bin/env python3
"""Does every mutant of the catalogue build under the strictest compiler?

CI's mutation sample (scripts/mutation-sample.sh) plants two catalogue
entries a day in its clang ASan tree, built with -Werror. A mutant that
builds with gcc but not with clang (a variable left set but unused, && in
||) is reported there as invalid and fails CI on the day it is drawn.
This script finds such entries beforehand, without building: for each
entry it writes the mutant, compiles one translation unit with the
tree's own command plus -fsyntax-only -Werror, and restores the file.
A header's mutant is compiled through the first translation unit that
includes it.

    scripts/mutation-compile-check.py BUILD

BUILD is a tree configured with -DCMAKE_EXPORT_COMPILE_COMMANDS=ON (for
CI's compiler: -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14
-DQS_SANITIZE=address); nothing needs to be built in it. Exits 1 when an
entry does not apply or does not compile. Sources are restored, their
text and their times, even when the check is interrupted.
"""
import importlib.util
import json
import os
import re
import shlex
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def load_checker():
    spec = importlib.util.spec_from_file_location(
        "mutation_check", os.path.join(ROOT, "scripts", "mutation-check.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def includes(tu_path, header):
    """Whether the translation unit names the header in an #include."""
    base = re.escape(os.path.basename(header))
    try:
        with open(tu_path, errors="replace") as f:
            return re.search(r'#\s*include\s*[<"]([^>"]*/)?' + base + r'[>"]',
                             f.read()) is not None
    except OSError:
        return False


def syntax_command(entry):
    """The compile command of a unit, made to check syntax only, as errors."""
    args = shlex.split(entry["command"]) if "command" in entry \
        else list(entry["arguments"])
    out, skip = [], False
    for a in args:
        if skip:
            skip = False
            continue
        if a == "-o":
            skip = True
            continue
        out.append(a)
    return out + ["-fsyntax-only", "-Werror"]


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    build = os.path.abspath(sys.argv[1])
    db_path = os.path.join(build, "compile_commands.json")
    if not os.path.exists(db_path):
        sys.exit("mutation-compile-check: no %s (configure with "
                 "-DCMAKE_EXPORT_COMPILE_COMMANDS=ON)" % db_path)
    with open(db_path) as f:
        db = json.load(f)
    units = {os.path.relpath(os.path.join(e["directory"], e["file"]), ROOT): e
             for e in db}
    m = load_checker()
    entries = m.parse_catalogue(os.path.join(ROOT, "tests", "mutation",
                                             "catalogue.txt"))
    bad = 0
    for e in entries:
        path = os.path.join(ROOT, e["file"])
        with open(path) as f:
            text = f.read()
        r = m.mutate(text, e)
        if isinstance(r, str):
            bad += 1
            print("%-26s does not apply: %s" % (e["name"], r), flush=True)
            continue
        unit = units.get(e["file"])
        if unit is None:
            unit = next((u for k, u in sorted(units.items())
                         if includes(os.path.join(ROOT, k), e["file"])), None)
        if unit is None:
            bad += 1
            print("%-26s no translation unit includes %s" %
                  (e["name"], e["file"]), flush=True)
            continue
        # The file is put back with its own times as well as its text: a
        # restored file with a new time would make the next build of the
        # tree recompile every unit the check touched and relink every
        # program (more than two minutes of CI's mutation sample).
        st = os.stat(path)
        try:
            with open(path, "w") as f:
                f.write(r[0])
            p = subprocess.run(syntax_command(unit), cwd=unit["directory"],
                               capture_output=True, text=True)
        finally:
            with open(path, "w") as f:
                f.write(text)
            os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
        if p.returncode != 0:
            bad += 1
            first = (p.stderr.strip().splitlines() or ["(no message)"])[0]
            print("%-26s does not compile: %s" % (e["name"], first),
                  flush=True)
    print("mutation-compile-check: %d of %d entries compile as mutants" %
          (len(entries) - bad, len(entries)))
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()

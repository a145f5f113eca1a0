#!/usr/bin/env python3
"""Check that every ctest case of a build has a verdict that cannot lie.

    scripts/check-verdicts.py BUILD_DIR

Reads `ctest --show-only=json-v1` and fails (exit 1, one line per problem)
if a case
  - sets PASS_REGULAR_EXPRESSION (ctest then ignores its exit status);
  - lacks SKIP_RETURN_CODE 77, the suite's skip code;
  - lacks the sanitizer report patterns in FAIL_REGULAR_EXPRESSION;
  - lacks ASAN_OPTIONS, UBSAN_OPTIONS or TSAN_OPTIONS with halt_on_error=1
    in its ENVIRONMENT;
  - runs `sh -c SCRIPT` with its skip's `exit 77` in an argument after
    SCRIPT: a `;` in a CMake string splits the script there, so sh runs
    only the part before it and the case passes instead of skipping.
cmake/QsTestVerdict.cmake sets all of these; this check catches a case
added around it (the ctest case verdict_check, label lint).
"""
import json
import subprocess
import sys

SANITIZER_RE = "(ERROR|WARNING|FATAL): (Address|Leak|Thread|UndefinedBehavior)Sanitizer"


def main():
    if len(sys.argv) != 2:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    out = subprocess.run(
        ["ctest", "--test-dir", sys.argv[1], "--show-only=json-v1"],
        check=True, capture_output=True, text=True).stdout
    tests = json.loads(out)["tests"]
    problems = []
    for t in tests:
        props = {p["name"]: p["value"] for p in t.get("properties", [])}
        name = t["name"]
        if "PASS_REGULAR_EXPRESSION" in props:
            problems.append(f"{name}: PASS_REGULAR_EXPRESSION (the exit "
                            "status is ignored; use qs_add_expect_test)")
        if str(props.get("SKIP_RETURN_CODE")) != "77":
            problems.append(f"{name}: SKIP_RETURN_CODE is "
                            f"{props.get('SKIP_RETURN_CODE')}, not 77")
        if SANITIZER_RE not in props.get("FAIL_REGULAR_EXPRESSION", []):
            problems.append(f"{name}: no sanitizer report patterns in "
                            "FAIL_REGULAR_EXPRESSION")
        cmd = t.get("command", [])
        for i, arg in enumerate(cmd[:-2]):
            if (arg.endswith("/sh") or arg == "sh") and cmd[i + 1] == "-c" \
                    and any("exit 77" in a for a in cmd[i + 3:]) \
                    and "exit 77" not in cmd[i + 2]:
                problems.append(f"{name}: sh -c runs {cmd[i + 2]!r} and its "
                                "'exit 77' is a separate argument (a ';' in "
                                "the CMake string split it): the case passes "
                                "instead of skipping")
        env = {}
        for kv in props.get("ENVIRONMENT", []):
            k, _, v = kv.partition("=")
            env[k] = v
        for var in ("ASAN_OPTIONS", "UBSAN_OPTIONS", "TSAN_OPTIONS"):
            if "halt_on_error=1" not in env.get(var, "").split(":"):
                problems.append(f"{name}: {var} lacks halt_on_error=1")
    for p in problems:
        print("check-verdicts:", p)
    print(f"check-verdicts: {len(tests)} cases, {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())

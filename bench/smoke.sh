#!/bin/sh
# Smoke run of one benchmark tool: it must exit 0 and print at least one
# JSON record of its own. Usage: smoke.sh <tool name> <binary> [args...]
name=$1
shift
out=$("$@")
rc=$?
printf '%s\n' "$out"
if [ "$rc" -ne 0 ]; then
    echo "smoke: $name exited with status $rc" >&2
    exit 1
fi
if ! printf '%s\n' "$out" | grep -q "^{\"tool\":\"$name\""; then
    echo "smoke: $name printed no JSON record" >&2
    exit 1
fi

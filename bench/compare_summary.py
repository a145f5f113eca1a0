#!/usr/bin/env python3
"""Median table of a bench/compare_mercury.sh run: ours, Mercury, ratio.

usage: compare_summary.py RECORDS.jsonl [LOAD.txt]
Ratios are ours / Mercury: below 1 is better for a time, above 1 for a
rate or a bandwidth. The floor column is the raw TCP figure of the same
run (ping-pong round trip, stream bandwidth). When the run has our native
TCP plugin ("native" records), its column and its ratio to Mercury's
ofi+tcp follow on the TCP rows.
"""
import json
import statistics
import sys


def load(path):
    recs = []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line.startswith("{"):
                try:
                    recs.append(json.loads(line))
                except json.JSONDecodeError:
                    pass
    return recs


def median(values):
    return statistics.median(values) if values else None


def pick(recs, **want):
    return [r for r in recs if all(r.get(k) == v for k, v in want.items())]


def fmt(v, unit):
    if v is None:
        return "-"
    if unit == "us":
        return f"{v:.1f} us"
    if unit == "/s":
        return f"{v:,.0f}/s"
    return f"{v / 1000:.2f} GB/s"


LIBS = ("qs", "mercury", "before", "native")


def main():
    recs = load(sys.argv[1])
    has_before = any(r.get("lib") == "before" for r in recs)
    has_native = any(r.get("lib") == "native" for r in recs)
    rows = []
    for fabric, label in (("tcp", "TCP"), ("shm", "shared memory")):
        lat = {lib: median([r["median_us"] for r in pick(
            recs, lib=lib, fabric=fabric, tool="hg_rate", metric="latency")])
            for lib in LIBS}
        floor = None
        if fabric == "tcp":
            floor = median([r["median_us"] for r in pick(
                recs, lib="floor", metric="pingpong", mode="busy")])
        rows.append((f"empty RPC round trip, {label}", lat, floor, "us"))
        rate = {lib: median([r["rpc_per_s_window_median"] for r in pick(
            recs, lib=lib, fabric=fabric, tool="hg_rate", metric="rate",
            inflight=16)]) for lib in LIBS}
        rows.append((f"rate, 16 in flight, {label}", rate, None, "/s"))
        for size, name in ((65536, "64 KiB"), (1 << 20, "1 MiB"),
                           (16 << 20, "16 MiB")):
            bw = {lib: median([r["MBps"] for r in pick(
                recs, lib=lib, fabric=fabric, tool="hg_bw", metric="pull",
                size=size)]) for lib in LIBS}
            floor = None
            if fabric == "tcp":
                floor = median([r["MBps"] for r in pick(
                    recs, lib="floor", metric="stream", size=size)])
            rows.append((f"pull {name}, {label}", bw, floor, "MB/s"))
    def ratio(a, b):
        return f"{a / b:.2f}x" if a and b else "-"

    if has_before:
        print("| measure | before | after | Mercury 2.4.1 | before / Mercury "
              "| after / Mercury | raw TCP floor |")
        print("|---|---|---|---|---|---|---|")
    elif has_native:
        print("| measure | ours (ofi+tcp, sm) | ours (native tcp) "
              "| Mercury 2.4.1 | ours / Mercury | native / Mercury "
              "| native / floor | raw TCP floor |")
        print("|---|---|---|---|---|---|---|---|")
    else:
        print("| measure | ours | Mercury 2.4.1 | ours / Mercury "
              "| raw TCP floor |")
        print("|---|---|---|---|---|")
    for name, v, floor, unit in rows:
        if all(x is None for x in v.values()):
            continue  # a fabric the run skipped (--tcp-only)
        fl = fmt(floor, unit) if floor else ""
        if has_native and not has_before:
            print(f"| {name} | {fmt(v['qs'], unit)} "
                  f"| {fmt(v['native'], unit)} | {fmt(v['mercury'], unit)} "
                  f"| {ratio(v['qs'], v['mercury'])} "
                  f"| {ratio(v['native'], v['mercury'])} "
                  f"| {ratio(v['native'], floor)} | {fl} |")
        elif has_before:
            print(f"| {name} | {fmt(v['before'], unit)} | {fmt(v['qs'], unit)} "
                  f"| {fmt(v['mercury'], unit)} "
                  f"| {ratio(v['before'], v['mercury'])} "
                  f"| {ratio(v['qs'], v['mercury'])} | {fl} |")
        else:
            print(f"| {name} | {fmt(v['qs'], unit)} | {fmt(v['mercury'], unit)} "
                  f"| {ratio(v['qs'], v['mercury'])} | {fl} |")
    if len(sys.argv) > 2:
        with open(sys.argv[2]) as f:
            loads = [l.strip() for l in f if l.strip()]
        print()
        print("load: " + " / ".join(l.split("load average:")[-1].strip()
                                    for l in loads))


if __name__ == "__main__":
    main()

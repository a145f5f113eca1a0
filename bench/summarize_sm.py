#!/usr/bin/env python3
"""Median table of bench/run_sm.sh runs: one column per run file, then the
median across runs. Usage: summarize_sm.py run1.jsonl run2.jsonl ..."""
import json
import statistics
import sys


def rows_of(path):
    out = {}
    with open(path) as f:
        for line in f:
            try:
                r = json.loads(line)
            except ValueError:
                continue
            t, m = r.get("tool"), r.get("metric")
            if t == "floor_shm" and m == "pingpong":
                out["floor_shm ping-pong round trip (us)"] = r["median_us"]
            elif t == "floor_shm":
                out["floor_shm %s %s (MB/s)" % (m, size(r["size"]))] = r["median_mbs"]
            elif t == "floor_tcp" and m == "pingpong" and r.get("mode") == "busy":
                out["floor_tcp ping-pong busy round trip (us)"] = r["median_us"]
            elif t == "floor_tcp" and m == "stream":
                out["floor_tcp stream %s (MB/s)" % size(r.get("chunk", r.get("size", 0)))] = r.get("MBps", 0)
            elif t == "hg_rate" and m == "latency":
                out["%s hg_rate %s round trip (us)" % (r["info"], r["mode"])] = r["median_us"]
            elif t == "hg_rate" and m == "rate":
                k = "%s hg_rate %s %d in flight" % (r["info"], r["mode"], r["inflight"])
                out[k + " (RPC/s)"] = r["rpc_per_s"]
                out[k + ", median window (RPC/s)"] = r["rpc_per_s_window_median"]
            elif t == "idle_server":
                out["%s idle waiting server, CPU s over %d s" % (r["info"], r["idle_s"])] = r["cpu_s"]
            elif t == "hg_bw" and m == "pull":
                k = "%s hg_bw pull %s" % (r["info"], size(r["size"]))
                out[k + " (MB/s)"] = r["MBps"]
                out[k + ", median transfer (MB/s)"] = r["MBps_median_transfer"]
    return out


def size(n):
    n = int(n)
    for unit, div in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= div and n % div == 0:
            return "%d %s" % (n // div, unit)
    return "%d B" % n


def main():
    runs = [rows_of(p) for p in sys.argv[1:]]
    keys = []
    for r in runs:
        for k in r:
            if k not in keys:
                keys.append(k)
    loads = []
    for p in sys.argv[1:]:
        with open(p) as f:
            for line in f:
                try:
                    loads.append(json.loads(line)["load1"])
                except (ValueError, KeyError):
                    pass
    if loads:
        print("load average (1 min) during the runs: %.1f to %.1f" % (min(loads), max(loads)))
        print()
    print("| measurement | median | runs |")
    print("|---|---|---|")
    for k in keys:
        vals = [r[k] for r in runs if k in r]
        med = statistics.median(vals)
        fmt = "%.2f" if med < 100 else "%.0f"
        print("| %s | %s | %s |" % (k, fmt % med, ", ".join(fmt % v for v in vals)))


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Median tables from the JSON records of the benchmark tools.

    bench/summarize.py OUT/run1.jsonl OUT/run2.jsonl ...

Each file holds the records of one run of bench/run_all.sh. For every
quantity the table shows the median over the runs and, in brackets, the
lowest and highest run, so the noise of a shared machine stays visible.
The issue's targets are checked against floors measured in the same runs.
Only the standard library is used.
"""
import json
import statistics
import sys
from collections import defaultdict

SIZES = [4096 * 4 ** i for i in range(7)]


def size_label(n):
    if n >= 1 << 20:
        return "%d MiB" % (n >> 20)
    if n >= 1 << 10:
        return "%d KiB" % (n >> 10)
    return "%d B" % n


def load(paths):
    """Values per (key, field), one list entry per run that produced it,
    and the same by run index (for ratios taken within one run)."""
    vals = defaultdict(list)
    flags = defaultdict(list)
    global BYRUN
    BYRUN = defaultdict(dict)
    for run, path in enumerate(paths):
        seen = defaultdict(list)
        with open(path) as f:
            for line in f:
                line = line.strip()
                if not line.startswith("{"):
                    continue
                try:
                    r = json.loads(line)
                except ValueError:
                    continue
                # A record that timed nothing carries no measurement.
                if r.get("iters") == 0 or r.get("count") == 0:
                    continue
                for key, fields in keys_of(r):
                    for name in fields:
                        v = r.get(name)
                        if isinstance(v, bool):
                            flags[(key, name)].append(v)
                        elif isinstance(v, (int, float)):
                            seen[(key, name)].append(float(v))
        # A tool run twice in one run (sim_speed --repeat) counts once.
        for k, v in seen.items():
            vals[k].append(statistics.median(v))
            BYRUN[k][run] = statistics.median(v)
    return vals, flags


BYRUN = {}


def ratio(num, den, invert=False):
    """Median and range over runs of num/den, each taken within one run."""
    a, b = BYRUN.get(num, {}), BYRUN.get(den, {})
    rs = [a[r] / b[r] for r in a if r in b and b[r] > 0]
    if invert:
        rs = [1 / x for x in rs if x > 0]
    if not rs:
        return ""
    if len(rs) == 1:
        return "; within-run ratio %.2fx" % rs[0]
    return "; within-run ratios: median %.2fx (%.2f–%.2f, %d runs)" % (
        statistics.median(rs), min(rs), max(rs), len(rs))


def keys_of(r):
    tool, metric = r.get("tool"), r.get("metric")
    if tool == "floor_tcp" and metric == "pingpong":
        yield ("floor_pp", r["procs"], r["mode"]), ["median_us", "p99_us"]
    elif tool == "floor_tcp" and metric == "stream":
        yield ("floor_stream", r["size"]), ["MBps", "check_ok"]
    elif tool == "fi_pingpong":
        yield ("fi", r["ep"], r["size"]), ["rtt_us", "oneway_us", "MBps"]
    elif tool == "hg_rate" and metric == "latency":
        yield ("lat", r["info"], r["procs"], r["mode"]), [
            "median_us", "p99_us", "truncated"]
    elif tool == "hg_rate" and metric == "rate":
        yield ("rate", r["info"], r["procs"], r["mode"], r["inflight"]), [
            "rpc_per_s", "rpc_per_s_window_median", "truncated"]
    elif tool == "hg_bw":
        yield ("bw", r["info"], r["procs"], r["mode"], metric, r["size"]), [
            "MBps", "MBps_median_transfer", "check_ok", "truncated"]
    elif tool == "sim_speed":
        yield ("sim", r["nodes"]), [
            "rpc_per_real_s", "sim_s_per_real_s", "events_per_real_s",
            "seeds_per_cpu_hour", "setup_ms", "rpc_per_cpu_s"]


def med(vals, key, field):
    v = vals.get((key, field))
    return statistics.median(v) if v else None


def cell(vals, key, field, fmt="%.1f"):
    v = vals.get((key, field))
    if not v:
        return "—"
    m = statistics.median(v)
    if len(v) == 1:
        return fmt % m
    return (fmt + " (" + fmt + "–" + fmt + ")") % (m, min(v), max(v))


def short(info):
    return info.replace("://127.0.0.1:0", "")


def main(paths):
    vals, flags = load(paths)
    infos = sorted({k[0][1] for k in vals if k[0][0] in ("lat", "bw")},
                   key=lambda i: (i.startswith("sim"), i))
    out = []
    p = out.append

    p("Medians of %d run(s); brackets give the lowest and highest run." %
      len(paths))
    p("")
    p("### Round trip of a small message (us)")
    p("")
    p("| path | procs | progress | median | p99 |")
    p("|---|---|---|---|---|")
    for procs in (1, 2):
        for mode in ("busy", "blocking"):
            key = ("floor_pp", procs, mode)
            if (key, "median_us") in vals:
                p("| raw TCP socket, 1 B, TCP_NODELAY | %d | %s | %s | %s |" %
                  (procs, mode, cell(vals, key, "median_us", "%.2f"),
                   cell(vals, key, "p99_us", "%.1f")))
    for ep in ("rdm", "msg"):
        key = ("fi", ep, 1)
        if (key, "rtt_us") in vals:
            p("| fi_pingpong -p tcp -e %s, 1 B (2 x usec/xfer) | 2 | busy | "
              "%s | — |" % (ep, cell(vals, key, "rtt_us", "%.2f")))
    for info in infos:
        for procs in (1, 2):
            for mode in ("busy", "noblock", "wait"):
                key = ("lat", info, procs, mode)
                if (key, "median_us") in vals:
                    p("| hg_rate %s, empty RPC | %d | %s | %s | %s |" %
                      (short(info), procs, mode,
                       cell(vals, key, "median_us", "%.2f"),
                       cell(vals, key, "p99_us", "%.1f")))
    for field, title in (
            ("rpc_per_s", "RPC rate (RPC/s) with N in flight: RPCs / total "
             "time"),
            ("rpc_per_s_window_median", "RPC rate (RPC/s) with N in flight: "
             "median of 20 windows of the same run")):
        p("")
        p("### " + title)
        p("")
        p("| info | procs | progress | N=1 | N=4 | N=16 | N=64 |")
        p("|---|---|---|---|---|---|---|")
        for info in infos:
            for procs in (1, 2):
                for mode in ("busy", "noblock", "wait"):
                    row = [cell(vals, ("rate", info, procs, mode, n), field,
                                "%.0f") for n in (1, 4, 16, 64)]
                    if any(c != "—" for c in row):
                        p("| %s | %d | %s | %s |" % (short(info), procs, mode,
                                                      " | ".join(row)))
    bw_cols = []
    for info in infos:
        for procs in (1, 2):
            for op in ("pull", "push"):
                for mode in ("busy", "noblock", "wait"):
                    if any(k[0][:5] == ("bw", info, procs, mode, op)
                           for k in vals):
                        bw_cols.append((info, procs, mode, op))
    head = ["size", "raw TCP stream"] + [
        "%s %s %dp %s" % (op, short(info), procs, mode)
        for info, procs, mode, op in bw_cols]
    for field, title in (
            ("MBps", "Bandwidth (MB/s, 1 MB = 10^6 bytes): bytes / total "
             "time of the transfers"),
            ("MBps_median_transfer", "Bandwidth (MB/s): size / median time "
             "of one transfer, same runs")):
        p("")
        p("### " + title)
        p("")
        p("| " + " | ".join(head) + " |")
        p("|" + "---|" * len(head))
        for size in SIZES:
            row = [size_label(size),
                   cell(vals, ("floor_stream", size), "MBps", "%.0f")]
            for info, procs, mode, op in bw_cols:
                row.append(cell(vals, ("bw", info, procs, mode, op, size),
                                field, "%.0f"))
            p("| " + " | ".join(row) + " |")
    key = ("fi", "rdm", 16777216)
    if (key, "MBps") in vals:
        p("")
        p("fi_pingpong -p tcp -e rdm, 16 MiB: %s MB/s." %
          cell(vals, key, "MBps", "%.0f"))
    bad = [k for k, v in flags.items() if k[1] == "check_ok" and not all(v)]
    p("")
    p("Byte checks: %s." % ("all passed" if not bad else
                            "FAILED for " + ", ".join(str(k[0]) for k in bad)))
    cut = sorted({" ".join(str(x) for x in k[0]).replace(
        "://127.0.0.1:0", "") for k, v in flags.items()
        if k[1] == "truncated" and any(v)})
    if cut:
        p("")
        p("Cut short by the time bound (5 s per measurement) in at least one "
          "run, so measured on fewer operations: " + "; ".join(cut) + ".")

    p("")
    p("### Targets (issue 5), against floors from the same runs")
    p("")
    for procs in (1, 2):
        floor = med(vals, ("floor_pp", procs, "busy"), "median_us")
        hg = med(vals, ("lat", "ofi+tcp://127.0.0.1:0", procs, "busy"),
                 "median_us")
        fkey = (("floor_pp", procs, "busy"), "median_us")
        if floor and hg:
            p("- busy-poll RPC round trip, ofi+tcp, %d process(es): %.2f us "
              "vs raw TCP %.2f us = %.2fx (target <= 2x): %s%s" %
              (procs, hg, floor, hg / floor,
               "MET" if hg <= 2 * floor else "NOT MET",
               ratio((("lat", "ofi+tcp://127.0.0.1:0", procs, "busy"),
                      "median_us"), fkey)))
        for mode in ("noblock", "wait"):
            w = med(vals, ("lat", "ofi+tcp://127.0.0.1:0", procs, mode),
                    "median_us")
            if floor and w:
                p("- %s-mode RPC round trip, ofi+tcp, %d process(es): %.2f us "
                  "= %.2fx the busy raw TCP round trip%s" %
                  (mode, procs, w, w / floor,
                   ratio((("lat", "ofi+tcp://127.0.0.1:0", procs, mode),
                          "median_us"), fkey)))
        block = med(vals, ("floor_pp", procs, "blocking"), "median_us")
        w = med(vals, ("lat", "ofi+tcp://127.0.0.1:0", procs, "wait"),
                "median_us")
        if block and w:
            p("- wait-mode RPC round trip, ofi+tcp, %d process(es), against "
              "the blocking raw TCP round trip %.2f us: %.2fx%s" %
              (procs, block, w / block,
               ratio((("lat", "ofi+tcp://127.0.0.1:0", procs, "wait"),
                      "median_us"),
                     (("floor_pp", procs, "blocking"), "median_us"))))
    for procs in (1, 2):
        for mode in ("busy", "noblock", "wait"):
            key = ("rate", "ofi+tcp://127.0.0.1:0", procs, mode, 16)
            r = med(vals, key, "rpc_per_s")
            w = med(vals, key, "rpc_per_s_window_median")
            if r:
                p("- rate with 16 in flight, ofi+tcp, %d process(es), %s: "
                  "%.0f RPC/s (target >= 100,000): %s%s" %
                  (procs, mode, r, "MET" if r >= 100000 else "NOT MET",
                   "; median window %.0f RPC/s" % w if w else ""))
    stream = med(vals, ("floor_stream", 16777216), "MBps")
    for procs in (1, 2):
        for mode in ("busy", "noblock", "wait"):
            key = ("bw", "ofi+tcp://127.0.0.1:0", procs, mode, "pull",
                   16777216)
            pull = med(vals, key, "MBps")
            pmed = med(vals, key, "MBps_median_transfer")
            if stream and pull:
                p("- 16 MiB pull, ofi+tcp, %d process(es), %s: %.0f MB/s vs "
                  "raw stream %.0f MB/s = %.2fx (target >= 1x): %s%s%s" %
                  (procs, mode, pull, stream, pull / stream,
                   "MET" if pull >= stream else "NOT MET",
                   "; median transfer %.0f MB/s" % pmed if pmed else "",
                   ratio((key, "MBps"),
                         (("floor_stream", 16777216), "MBps"))))

    if any(k[0][0] == "sim" for k in vals):
        p("")
        p("### Simulator speed (sim_speed)")
        p("")
        p("| nodes | RPC/s (real) | sim s per real s | events per real s | "
          "set-up ms | seeds of 1000 RPCs per CPU-hour |")
        p("|---|---|---|---|---|---|")
        for nodes in sorted({k[0][1] for k in vals if k[0][0] == "sim"}):
            key = ("sim", nodes)
            p("| %d | %s | %s | %s | %s | %s |" %
              (nodes, cell(vals, key, "rpc_per_real_s", "%.0f"),
               cell(vals, key, "sim_s_per_real_s", "%.4f"),
               cell(vals, key, "events_per_real_s", "%.0f"),
               cell(vals, key, "setup_ms", "%.1f"),
               cell(vals, key, "seeds_per_cpu_hour", "%.0f")))
    print("\n".join(out))


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("usage: summarize.py run1.jsonl [run2.jsonl ...]")
    main(sys.argv[1:])

#!/usr/bin/env python3
"""Median table of a bench/compare_mercury.sh run: ours, Mercury, ratio.

usage: compare_summary.py RECORDS.jsonl [LOAD.txt]
Ratios are ours / Mercury: below 1 is better for a time, above 1 for a
rate or a bandwidth. The floor column is the raw TCP figure of the same
run (ping-pong round trip, stream bandwidth). When the run has our native
TCP plugin ("native" records), its column and its ratio to Mercury's
ofi+tcp follow on the TCP rows.

When the run swept hg_rate's payload (compare_mercury.sh --payload), a
second table follows: per fabric and payload, each library's rate with 16
in flight, the share of its own empty-RPC rate it keeps, its round trip
with 1 in flight, and ours / Mercury.

When the records carry their round (compare_mercury.sh tags each one), a
last table gives each target of issue 27 round by round, each round's
libraries having run back to back, with the floor of that round beside
the targets that have one, and in how many rounds the target was met: a
target asked for "in every run" is met only when it is met in all.
"""
import json
import statistics
import types
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


def stream_floor(recs):
    """floor_tcp's stream records to compare with: the busy ones (the
    libraries are measured busy), or those of a floor_tcp that measured
    only blocking streams and did not say so."""
    st = [r for r in recs if r.get("lib") == "floor" and
          r.get("metric") == "stream"]
    busy = [r for r in st if r.get("mode") == "busy"]
    return busy if busy else [r for r in st if "mode" not in r]


def fmt(v, unit):
    if v is None:
        return "-"
    if unit == "us":
        return f"{v:.2f} us"
    if unit == "/s":
        return f"{v:,.0f}/s"
    return f"{v / 1000:.2f} GB/s"


LIBS = ("qs", "mercury", "before", "native")


def spec_key(spec):
    """Sort payload labels: sizes first by value, then eager, eager+N."""
    if spec.startswith("eager"):
        extra = spec[6:] if spec.startswith("eager+") else "0"
        return (1, parse_size(extra))
    return (0, parse_size(spec))


def parse_size(s):
    mult = {"K": 1 << 10, "M": 1 << 20}.get(s[-1:].upper(), 1)
    return int(s[:-1] if mult > 1 else s) * mult


def floor_table(recs, specs):
    """floor_shm's payload ping-pong and message rate, same run."""
    fl = [r for r in recs if r.get("lib") == "floor" and
          r.get("fabric") == "shm" and "payload" in r]
    sizes = sorted({r["payload"] for r in fl})
    if len(sizes) < 2:
        return
    print()
    print("Floor of the same run (floor_shm: a message of that size copied "
          "in and out of shared memory, two busy processes):")
    print()
    print("| payload | round trip | messages/s, 16 unacknowledged |")
    print("|---|---|---|")
    for size in sizes:
        rtt = median([r["median_us"] for r in fl if r["payload"] == size and
                      r["metric"] == "pingpong"])
        rate = median([r["msg_per_s"] for r in fl if r["payload"] == size
                       and r["metric"] == "msgrate"])
        print(f"| {size} | {fmt(rtt, 'us')} | {fmt(rate, '/s')} |")


def sweep_table(recs):
    """The payload sweep: rate with 16 in flight and round trip per size."""
    sw = [r for r in recs if r.get("tool") == "hg_rate" and
          "payload_spec" in r and r.get("mode") == "busy"]
    specs = sorted({r["payload_spec"] for r in sw}, key=spec_key)
    if len(specs) < 2:
        return
    libs = [l for l in ("before", "qs", "native", "mercury") if any(
        r.get("lib") == l for r in sw)]
    names = {"before": "ours before", "qs": "ours", "native": "ours native",
             "mercury": "Mercury"}
    print()
    print("Payload sweep: RPC/s with 16 in flight (median window, median of "
          "rounds), share of the same library's empty-RPC rate, round trip "
          "with 1 in flight.")
    for fabric, label in (("shm", "shared memory (ours sm, Mercury na+sm)"),
                          ("tcp", "TCP (ours ofi+tcp and native tcp, Mercury "
                           "ofi+tcp)")):
        fr = [r for r in sw if r.get("fabric") == fabric]
        if not fr:
            continue
        here = [l for l in libs if any(r["lib"] == l for r in fr)]
        print()
        print(f"{label}:")
        print()
        head = "| payload | " + " | ".join(
            f"{names[l]} bytes | {names[l]} RPC/s | kept | {names[l]} RTT"
            for l in here)
        cmp = [l for l in here if l != "mercury"] if "mercury" in here else []
        head += "".join(f" | {names[l]} / Mercury rate" for l in cmp)
        print(head + " |")
        print("|---" * (1 + 4 * len(here) + len(cmp)) + "|")

        def med(lib, spec, metric, key, **kw):
            return median([r[key] for r in fr if r["lib"] == lib and
                           r["payload_spec"] == spec and
                           r["metric"] == metric and
                           all(r.get(k) == v for k, v in kw.items())])

        empty = {l: med(l, "0", "rate", "rpc_per_s_window_median",
                        inflight=16) for l in here}
        for spec in specs:
            cells = [spec]
            rate = {}
            for l in here:
                size = med(l, spec, "rate", "payload", inflight=16)
                rate[l] = med(l, spec, "rate", "rpc_per_s_window_median",
                              inflight=16)
                rtt = med(l, spec, "latency", "median_us")
                kept = (f"{rate[l] / empty[l]:.0%}" if rate[l] and empty[l]
                        else "-")
                cells += [f"{size:.0f}" if size is not None else "-",
                          fmt(rate[l], "/s"), kept, fmt(rtt, "us")]
            for l in cmp:
                cells.append(f"{rate[l] / rate['mercury']:.2f}x"
                             if rate[l] and rate["mercury"] else "-")
            print("| " + " | ".join(cells) + " |")
        if fabric == "shm":
            floor_table(recs, specs)


def spread_table(recs):
    """Each pull run of 1 MiB and more, in the order it ran: its rate over
    all transfers beside the spread of the single transfers. A run that is
    slow throughout and one that stalls now and then have the same rate
    and different spreads."""
    runs = [r for r in recs if r.get("tool") == "hg_bw" and
            r.get("metric") == "pull" and r.get("size", 0) >= (1 << 20) and
            "us_p10" in r]
    if not runs:
        return
    print()
    print("| pull run | size | MB/s | transfer p10 / median / p90 / slowest "
          "(us) |")
    print("|---|---|---|---|")
    for r in runs:
        print(f"| {r['lib']} {r['fabric']} | {r['size'] >> 20} MiB "
              f"| {r['MBps']:.0f} | {r['us_p10']:.0f} / {r['us_median']:.0f} "
              f"/ {r['us_p90']:.0f} / {r['us_max']:.0f} |")


def per_round(recs, rnd):
    """The measures of one round, as functions of the library, fabric and
    size: m.rate, m.lat, m.pull, m.pull_median, m.floor, m.sweep."""
    rr = [r for r in recs if r.get("round") == rnd]

    def mine(r, lib, fabric, tool, metric):
        return (r.get("lib") == lib and r.get("fabric") == fabric and
                r.get("tool") == tool and r.get("metric") == metric)

    def rate(lib, fabric, inflight, mode="busy", payload=0):
        return median([r["rpc_per_s_window_median"] for r in rr
                    if mine(r, lib, fabric, "hg_rate", "rate") and
                    r.get("inflight") == inflight and
                    r.get("mode") == mode and
                    r.get("payload", 0) == payload])

    def lat(lib, fabric):
        return median([r["median_us"] for r in rr
                    if mine(r, lib, fabric, "hg_rate", "latency") and
                    r.get("mode") == "busy" and r.get("payload", 0) == 0])

    def pull(lib, fabric, size, key="MBps"):
        return median([r[key] for r in rr
                    if mine(r, lib, fabric, "hg_bw", "pull") and
                    r.get("size") == size and key in r])

    def pull_median(lib, fabric, size):
        return pull(lib, fabric, size, key="us_median")

    def floor(fabric, metric, key, **kw):
        src = stream_floor(rr) if metric == "stream" else rr
        return median([r[key] for r in src
                    if r.get("lib") == "floor" and r.get("fabric") == fabric
                    and r.get("metric") == metric and key in r and
                    all(r.get(k) == v for k, v in kw.items())])

    def lines(lib, fabric, tool, metric, **kw):
        """The state probes (floor_shm --probe) around the runs of lib on
        fabric with that tool and metric, before and after each: the
        line's round trips in us, and the slower CPU's copy in ns as
        .copies."""
        runs = [r for r in rr if mine(r, lib, fabric, tool, metric) and
                all(r.get(x) == v for x, v in kw.items())]
        return Probes([r[k] for r in runs
                       for k in ("cpu_line_us_before", "cpu_line_us_after")
                       if k in r],
                      [r[k] for r in runs
                       for k in ("cpu_copy_ns_before", "cpu_copy_ns_after")
                       if k in r])

    def sweep(lib):
        """spec -> rate with 16 in flight, the specs up to the eager limit."""
        out = {}
        for r in rr:
            spec = r.get("payload_spec")
            if (mine(r, lib, "shm", "hg_rate", "rate") and
                    r.get("inflight") == 16 and r.get("mode") == "busy"
                    and spec is not None and not spec.startswith("eager+")):
                out[spec] = r["rpc_per_s_window_median"]
        return out

    return types.SimpleNamespace(rate=rate, lat=lat, pull=pull,
                                 pull_median=pull_median, floor=floor,
                                 sweep=sweep, lines=lines)


class Probes(list):
    """The line round trips of some runs' state probes (the list) and the
    slower CPU's 2 KiB copy at the same moments (.copies, ns)."""

    def __init__(self, lines, copies):
        super().__init__(lines)
        self.copies = copies


# Two state probes name one place of the guest's CPUs when they are within
# this factor of each other (places measured here: 0.09, 0.14, 0.5 us).
SAME_PLACE = 1.3
# A CPU ran slowed when its copy took more than this factor of the fastest
# copy of the whole set of records: a guest's CPU slows while the host runs
# something else on its core's other thread, at no change of place (the
# copy varies by about 5% otherwise; a slowed CPU took 14% to 45% more,
# and 2 KiB RPCs then ran 1.3 M/s instead of 1.75 M/s, session 29).
SAME_SPEED = 1.1


def one_place(*groups):
    """True when every group has probes and all of them are within
    SAME_PLACE of each other: the runs they frame had the CPUs in one
    place throughout (as far as their ends tell)."""
    vals = [v for g in groups for v in g]
    if not vals or any(not g for g in groups) or min(vals) <= 0:
        return False
    return max(vals) / min(vals) <= SAME_PLACE


def moved_cpus(groups):
    """True when the runs behind a value all carry state probes and the
    probes do not name one place: the value compares runs made with the
    CPUs in different places (or a run during which they moved)."""
    return all(groups) and not one_place(*groups)


def slowed_cpus(groups, fastest):
    """True when a copy probe around the runs behind a value took more
    than SAME_SPEED times `fastest` (the set's fastest copy): a CPU ran
    slowed, at one end of a run at least."""
    copies = [c for g in groups for c in getattr(g, "copies", [])]
    return bool(fastest) and any(c > SAME_SPEED * fastest for c in copies)


def cpu_state(groups, fastest):
    """What makes a value measured with the CPUs in different states not
    count: "moved", "slowed" or None."""
    if moved_cpus(groups):
        return "moved"
    if slowed_cpus(groups, fastest):
        return "slowed"
    return None


def fastest_copy(recs):
    """The fastest copy probe of the whole set of records (ns), or None."""
    copies = [r[k] for r in recs
              for k in ("cpu_copy_ns_before", "cpu_copy_ns_after") if k in r]
    return min(copies) if copies else None


def sm_probe_groups(m):
    """The state probes of the sm runs and of the floor's message runs."""
    return (("ours", m.lines("qs", "shm", "hg_rate", "rate")),
            ("Mercury", m.lines("mercury", "shm", "hg_rate", "rate")),
            ("floor", m.lines("floor", "shm", "floor_shm", "msgrate")))


def places(m):
    """The line probes of the sm runs and the floor, for the targets'
    table."""
    cells = [f"{name} {min(g):.2f}-{max(g):.2f}"
             for name, g in sm_probe_groups(m) if g]
    return ", ".join(cells) if cells else None


def speeds(m):
    """The copy probes of the sm runs and the floor, for the targets'
    table."""
    cells = [f"{name} {min(g.copies):.1f}-{max(g.copies):.1f}"
             for name, g in sm_probe_groups(m) if g.copies]
    return ", ".join(cells) if cells else None


def ratio_of(a, b):
    return a / b if a is not None and b else None


def tcp_sndbuf_note(recs):
    """How floor_tcp's connections got their send buffer, for the floor
    rows' labels: the size asked for (--sndbuf, which compare_mercury.sh
    takes from the native plugin's NA_TCP_SNDBUF), the kernel's tuning,
    or nothing for records that do not say."""
    sizes = {r["sndbuf"] for r in recs if r.get("lib") == "floor" and
             r.get("fabric") == "tcp" and "sndbuf" in r}
    if not sizes:
        return ""
    if sizes == {0}:
        return " (send buffer: the kernel's tuning)"
    return " (send buffer asked for: " + ", ".join(
        f"{v // 1024} KiB" if v else "the kernel's tuning"
        for v in sorted(sizes)) + ")"


def pull_floors(add, fabric, size, name, sndbuf=""):
    """The floor rows under a pull target of `fabric`; `sndbuf` ends the
    TCP floors' labels (tcp_sndbuf_note)."""
    if fabric == "shm":
        add(f"  floor: memcpy, {name}",
            lambda m: m.floor("shm", "memcpy", "median_mbs", size=size),
            "{:,.0f} MB/s")
    else:
        add(f"  floor: raw TCP stream, {name}{sndbuf}",
            lambda m, size=size: m.floor("tcp", "stream", "MBps", size=size),
            "{:,.0f} MB/s")
        add(f"  native tcp pull {name}, median transfer",
            lambda m, size=size: m.pull_median("native", "tcp", size),
            "{:,.0f} us")
        add(f"  floor: raw TCP fetch of {name}, median request to last "
            f"byte{sndbuf}",
            lambda m, size=size: m.floor("tcp", "fetch", "us_median",
                                         size=size),
            "{:,.0f} us")


def targets_table(recs):
    """Issue 27's targets round by round (records tagged with "round")."""
    rounds = sorted({r["round"] for r in recs
                     if isinstance(r.get("round"), int)})
    if not rounds:
        return
    # (label, [value per round], format, test or None, [state per round])
    rows = []
    cols = {rnd: per_round(recs, rnd) for rnd in rounds}
    fastest = fastest_copy(recs)

    def add(label, fn, form, test=None, where=None):
        """where(m): the groups of state probes of the runs a round's
        value comes from; when every group has probes and they name more
        than one place of the CPUs, or a copy probe among them found a CPU
        slowed, the round's value is marked and its verdict not
        counted."""
        state = [cpu_state(where(cols[rnd]), fastest)
                 if where is not None else None for rnd in rounds]
        rows.append((label, [fn(cols[rnd]) for rnd in rounds], form, test,
                     state))

    def sm_min_ratio(m):
        ours, theirs = m.sweep("qs"), m.sweep("mercury")
        common = [s for s in ours if s in theirs and theirs[s]]
        if not common:
            return None
        return min(ours[s] / theirs[s] for s in common)

    def sm_share_ceiling(m):
        """The most of its empty rate an sm RPC can keep with a 2 KiB
        input: a 2 KiB RPC moves 2 KiB from one process to the other, 16
        in flight, so it runs no faster than floor_shm moves 2 KiB
        messages with 16 unacknowledged; that rate over the empty RPC
        rate. Below the target's 80%, the target is out of reach in that
        round. When the RPCs ran faster than the floor, the floor is no
        floor, and the cell says so instead of bounding anything."""
        empty = m.rate("qs", "shm", 16)
        kept = m.rate("qs", "shm", 16, payload=2048)
        f2k = m.floor("shm", "msgrate", "msg_per_s", payload=2048)
        if not empty or not f2k:
            return None
        # Records with state probes are paired only when the CPUs were in
        # one place for the RPCs and for the floor; a floor measured with
        # the CPUs on one core prices nothing measured across two.
        probed = (m.lines("qs", "shm", "hg_rate", "rate"),
                  m.lines("floor", "shm", "floor_shm", "msgrate",
                          payload=2048))
        if cpu_state(probed, fastest) is not None:
            return None
        ceiling = f"{min(f2k / empty, 1.0):.0%}"
        if kept is not None and kept > f2k:
            return ceiling + " (the 2 KiB RPCs ran faster than this floor)"
        return ceiling

    pct = "{:.0%}"
    times = "{:.2f}x"
    add("sm: a 2 KiB input keeps >= 80% of the empty rate, 16 in flight",
        lambda m: ratio_of(m.rate("qs", "shm", 16, payload=2048),
                           m.rate("qs", "shm", 16)),
        pct, lambda v: v >= 0.80,
        lambda m: (m.lines("qs", "shm", "hg_rate", "rate"),))
    add("  floor: floor_shm, 2 KiB messages/s, 16 unacknowledged",
        lambda m: m.floor("shm", "msgrate", "msg_per_s", payload=2048),
        "{:,.0f}/s")
    add("  floor: floor_shm, 8 B messages/s, 16 unacknowledged",
        lambda m: m.floor("shm", "msgrate", "msg_per_s", payload=8),
        "{:,.0f}/s")
    add("  ceiling from the floor: the share kept by 2 KiB RPCs at the "
        "floor's rate of 2 KiB messages (that rate / the empty RPC rate)",
        sm_share_ceiling, "{}")
    add("  the CPUs' place: one line's round trip between them (us), "
        "lowest-highest of the probes before and after the sm runs and the "
        "floor's message runs (no ceiling where they differ by more than "
        f"{SAME_PLACE}x)", places, "{}")
    add("  the CPUs' speed: the slower CPU's 2 KiB copy in cache (ns), "
        "lowest-highest of the same probes (no ceiling, and no verdict "
        "counted, where one is more than "
        f"{SAME_SPEED}x the fastest of the whole set)", speeds, "{}")
    add("sm >= 2x Mercury's na+sm at every swept size up to the eager "
        "limit (the least ratio)", sm_min_ratio, times, lambda v: v >= 2.0,
        lambda m: (m.lines("qs", "shm", "hg_rate", "rate"),
                   m.lines("mercury", "shm", "hg_rate", "rate")))
    for lib, fabric, ours, theirs in (("qs", "shm", "sm", "na+sm"),
                                      ("native", "tcp", "native tcp",
                                       "ofi+tcp")):
        for size, name in ((1 << 20, "1 MiB"), (16 << 20, "16 MiB")):
            add(f"{ours} pull {name} >= 1.1x Mercury's {theirs}",
                lambda m, lib=lib, fabric=fabric, size=size: ratio_of(
                    m.pull(lib, fabric, size),
                    m.pull("mercury", fabric, size)),
                times, lambda v: v >= 1.1,
                lambda m, lib=lib, fabric=fabric, size=size: (
                    m.lines(lib, fabric, "hg_bw", "pull", size=size),
                    m.lines("mercury", fabric, "hg_bw", "pull",
                            size=size)))
            pull_floors(add, fabric, size, name, tcp_sndbuf_note(recs))

    for mode in ("busy", "wait"):
        for inflight in (1, 16):
            add(f"ofi+tcp rate >= 1.0x Mercury's, {mode}, {inflight} in "
                "flight",
                lambda m, mode=mode, inflight=inflight: ratio_of(
                    m.rate("qs", "tcp", inflight, mode),
                    m.rate("mercury", "tcp", inflight, mode)),
                times, lambda v: v >= 1.0,
                lambda m, mode=mode, inflight=inflight: tuple(
                    m.lines(lib, "tcp", "hg_rate", "rate", mode=mode,
                            inflight=inflight)
                    for lib in ("qs", "mercury")))
    add("native tcp busy round trip <= 1.3x the raw TCP ping-pong",
        lambda m: ratio_of(m.lat("native", "tcp"),
                           m.floor("tcp", "pingpong", "median_us",
                                   mode="busy")),
        times, lambda v: v <= 1.3,
        lambda m: (m.lines("native", "tcp", "hg_rate", "latency"),
                   m.lines("floor", "tcp", "floor_tcp", "pingpong",
                           mode="busy")))
    add("  floor: raw TCP ping-pong",
        lambda m: m.floor("tcp", "pingpong", "median_us", mode="busy"),
        "{:.2f} us")
    rows = [r for r in rows if any(v is not None for v in r[1])]
    if not rows:
        return
    print()
    print("Issue 27's targets, round by round (each round ran every library "
          "back to back; a floor is that round's):")
    print()
    print("| target | " + " | ".join(f"round {r}" for r in rounds) +
          " | met |")
    print("|---" * (len(rounds) + 2) + "|")
    marks = {"moved": " (CPUs moved)", "slowed": " (a CPU slowed)"}
    reasons = {"moved": "the CPUs moved", "slowed": "a CPU slowed"}
    for label, values, form, test, state in rows:
        cells = [(form.format(v) + marks.get(st, ""))
                 if v is not None else "-" for v, st in zip(values, state)]
        if test is None:
            met = ""
        else:
            got = [v for v, st in zip(values, state)
                   if v is not None and st is None]
            n_met = sum(1 for v in got if test(v))
            met = f"{n_met} of {len(values)}"
            notes = []
            missing = sum(1 for v in values if v is None)
            if missing:
                notes.append(f"{missing} not measured")
            for st in ("moved", "slowed"):
                n = sum(1 for v, s in zip(values, state)
                        if v is not None and s == st)
                if n:
                    notes.append(f"{n} not counted: {reasons[st]}")
            if notes:
                met += " (" + "; ".join(notes) + ")"
        print(f"| {label} | " + " | ".join(cells) + f" | {met} |")


def main():
    recs = load(sys.argv[1])
    has_before = any(r.get("lib") == "before" for r in recs)
    has_native = any(r.get("lib") == "native" for r in recs)
    rows = []
    for fabric, label in (("tcp", "TCP"), ("shm", "shared memory")):
        lat = {lib: median([r["median_us"] for r in pick(
            recs, lib=lib, fabric=fabric, tool="hg_rate", metric="latency",
            mode="busy") if r.get("payload", 0) == 0]) for lib in LIBS}
        floor = None
        if fabric == "tcp":
            floor = median([r["median_us"] for r in pick(
                recs, lib="floor", fabric="tcp", metric="pingpong",
                mode="busy")])
        else:
            floor = median([r["median_us"] for r in pick(
                recs, lib="floor", fabric="shm", metric="pingpong")
                if r.get("payload", 0) == 0])
        rows.append((f"empty RPC round trip, {label}", lat, floor, "us"))
        rate = {lib: median([r["rpc_per_s_window_median"] for r in pick(
            recs, lib=lib, fabric=fabric, tool="hg_rate", metric="rate",
            inflight=16, mode="busy") if r.get("payload", 0) == 0])
            for lib in LIBS}
        rows.append((f"rate, 16 in flight, {label}", rate, None, "/s"))
        # compare_mercury.sh --wait: both processes waiting in the kernel.
        for inflight in (1, 16):
            wrate = {lib: median([r["rpc_per_s_window_median"] for r in pick(
                recs, lib=lib, fabric=fabric, tool="hg_rate", metric="rate",
                inflight=inflight, mode="wait")]) for lib in LIBS}
            rows.append((f"rate, {inflight} in flight, {label}, waiting",
                         wrate, None, "/s"))
        for size, name in ((65536, "64 KiB"), (1 << 20, "1 MiB"),
                           (16 << 20, "16 MiB")):
            bw = {lib: median([r["MBps"] for r in pick(
                recs, lib=lib, fabric=fabric, tool="hg_bw", metric="pull",
                size=size)]) for lib in LIBS}
            if fabric == "tcp":
                floor = median([r["MBps"] for r in stream_floor(recs)
                                if r.get("size") == size])
            else:
                floor = median([r["median_mbs"] for r in pick(
                    recs, lib="floor", metric="memcpy", size=size)])
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
              "| floor (TCP; shm line, memcpy) |")
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
    sweep_table(recs)
    spread_table(recs)
    targets_table(recs)
    if len(sys.argv) > 2:
        with open(sys.argv[2]) as f:
            loads = [l.strip() for l in f if l.strip()]
        print()
        print("load: " + " / ".join(l.split("load average:")[-1].strip()
                                    for l in loads))


if __name__ == "__main__":
    main()

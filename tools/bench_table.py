#!/usr/bin/env python3
"""bench_table.py — the README's benchmark table, regenerated from measurements, never typed by hand.

Reads what the benchmarks wrote:
  * kes-bench's Google Benchmark JSON (kes-bench --benchmark_out=FILE --benchmark_out_format=json):
    every case registered as "<case>:<impl>" (impl "kestrel" for Kestrel, a peer name otherwise, see
    bench/bench_main.cpp) gives one row per peer, ratio = peer time / Kestrel time;
  * bench/engine/run.sh --json FILE: the model-level runs beside ONNX Runtime and OpenCV DNN;
and replaces the part of README.md between the markers
  <!-- bench-table:begin --> and <!-- bench-table:end -->
with a Markdown table where every ratio says how many times faster Kestrel is (> 1: Kestrel faster).

usage: tools/bench_table.py [--readme README.md] [--kes-bench FILE.json ...] [--engine FILE.json ...]
       (./kestrel.sh bench-readme runs the benchmarks and this script)
"""
import argparse
import json
import re
import sys
from datetime import date

BEGIN = "<!-- bench-table:begin -->"
END = "<!-- bench-table:end -->"
UNIT_NS = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}
# Name segments Google Benchmark appends for a case's settings.
SETTING = re.compile(r"^(min_time|min_warmup_time|repeats|iterations|threads|real_time|manual_time|process_time)(:.*)?$")


def fail(msg):
    sys.stderr.write("bench_table: %s\n" % msg)
    sys.exit(1)


def load_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        fail("%s: %s" % (path, e))


def kes_bench_rows(path):
    """(case, peer, kestrel ns, peer ns) per peer of every case, and the machine line."""
    data = load_json(path)
    if not isinstance(data, dict) or not isinstance(data.get("benchmarks"), list):
        fail("%s is not Google Benchmark JSON (run kes-bench with --benchmark_out_format=json)" % path)
    by_case, order = {}, []
    medians = {b.get("run_name") for b in data["benchmarks"] if b.get("aggregate_name") == "median"}
    for b in data["benchmarks"]:
        full = b.get("run_name", b.get("name", ""))
        if b.get("error_occurred"):
            continue
        # The case's own name, without the segments settings append (".../repeats:9/real_time"), as
        # bench_main.cpp's ratio table does; wall time for cases that asked for it, else CPU time.
        parts = full.split("/")
        name = "/".join(p for p in parts if not SETTING.match(p))
        clock = "real_time" if "real_time" in parts else "cpu_time"
        if full in medians:  # with repetitions: the median only
            if b.get("aggregate_name") != "median":
                continue
        elif b.get("run_type") != "iteration":
            continue
        colon = name.rfind(":")
        if colon < 0:
            continue
        slash = name.find("/", colon)
        impl = name[colon + 1 : slash if slash >= 0 else None]
        key = name[:colon] + (name[slash:] if slash >= 0 else "")
        try:
            ns = float(b[clock]) * UNIT_NS[b.get("time_unit", "ns")]
        except (KeyError, TypeError, ValueError):
            fail("%s: benchmark %s has no usable %s" % (path, name, clock))
        if key not in by_case:
            order.append(key)
            by_case[key] = {}
        by_case[key][impl] = ns
    rows = []
    for key in order:
        impls = by_case[key]
        if "kestrel" not in impls:
            continue
        for peer, ns in impls.items():
            if peer != "kestrel":
                rows.append((key, peer, impls["kestrel"], ns))
    ctx = data.get("context", {})
    machine = "%s CPUs at %s MHz" % (ctx.get("num_cpus", "?"), ctx.get("mhz_per_cpu", "?"))
    return rows, machine


def engine_rows(path):
    """Model-level rows from bench/engine/run.sh --json: median latency against each peer."""
    data = load_json(path)
    if not isinstance(data, list):
        fail("%s is not bench/engine/run.sh --json output" % path)
    rows = []
    for entry in data:
        try:
            case = "%s, %d thread%s" % (entry["case"], entry["threads"], "" if entry["threads"] == 1 else "s")
            ours = float(entry["kestrel"]["median_ms"]) * 1e6
        except (KeyError, TypeError, ValueError):
            fail("%s: an entry lacks case/threads/kestrel.median_ms" % path)
        for peer, label in (("ort", "ONNX Runtime 1.30"), ("opencv", "OpenCV 4.6 DNN")):
            if isinstance(entry.get(peer), dict) and "median_ms" in entry[peer]:
                rows.append((case, label, ours, float(entry[peer]["median_ms"]) * 1e6))
    return rows


def human(ns):
    for unit, scale in (("s", 1e9), ("ms", 1e6), ("µs", 1e3)):
        if ns >= scale:
            return "%.3g %s" % (ns / scale, unit)
    return "%.3g ns" % ns


def table(rows, machine):
    out = [
        "Measured %s on %s; ratio = peer time / Kestrel time (> 1: Kestrel is faster)." % (date.today(), machine),
        "",
        "| case | peer | Kestrel | peer | ratio |",
        "|---|---|---|---|---|",
    ]
    for case, peer, ours, theirs in rows:
        out.append("| %s | %s | %s | %s | %.2f× |" % (case, peer, human(ours), human(theirs), theirs / ours))
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--readme", default="README.md")
    ap.add_argument("--kes-bench", action="append", default=[], help="kes-bench JSON output")
    ap.add_argument("--engine", action="append", default=[], help="bench/engine/run.sh --json output")
    ap.add_argument("--machine", default="", help="describes the machine (default: from kes-bench's context)")
    args = ap.parse_args()
    if not args.kes_bench and not args.engine:
        ap.error("give at least one --kes-bench or --engine file")
    rows, machine = [], args.machine
    for path in args.kes_bench:
        r, m = kes_bench_rows(path)
        rows += r
        machine = machine or m
    for path in args.engine:
        rows += engine_rows(path)
    if not rows:
        fail("no Kestrel/peer pairs in the measurements")
    try:
        with open(args.readme) as f:
            text = f.read()
    except OSError as e:
        fail("%s: %s" % (args.readme, e))
    if text.count(BEGIN) != 1 or text.count(END) != 1 or text.index(BEGIN) > text.index(END):
        fail("%s must hold one %s ... %s section" % (args.readme, BEGIN, END))
    new = re.sub(
        re.escape(BEGIN) + ".*?" + re.escape(END),
        lambda _: BEGIN + "\n" + table(rows, machine or "this machine") + "\n" + END,
        text,
        flags=re.S,
    )
    with open(args.readme, "w") as f:
        f.write(new)
    print("bench_table: %d rows written to %s" % (len(rows), args.readme))


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""The simulator's cost against size: docs/performance.md "How the cost grows".

Reads Google Benchmark's JSON from bench_sim's scaling family and prints, per family, the time
against the varied size (minimum over repetitions, CPU time) and the exponent k of time ~ size^k
fitted by least squares on log(time) against log(size), once over every point and once over the
points whose task count grows (the exponent of time against tasks).

  ./build/bin/bench_sim --benchmark_filter=scale --benchmark_repetitions=10 \
      --benchmark_format=json > scale.json
  python3 tests/sim/scaling_fit.py scale.json
"""
import json
import math
import sys


def slope(xs, ys):
    lx = [math.log(x) for x in xs]
    ly = [math.log(y) for y in ys]
    n = len(lx)
    mx, my = sum(lx) / n, sum(ly) / n
    sxx = sum((x - mx) ** 2 for x in lx)
    return sum((x - mx) * (y - my) for x, y in zip(lx, ly)) / sxx if sxx > 0 else 0.0


def main(argv):
    if len(argv) > 1:
        with open(argv[1]) as f:
            data = json.load(f)
    else:
        data = json.load(sys.stdin)
    # family -> size -> (min CPU time in ms, tasks)
    fam = {}
    for b in data["benchmarks"]:
        if b.get("run_type") == "aggregate":
            continue
        name = b["run_name"] if "run_name" in b else b["name"]
        family, _, arg = name.partition("/")
        if "scale" not in family:
            continue
        size = int(arg)
        ms = b["cpu_time"] * {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}[b["time_unit"]]
        prev = fam.setdefault(family, {}).get(size)
        if prev is None or ms < prev[0]:
            fam[family][size] = (ms, b.get("tasks", 0.0))
    for family, points in fam.items():
        sizes = sorted(points)
        times = [points[s][0] for s in sizes]
        tasks = [points[s][1] for s in sizes]
        line = f"{family}: time ~ size^{slope(sizes, times):.2f}, tasks ~ size^{slope(sizes, tasks):.2f}"
        if min(tasks) > 0 and max(tasks) > 2 * min(tasks):  # the tasks grow: time against them
            line += f", time ~ tasks^{slope(tasks, times):.2f}"
        print(line)
        for s, t, n in zip(sizes, times, tasks):
            print(f"  {s:>8}  {t:9.3f} ms  {n:9.0f} tasks  {1e6 * t / n if n else 0:6.1f} ns/task")


if __name__ == "__main__":
    main(sys.argv)

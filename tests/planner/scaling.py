#!/usr/bin/env python3
"""How the sweep's and the analytic engine's cost grows, one size at a time (docs/performance.md).

Runs the BM_*Scale* benchmarks of bench_planner and bench_analytic, takes the minimum over the
repetitions of the CPU time (every family runs on one thread; on the shared machine CPU time and the
minimum are what other work disturbs least), and prints one
Markdown table per family with the exponent k of time ~ size^k fitted by least squares on the logs.

    python3 tests/planner/scaling.py [BUILD_DIR] [--repetitions N]
"""
import argparse
import json
import math
import subprocess
import sys


def run(binary, pattern, repetitions):
    out = subprocess.run([binary, f"--benchmark_filter={pattern}", f"--benchmark_repetitions={repetitions}",
                          "--benchmark_format=json", "--benchmark_report_aggregates_only=false"],
                         check=True, capture_output=True, text=True).stdout
    best = {}
    for b in json.loads(out)["benchmarks"]:
        if b.get("run_type") != "iteration":
            continue
        name = b["run_name"]
        if name not in best or b["cpu_time"] < best[name]["cpu_time"]:
            best[name] = b
    return best


def slope(xs, ys):
    lx = [math.log(x) for x in xs]
    ly = [math.log(y) for y in ys]
    mx, my = sum(lx) / len(lx), sum(ly) / len(ly)
    return sum((a - mx) * (b - my) for a, b in zip(lx, ly)) / sum((a - mx) ** 2 for a in lx)


def table(title, best, prefix, size_name, size_of, columns):
    rows = sorted((b for n, b in best.items() if n.startswith(prefix)), key=lambda b: int(b["run_name"].split("/")[1]))
    if not rows:
        return
    print(f"\n{title}\n")
    print("| " + " | ".join([size_name] + [c for c, _ in columns] + ["CPU time"]) + " |")
    print("|" + " --- |" * (len(columns) + 2))
    for b in rows:
        unit = b["time_unit"]
        cells = [str(size_of(b))] + [f(b) for _, f in columns] + [f"{b['cpu_time']:.3g} {unit}"]
        print("| " + " | ".join(cells) + " |")
    sizes = [size_of(b) for b in rows]
    times = [b["cpu_time"] for b in rows]
    print(f"\nfitted exponent: time ~ {size_name}^{slope(sizes, times):.2f}")
    if "candidates" in rows[0]:
        print(f"fitted exponent: time ~ candidates^{slope([b['candidates'] for b in rows], times):.2f}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build", nargs="?", default="build")
    ap.add_argument("--repetitions", type=int, default=5)
    a = ap.parse_args()
    planner = run(f"{a.build}/bin/bench_planner", "Scale", a.repetitions)
    analytic = run(f"{a.build}/bin/bench_analytic", "Scale", a.repetitions)
    count = [("candidates", lambda b: f"{b['candidates']:.0f}"), ("feasible", lambda b: f"{b['feasible']:.0f}"),
             ("simulated", lambda b: f"{b['simulated']:.0f}")]
    arg = lambda b: int(b["run_name"].split("/")[1])
    table("Sweep of GPT-3 175B on 1024 GPUs, micro-batches up to N (one thread)", planner,
          "BM_SweepScaleCandidates/", "max micro-batch", arg, count)
    table("Sweep of GPT-3 175B on N GPUs (one thread)", planner, "BM_SweepScaleGpus/", "GPUs", arg, count)
    table("analytic::evaluate, GPT-3 175B with pp stages", analytic, "BM_EvaluateScaleStages/", "pp", arg, [])
    return 0


if __name__ == "__main__":
    sys.exit(main())

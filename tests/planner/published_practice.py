#!/usr/bin/env python3
"""The table of docs/planner.md "Against published practice", regenerated from the sweep itself.

For every shipped scenario (each a published run), two sweeps on the run's own GPU count:
  - degrees searched: the features the run used pinned with --set (ZeRO stage, recomputation, sequence
    parallel, schedule family, cp), so the sweep chooses tp, pp, dp, vpp and the micro-batch;
  - full space: every feature free.
Both rank the scenario's own layout (--rank-limit 400). Prints the markdown table on stdout.

  python3 tests/planner/published_practice.py build/bin/ptdsim [scenario.yaml ...] > table.md
"""
import json
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]


def label(p):
    """A layout as the table writes it: tp8 pp16 dp8 [cpN] [vN] mb1 Z1 selective [SP] 1f1b [split]."""
    out = [f"tp{p['tp']}", f"pp{p['pp']}", f"dp{p['dp']}"]
    if p["cp"] > 1:
        out.append(f"cp{p['cp']}")
    if p["ep"] > 1:
        out.append(f"ep{p['ep']}")
    if p["vpp"] > 1:
        out.append(f"v{p['vpp']}")
    out += [f"mb{p['micro_batch']}", f"Z{p['zero']}"]
    if p.get("shard_ranks", 0) > 0:
        out.append(f"hsdp{p['shard_ranks']}")
    out.append(p["recompute"])
    if p["sequence_parallel"]:
        out.append("SP")
    out.append(p["schedule"])
    if p.get("split", "even") != "even":
        out.append(f"split {p['stage_layers']}")
    return " ".join(out)


def seconds(s):
    return f"{s:.2f} s"


def sweep(ptdsim, scenario, extra):
    cmd = [ptdsim, "sweep", str(scenario), "--format", "json", "--top", "1", "--rank-limit", "400"] + extra
    return json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)


def rank(d):
    s = d["scenario_layout"]
    if s.get("rank") is None:
        return "not ranked: " + s.get("reason", "")
    r = s["rank"] if not s["rank_is_lower_bound"] else f"{s['rank']} to {s['rank_at_most']}"
    return f"{r} of {d['feasible']:,}"


def main():
    ptdsim = sys.argv[1] if len(sys.argv) > 1 else str(ROOT / "build/bin/ptdsim")
    print("| scenario | published layout | its step | degrees searched: best | rank | gap "
          "| full space: best | rank | gap | why it trails the full-space best |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    files = [pathlib.Path(a) for a in sys.argv[2:]] or sorted((ROOT / "scenarios").glob("*.yaml"))
    for f in files:
        run = subprocess.run([ptdsim, "evaluate", str(f), "--format", "json"], capture_output=True, text=True)
        own = json.loads(run.stdout)  # evaluate exits 1 when the layout does not fit, and still reports it
        p = own["parallel"]
        pins = [f"parallel.zero={p['zero']}", f"training.recompute={p['recompute']}",
                f"parallel.sequence_parallel={'true' if p['sequence_parallel'] else 'false'}",
                f"parallel.schedule={p['schedule']}", f"parallel.cp={p['cp']}"]
        pinned = sweep(ptdsim, f, [a for pin in pins for a in ("--set", pin)])
        full = sweep(ptdsim, f, [])
        step = own["time"]["step_s"]
        cells = [f"`{f.name}`", label(p), seconds(step)]
        for d in (pinned, full):
            if not d["results"]:  # every candidate rejected: say so rather than rank against nothing
                cells += [f"no feasible layout of {d['evaluated']:,}", rank(d), "-"]
                continue
            best = d["results"][0]
            cells += [f"{label(best['parallel'])} ({seconds(best['time']['step_s'])})", rank(d),
                      f"{(step / best['time']['step_s'] - 1) * 100:+.1f}%"]
        cells.append(full["scenario_layout"].get("slower_because", ""))
        print("| " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()

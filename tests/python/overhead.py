"""The Python module's cost above the C++ evaluation (docs/performance.md "The Python module").

    PYTHONPATH=build/python /usr/bin/python3 tests/python/overhead.py [SCENARIO] [ROUNDS]

Per call, in alternating rounds of about 0.1 s each so that both sides see the same machine: the C++
evaluation timed in C++ (api::evaluate, the report struct; with the walk of its JSON fields that
the dict is built from, to a visitor that does nothing; and api::evaluate_json, the CLI's --format
json), and ptdsim.evaluate on a loaded Scenario (the call, the same evaluation, the dict
built from the JSON writer's tree). The overhead is the median over rounds of the difference; the dict's building alone (one report,
timed in C++ with the GIL held) is the part of it that grows with the report.
ptdsim.evaluate on the path adds reading the YAML each call.
"""
import statistics
import sys
import time

import ptdsim
from ptdsim import _ptdsim

path = sys.argv[1] if len(sys.argv) > 1 else "scenarios/default.yaml"
rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 21
scenario = ptdsim.load(path)
calls = max(10, int(0.1 / max(_ptdsim.time_evaluate(scenario, 20), 1e-7)))


def per_call(fn):
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - start) / calls


cxx, walk, cxx_json, module, from_path = [], [], [], [], []
for _ in range(rounds):
    cxx.append(_ptdsim.time_evaluate(scenario, calls))
    module.append(per_call(lambda: ptdsim.evaluate(scenario)))
    walk.append(_ptdsim.time_evaluate(scenario, calls, "walk"))
    cxx_json.append(_ptdsim.time_evaluate(scenario, calls, "json"))
    from_path.append(per_call(lambda: ptdsim.evaluate(path)))
us = 1e6
med = statistics.median
over = [m - c for m, c in zip(module, cxx)]
over_json = [m - c for m, c in zip(module, cxx_json)]
print(f"{path}: {rounds} rounds of {calls} calls, median (min-max) per call")
print(f"  C++ api::evaluate                {med(cxx) * us:8.1f} us ({min(cxx) * us:.1f}-{max(cxx) * us:.1f})")
print(f"  C++ api::evaluate + JSON walk    {med(walk) * us:8.1f} us ({min(walk) * us:.1f}-{max(walk) * us:.1f})")
print(f"  C++ api::evaluate_json           {med(cxx_json) * us:8.1f} us ({min(cxx_json) * us:.1f}-{max(cxx_json) * us:.1f})")
print(f"  ptdsim.evaluate(Scenario)        {med(module) * us:8.1f} us ({min(module) * us:.1f}-{max(module) * us:.1f})")
print(f"  ptdsim.evaluate(path)            {med(from_path) * us:8.1f} us ({min(from_path) * us:.1f}-{max(from_path) * us:.1f})")
dict_s = min(_ptdsim.time_report_dict(scenario, max(100, calls)) for _ in range(5))
print(f"  the dict alone (report_dict)     {dict_s * us:8.1f} us (best of 5 rounds)")
print(f"  overhead above api::evaluate      {med(over) * us:8.1f} us ({min(over) * us:.1f}-{max(over) * us:.1f})")
print(f"  overhead above api::evaluate_json {med(over_json) * us:8.1f} us ({min(over_json) * us:.1f}-{max(over_json) * us:.1f})")

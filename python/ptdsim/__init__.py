"""ptdsim: training performance of large language models on GPU clusters, from Python.

The functions here run what the ``ptdsim`` commands run (the same C++ functions, include/ptdsim/api.hpp)
and return what ``--format json`` prints, as Python objects::

    import ptdsim
    report = ptdsim.evaluate("scenarios/default.yaml")      # ptdsim evaluate ... --format json
    report["time"]["step_s"]
    rows = ptdsim.sweep("scenarios/default.yaml", tp=[4, 8], top=5)   # ptdsim sweep ... --tp 4,8 --top 5

A scenario is a path, a shipped scenario's name ("default"), YAML text, a dict of the YAML's schema,
or a Scenario from ptdsim.load(). Overrides are the CLI's ``--set`` keys: ``parallel__tp=8`` (``__``
for the dots) or a dict ``{"parallel.tp": 8}``. Bad input raises InputError, with the file, line and
column and the message the CLI prints. docs/python.md walks through it.
"""
from __future__ import annotations

import json as _json
import os as _os
import re as _re
import warnings as _warnings
from typing import Any, Dict, Iterable, List, Mapping, NamedTuple, Optional, Sequence, Union

from . import _ptdsim as _c

__version__: str = _c.__version__

__all__ = [
    "Diagnostic", "InputError", "PtdsimWarning", "Scenario", "SweepResult", "attention", "evaluate",
    "gemm", "hardware", "import_hf", "import_megatron", "kernel", "load", "models", "scenarios",
    "simulate", "sweep", "validate", "__version__",
]


class Diagnostic(NamedTuple):
    """One problem of an input: where it is (1-based; line 0: the file as a whole) and what."""

    file: str
    line: int
    column: int
    message: str
    source_line: str


# The key a problem is about: the one its message starts with ("parallel.tp must be ...") or quotes
# ("unknown key 'gpu_hours'"), else the --set it points at ("parallel.tp=3"), else the YAML key of the
# line it points at ("  global_batch: 1024").
_LEADING_KEY = _re.compile(r"^([A-Za-z_][\w\[\]]*(?:\.[\w\[\]]+)+)\b")
_QUOTED_KEY = _re.compile(r"\bkey '([^']+)'")
_LINE_KEY = _re.compile(r"^\s*(?:-\s*)?([A-Za-z_][\w.]*)\s*:")


def _key_of(d: "Diagnostic") -> Optional[str]:
    m = _LEADING_KEY.match(d.message) or _QUOTED_KEY.search(d.message)
    if m:
        return m.group(1)
    if d.file == "--set" and "=" in d.source_line:
        return d.source_line.split("=", 1)[0].strip()
    m = _LINE_KEY.match(d.source_line)
    return m.group(1) if m else None


class InputError(ValueError):
    """Bad input: what the CLI reports with exit status 2.

    ``str(e)`` and ``e.message`` are the text the CLI prints (every problem, ``file:line:col: error:
    ...`` with the source line); ``e.diagnostics`` lists them; ``e.file``, ``e.line``, ``e.column``
    and ``e.key`` are the first one's (``key``: the input key its message names, else the key of the
    ``--set`` or YAML line it points at, else None).
    """

    def __init__(self, message: str, diagnostics: Iterable[Sequence[Any]] = ()) -> None:
        super().__init__(message)
        self.message: str = message
        self.diagnostics: List[Diagnostic] = [Diagnostic(*d) for d in diagnostics]
        first = self.diagnostics[0] if self.diagnostics else None
        self.file: Optional[str] = first.file if first else None
        self.line: Optional[int] = first.line if first else None
        self.column: Optional[int] = first.column if first else None
        self.key: Optional[str] = _key_of(first) if first else None


_c.set_input_error(InputError)


def _bad(option: str, message: str) -> InputError:
    """An argument's problem, worded as the CLI's for an option: "option: error: message"."""
    return InputError(f"{option}: error: {message}", [(option, 0, 0, message, "")])


class PtdsimWarning(UserWarning):
    """What an importer or a kernel query could not carry over or fell back on (the CLI's warnings)."""


Scenario = _c.Scenario

ScenarioLike = Union[str, "_os.PathLike[str]", Mapping[str, Any], Scenario]
Overrides = Union[Mapping[str, Any], Sequence[str], None]


def _yaml_value(v: Any) -> str:
    """A Python value as the YAML text of a ``--set`` value."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if v is None:
        return "null"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, str):
        return v
    if isinstance(v, (list, tuple, dict)):
        return _json.dumps(v)
    raise TypeError(f"cannot pass {type(v).__name__} as an override value")


# The plan options evaluate and sweep take beside the overrides, as the CLI's --tokens and --gpu-hour.
_PLAN_KEYS = {"tokens": "training.tokens", "gpu_hour": "cost.gpu_hour"}


def _pairs(overrides: Overrides, keywords: Mapping[str, Any], function: str) -> List[tuple]:
    """The overrides as (dotted key, YAML text): a dict or "key=value" strings, then the keywords
    (``parallel__tp=8``), then tokens and gpu_hour; the CLI's order of --set, --tokens, --gpu-hour."""
    pairs = []
    if isinstance(overrides, Mapping):
        pairs += [(str(k), _yaml_value(v)) for k, v in overrides.items()]
    elif overrides is not None:
        if isinstance(overrides, str):
            overrides = [overrides]
        for text in overrides:
            key, sep, value = str(text).partition("=")
            if not sep:
                raise _bad("--set", f"expected KEY=VALUE, got '{text}'")
            pairs.append((key.strip(), value))
    plan = []
    for k, v in keywords.items():
        if v is None:
            continue
        if k in _PLAN_KEYS:
            plan.append((_PLAN_KEYS[k], _yaml_value(v)))
        elif "__" in k:
            pairs.append((k.replace("__", "."), _yaml_value(v)))
        else:
            raise TypeError(f"{function}() got an unexpected keyword argument '{k}' "
                            f"(an override is written section__key=value, e.g. parallel__tp=8)")
    return pairs + plan


def _shipped(folder: str, name: str) -> Optional[str]:
    """The shipped file folder/name.yaml, when `name` is a bare name ("default", "dgx-h100")."""
    if not name or "/" in name or "\n" in name or ":" in name or name.endswith((".yaml", ".yml")):
        return None
    return _c.shipped_file(f"{folder}/{name}.yaml") or None


def load(scenario: ScenarioLike, overrides: Overrides = None, **keywords: Any) -> Scenario:
    """Loads and checks a scenario once, for evaluating it many times without reading it again.

    `scenario`: a path, a shipped scenario's name ("default"), YAML text, a dict of the scenario
    schema (docs/inputs.md; relative paths resolve against the working directory) or a Scenario.
    `overrides` and ``section__key=value`` keywords: the CLI's ``--set``; ``tokens`` and
    ``gpu_hour``: its ``--tokens`` and ``--gpu-hour``. Raises InputError.
    """
    pairs = _pairs(overrides, keywords, "load")
    if isinstance(scenario, Scenario):
        if pairs:
            raise TypeError("a loaded Scenario takes no overrides: load its source again with them")
        return scenario
    if isinstance(scenario, Mapping):
        return _c.load_text(_json.dumps(scenario, indent=1), "<dict>", pairs, _os.getcwd())
    if isinstance(scenario, _os.PathLike):
        return _c.load(_os.fspath(scenario), pairs)
    if isinstance(scenario, str):
        if "\n" not in scenario and (_os.path.exists(scenario) or scenario.endswith((".yaml", ".yml"))):
            return _c.load(scenario, pairs)
        shipped = _shipped("scenarios", scenario)
        if shipped:
            return _c.load(shipped, pairs)
        return _c.load_text(scenario, "<string>", pairs, _os.getcwd())
    raise TypeError(f"a scenario is a path, YAML text, a dict or a Scenario, not {type(scenario).__name__}")


def evaluate(scenario: ScenarioLike, overrides: Overrides = None, **keywords: Any) -> Dict[str, Any]:
    """One training step of a scenario: ``ptdsim evaluate SCENARIO --format json`` as a dict.

    Time, memory, FLOPs, communication and throughput per docs/inputs.md "JSON output of evaluate";
    the same keys and numbers as the CLI. Overrides as for load(). Raises InputError.
    """
    if type(scenario) is Scenario and overrides is None and not keywords:
        return _c.evaluate(scenario)  # the loop of a notebook: nothing to read or override
    return _c.evaluate(load(scenario, overrides, **keywords))


def simulate(scenario: ScenarioLike, overrides: Overrides = None, **keywords: Any) -> Dict[str, Any]:
    """evaluate() with the step's Chrome/Perfetto trace (``ptdsim evaluate --trace``).

    Returns ``{"report": <evaluate()'s dict>, "trace": <the trace-event JSON as a dict>}``.
    """
    report, trace = _c.simulate_json(load(scenario, overrides, **keywords))
    return {"report": _json.loads(report), "trace": _json.loads(trace)}


Choice = Union[int, str, Sequence[int], range, None]


def _choice(v: Choice) -> str:
    """A degree choice as the CLI's text: 8, [4, 8] or "4,8", range(4, 17) or "4..16"."""
    if v is None:
        return ""
    if isinstance(v, bool):
        raise TypeError("a degree choice is an int, a list of ints, a range or text such as '4..16'")
    if isinstance(v, int):
        return str(v)
    if isinstance(v, str):
        return v
    if isinstance(v, range) and v.step == 1 and len(v) > 0:
        return f"{v.start}..{v.stop - 1}"
    return ",".join(str(int(x)) for x in v)


class SweepResult(list):
    """The ranked layouts of a sweep, best first: a list of dicts (the rows of ``ptdsim sweep
    --format json``), with the rest of that JSON and the table the CLI prints.

    ``result.json``: the whole JSON (counts, rejections, the scenario's own rank);
    ``result.explanation``: the CLI's table, the lines that say what bounds the best layout and why
    each is slower than the first; ``result.to_pandas()``: the rows as a DataFrame, nested fields
    flattened to dotted columns (``pandas.DataFrame(result)`` works too).
    """

    def __init__(self, data: Dict[str, Any], table: str) -> None:
        super().__init__(data.get("results", []))
        self.json: Dict[str, Any] = data
        self.explanation: str = table

    def to_pandas(self):  # -> pandas.DataFrame
        import pandas

        return pandas.json_normalize(list(self))


_SWEEP_OPTIONS = ("tp", "pp", "cp", "ep", "dp", "vpp", "micro_batch", "zero")
_SWEEP_MAXIMA = ("max_tp", "max_pp", "max_cp", "max_ep", "max_vpp", "max_micro_batch")


def sweep(scenario: ScenarioLike, overrides: Overrides = None, *, gpus: Optional[int] = None,
          objective: str = "time", top: int = 10, threads: int = 0, search: Optional[Sequence[str]] = None,
          min_free_gib: float = 0.0, rank_scenario: bool = True, rank_limit: Optional[int] = None,
          **keywords: Any) -> SweepResult:
    """Searches every parallel layout of a scenario's model: ``ptdsim sweep SCENARIO --format json``.

    `gpus`, `objective` (time, memory, mfu, days, gpu_hours, cost, energy), `top`, `threads` (0: all
    cores), `search` (["overlap.tp", "recompute", ...]), `min_free_gib`, `rank_scenario` (False:
    ``--no-scenario-rank``), `rank_limit`: as the CLI's options. Degrees ``tp``, ``pp``, ``cp``,
    ``ep``, ``dp``, ``vpp``, ``micro_batch``, ``zero``: 8, [4, 8], range(4, 17) or "4..16"; maxima
    ``max_tp`` ... ``max_micro_batch``: ints. Other keywords are overrides as for load() (an override
    of a degree pins it, as ``--set`` does). The GIL is released while the sweep runs. Raises InputError.
    """
    options: Dict[str, Any] = {"objective": objective, "top": int(top), "threads": int(threads),
                               "rank_scenario": bool(rank_scenario), "min_free_gib": float(min_free_gib)}
    if gpus is not None:
        options["gpus"] = int(gpus)
    if rank_limit is not None:
        options["rank_limit"] = int(rank_limit)
    if search is not None:
        options["search"] = [search] if isinstance(search, str) else list(search)
    rest = {}
    for k, v in keywords.items():
        if k in _SWEEP_OPTIONS:
            options[k] = _choice(v)
        elif k in _SWEEP_MAXIMA:
            options[k] = int(v)
        else:
            rest[k] = v
    if isinstance(scenario, Scenario):
        raise TypeError("sweep() reads its scenario with the overrides (they pin degrees): "
                        "pass a path, YAML text or a dict")
    pairs = _pairs(overrides, rest, "sweep")
    base = load(scenario, dict(pairs))
    data, table = _c.sweep_json(base, [k for k, _ in pairs], options)
    return SweepResult(_json.loads(data), table)


def validate(dataset: Union[str, "_os.PathLike[str]", None] = None, split: str = "all") -> Dict[str, Any]:
    """Predictions against published training runs: ``ptdsim validate [DATASET] --split S --format
    json`` as a dict. `dataset`: None for the shipped one; `split`: all, fit or holdout."""
    return _json.loads(_c.validate_json("" if dataset is None else _os.fspath(dataset), split))


def _import_scenario(hardware, gpus, nodes, seq_len, global_batch, micro_batch, precision, tokens,
                     gpu_hour, framework):
    s = _c.ImportScenario()
    s.hardware = hardware or ""
    s.gpus, s.nodes = int(gpus or 0), int(nodes or 0)
    s.seq_len, s.global_batch, s.micro_batch = int(seq_len or 0), int(global_batch or 0), int(micro_batch or 0)
    s.precision, s.framework = precision or "", framework or ""
    s.tokens = "" if tokens is None else str(tokens)
    s.gpu_hour = float(gpu_hour or 0)
    return s


def _imported(result) -> str:
    yaml, warnings = result
    for w in warnings:
        _warnings.warn(w, PtdsimWarning, stacklevel=3)
    return yaml


def import_hf(config: Union[str, "_os.PathLike[str]", Mapping[str, Any]], *, name: str = "",
              hardware: Optional[str] = None, gpus: int = 0, nodes: int = 0, seq_len: int = 0,
              global_batch: int = 0, micro_batch: int = 0, precision: str = "",
              tokens: Union[str, int, float, None] = None, gpu_hour: float = 0.0, framework: str = "") -> str:
    """A Hugging Face config.json (a path or the dict ``json.load`` gives) as ptdsim YAML:
    ``ptdsim import hf``. A model file, or with `hardware` (a shipped name or a path), `gpus` (or
    `nodes`), `seq_len` and `global_batch` a scenario, which evaluate() and sweep() take as it is.
    What could not be carried over is warned (PtdsimWarning). Raises InputError."""
    s = _import_scenario(hardware, gpus, nodes, seq_len, global_batch, micro_batch, precision, tokens,
                         gpu_hour, framework)
    if isinstance(config, Mapping):
        return _imported(_c.import_hf(_json.dumps(config, indent=2), True, name, s))
    return _imported(_c.import_hf(_os.fspath(config), False, name, s))


def import_megatron(arguments: Union[str, Sequence[str]], *, name: str = "", hardware: Optional[str] = None,
                    gpus: int = 0, nodes: int = 0, seq_len: int = 0, global_batch: int = 0,
                    micro_batch: int = 0, precision: str = "", tokens: Union[str, int, float, None] = None,
                    gpu_hour: float = 0.0, framework: str = "") -> str:
    """A Megatron-LM command line's arguments (one string or a list, as sys.argv[1:]) as ptdsim YAML:
    ``ptdsim import megatron``; the options as import_hf()'s. Raises InputError."""
    text = arguments if isinstance(arguments, str) else " ".join(arguments)
    s = _import_scenario(hardware, gpus, nodes, seq_len, global_batch, micro_batch, precision, tokens,
                         gpu_hour, framework)
    return _imported(_c.import_megatron(text, name, s))


def _hardware_path(hardware: Union[str, "_os.PathLike[str]"]) -> str:
    path = _os.fspath(hardware)
    return _shipped("hardware", path) or path


def gemm(hardware: Union[str, "_os.PathLike[str]"], m: int, n: int, k: int, precision: str = "bf16",
         fp8_kernel: str = "tensorwise") -> Dict[str, Any]:
    """One GEMM y[m,n] = x[m,k] W[n,k]^T on a hardware file's GPU (a path or a shipped name):
    ``ptdsim kernel HARDWARE gemm --m M --n N --k K --precision P --fp8-kernel K --format json`` as a dict
    (time_s, tflops, source, launch_floor). fp8_kernel (fast_accum, rowwise, blockwise, mxfp8; with
    precision "fp8") warns (PtdsimWarning) where the file does not model it. Raises InputError."""
    for label, v in (("m", m), ("n", n), ("k", k)):
        if int(v) < 1:
            raise _bad(label, f"must be a positive count, got {v}")
    data, warning = _c.gemm_json(_hardware_path(hardware), precision, float(m), float(n), float(k), fp8_kernel)
    if warning:
        _warnings.warn(warning, PtdsimWarning, stacklevel=2)
    return _json.loads(data)


def attention(hardware: Union[str, "_os.PathLike[str]"], seq: int, heads: int, kv_heads: Optional[int] = None,
              head_dim: int = 128, batch: int = 1, causal: bool = True, kernel: str = "cudnn",
              precision: str = "bf16") -> Dict[str, Any]:
    """The attention core, forward and backward: ``ptdsim kernel HARDWARE attention ... --format json``
    as a dict (fwd_s, bwd_s, source, launch_floor). Raises InputError."""
    kv = heads if kv_heads is None else kv_heads
    for label, v in (("seq", seq), ("heads", heads), ("kv_heads", kv), ("head_dim", head_dim), ("batch", batch)):
        if int(v) < 1:
            raise _bad(label, f"must be a positive count, got {v}")
    if int(heads) % int(kv) != 0:
        raise _bad("kv_heads", f"{kv} does not divide heads {heads}")
    shape = _c.AttentionShape()
    shape.batch, shape.heads, shape.kv_heads = float(batch), float(heads), float(kv)
    shape.head_dim, shape.seq_q, shape.seq_k, shape.causal = float(head_dim), float(seq), float(seq), bool(causal)
    data, warning = _c.attention_json(_hardware_path(hardware), precision, kernel, shape)
    if warning:
        _warnings.warn(warning, PtdsimWarning, stacklevel=2)
    return _json.loads(data)


def kernel(hardware: Union[str, "_os.PathLike[str]"], op: str = "gemm", **shape: Any) -> Dict[str, Any]:
    """``ptdsim kernel HARDWARE gemm|attention``: gemm(hardware, **shape) or attention(hardware, **shape)."""
    if op == "gemm":
        return gemm(hardware, **shape)
    if op == "attention":
        return attention(hardware, **shape)
    raise ValueError(f"kernel() computes 'gemm' or 'attention', not '{op}'")


def models() -> List[str]:
    """The shipped models' names, which a scenario's ``model:`` takes (docs/data.md)."""
    return list(_c.shipped_names("model"))


def hardware() -> List[str]:
    """The shipped hardware's names, which a scenario's ``hardware:`` takes (docs/data.md)."""
    return list(_c.shipped_names("hardware"))


def scenarios() -> List[str]:
    """The shipped scenarios' names, which load(), evaluate() and sweep() take ("default")."""
    root = _c.shipped_file("scenarios/default.yaml")
    if not root:
        return []
    folder = _os.path.dirname(root)
    return sorted(f[:-5] for f in _os.listdir(folder) if f.endswith(".yaml"))

# Type stubs of the ptdsim package (python/ptdsim/__init__.py holds the docstrings).
import os
from typing import Any, Dict, Iterable, List, Mapping, NamedTuple, Optional, Sequence, Union

__version__: str

class Diagnostic(NamedTuple):
    file: str
    line: int
    column: int
    message: str
    source_line: str

class InputError(ValueError):
    message: str
    diagnostics: List[Diagnostic]
    file: Optional[str]
    line: Optional[int]
    column: Optional[int]
    key: Optional[str]
    def __init__(self, message: str, diagnostics: Iterable[Sequence[Any]] = ...) -> None: ...

class PtdsimWarning(UserWarning): ...

class Scenario:
    @property
    def name(self) -> str: ...
    @property
    def file(self) -> str: ...
    @property
    def gpus(self) -> int: ...

_Path = Union[str, os.PathLike[str]]
ScenarioLike = Union[str, os.PathLike[str], Mapping[str, Any], Scenario]
Overrides = Union[Mapping[str, Any], Sequence[str], None]
Choice = Union[int, str, Sequence[int], range, None]

class SweepResult(List[Dict[str, Any]]):
    json: Dict[str, Any]
    explanation: str
    def to_pandas(self) -> Any: ...

def load(scenario: ScenarioLike, overrides: Overrides = ..., *, tokens: Union[str, int, float, None] = ...,
         gpu_hour: Optional[float] = ..., **overrides_by_key: Any) -> Scenario: ...
def evaluate(scenario: ScenarioLike, overrides: Overrides = ..., *, tokens: Union[str, int, float, None] = ...,
             gpu_hour: Optional[float] = ..., **overrides_by_key: Any) -> Dict[str, Any]: ...
def simulate(scenario: ScenarioLike, overrides: Overrides = ..., *, tokens: Union[str, int, float, None] = ...,
             gpu_hour: Optional[float] = ..., **overrides_by_key: Any) -> Dict[str, Any]: ...
def sweep(scenario: Union[_Path, Mapping[str, Any]], overrides: Overrides = ..., *, gpus: Optional[int] = ...,
          objective: str = ..., top: int = ..., threads: int = ..., search: Optional[Sequence[str]] = ...,
          min_free_gib: float = ..., rank_scenario: bool = ..., rank_limit: Optional[int] = ...,
          tp: Choice = ..., pp: Choice = ..., cp: Choice = ..., ep: Choice = ..., dp: Choice = ...,
          vpp: Choice = ..., micro_batch: Choice = ..., zero: Choice = ..., max_tp: int = ..., max_pp: int = ...,
          max_cp: int = ..., max_ep: int = ..., max_vpp: int = ..., max_micro_batch: int = ...,
          tokens: Union[str, int, float, None] = ..., gpu_hour: Optional[float] = ...,
          **overrides_by_key: Any) -> SweepResult: ...
def validate(dataset: Optional[_Path] = ..., split: str = ...) -> Dict[str, Any]: ...
def import_hf(config: Union[_Path, Mapping[str, Any]], *, name: str = ..., hardware: Optional[str] = ...,
              gpus: int = ..., nodes: int = ..., seq_len: int = ..., global_batch: int = ..., micro_batch: int = ...,
              precision: str = ..., tokens: Union[str, int, float, None] = ..., gpu_hour: float = ...,
              framework: str = ...) -> str: ...
def import_megatron(arguments: Union[str, Sequence[str]], *, name: str = ..., hardware: Optional[str] = ...,
                    gpus: int = ..., nodes: int = ..., seq_len: int = ..., global_batch: int = ...,
                    micro_batch: int = ..., precision: str = ..., tokens: Union[str, int, float, None] = ...,
                    gpu_hour: float = ..., framework: str = ...) -> str: ...
def gemm(hardware: _Path, m: int, n: int, k: int, precision: str = ..., fp8_kernel: str = ...) -> Dict[str, Any]: ...
def attention(hardware: _Path, seq: int, heads: int, kv_heads: Optional[int] = ..., head_dim: int = ...,
              batch: int = ..., causal: bool = ..., kernel: str = ..., precision: str = ...) -> Dict[str, Any]: ...
def kernel(hardware: _Path, op: str = ..., **shape: Any) -> Dict[str, Any]: ...
def models() -> List[str]: ...
def hardware() -> List[str]: ...
def scenarios() -> List[str]: ...

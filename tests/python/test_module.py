"""The Python module against the CLI (issue 40): the same JSON for the same inputs, the same errors.

Run by ctest (tests/python/CMakeLists.txt) with PYTHONPATH=<build>/python, PTDSIM_BIN the CLI and
the working directory the source tree. Every comparison is against the executable built from the same
sources: the module's promise is one code path (include/ptdsim/api.hpp), so numbers must be equal,
not close.
"""
import glob
import json
import os
import subprocess
import threading
import time
import warnings

import pytest

import ptdsim

BIN = os.environ["PTDSIM_BIN"]
BAD = "tests/data/bad"


def cli(*args, status=0):
    run = subprocess.run([BIN, *args], capture_output=True, text=True, timeout=300)
    assert run.returncode == status, f"{args}: exit {run.returncode}: {run.stderr}"
    return run


def cli_json(*args):
    return json.loads(cli(*args, "--format", "json").stdout)


SHIPPED = sorted(glob.glob("scenarios/*.yaml"))


def test_shipped_scenarios_are_found():
    assert len(SHIPPED) >= 10
    assert sorted(ptdsim.scenarios()) == sorted(os.path.basename(p)[:-5] for p in SHIPPED)


@pytest.mark.parametrize("path", SHIPPED)
def test_evaluate_equals_cli_on_every_shipped_scenario(path):
    assert ptdsim.evaluate(path) == cli_json("evaluate", path)


def test_evaluate_takes_a_name_yaml_text_a_dict_and_a_loaded_scenario():
    expected = cli_json("evaluate", "scenarios/default.yaml")
    assert ptdsim.evaluate("default") == expected
    assert ptdsim.evaluate(ptdsim.load("scenarios/default.yaml")) == expected
    # the same scenario as text and as a dict, its relative paths made absolute
    text = open("scenarios/default.yaml").read()
    here = os.path.abspath("scenarios")
    text = text.replace("../models/", here + "/../models/").replace("../hardware/", here + "/../hardware/")
    from_text = ptdsim.evaluate(text)
    assert from_text == expected
    as_dict = {"name": "ptdsim_dict_scenario", "model": "gpt3-175b", "hardware": "dgx-a100-80g", "cluster": {"gpus": 1024},
               "parallel": {"tp": 8, "pp": 16, "dp": 8}, "training": {"seq_len": 2048, "global_batch": 1536}}
    # a dict and the same YAML written to a file give the same report
    yaml_file = os.path.join(os.environ.get("PTDSIM_TMP", "/tmp"), "ptdsim_dict_scenario.yaml")
    with open(yaml_file, "w") as f:
        json.dump(as_dict, f)
    assert ptdsim.evaluate(as_dict) == ptdsim.evaluate(yaml_file)
    assert ptdsim.evaluate(as_dict) == cli_json("evaluate", yaml_file)


def test_overrides_are_the_clis_set():
    expected = cli_json("evaluate", "scenarios/default.yaml", "--set", "parallel.tp=4", "--set", "parallel.dp=16",
                        "--tokens", "300B", "--gpu-hour", "2.5")
    assert ptdsim.evaluate("scenarios/default.yaml", parallel__tp=4, parallel__dp=16, tokens="300B",
                           gpu_hour=2.5) == expected
    assert ptdsim.evaluate("scenarios/default.yaml", {"parallel.tp": 4, "parallel.dp": 16}, tokens="300B",
                           gpu_hour=2.5) == expected
    assert ptdsim.evaluate("scenarios/default.yaml", ["parallel.tp=4", "parallel.dp=16"], tokens="300B",
                           gpu_hour=2.5) == expected
    with pytest.raises(TypeError, match="parallel__tp"):
        ptdsim.evaluate("scenarios/default.yaml", tp=4)


def test_offload_fields_are_the_clis():
    # CPU offload (docs/analytic.md "CPU offload"): the report grows by its fields only when the
    # scenario offloads; the module's dict carries them as the CLI's JSON does
    expected = cli_json("evaluate", "scenarios/default.yaml", "--set", "training.offload=optimizer")
    got = ptdsim.evaluate("scenarios/default.yaml", training__offload="optimizer")
    assert got == expected
    assert got["training"]["offload"] == "optimizer"
    assert got["time"]["offload_s"] > 0
    assert got["time"]["critical_path"]["offload"] == got["time"]["offload_s"]
    assert got["memory"]["host_fits"] is True
    assert abs(sum(got["time"]["critical_path"].values()) - got["time"]["step_s"]) <= 1e-9 * got["time"]["step_s"]
    plain = ptdsim.evaluate("scenarios/default.yaml")
    assert "offload" not in plain["training"] and "offload_s" not in plain["time"]


def test_simulate_adds_the_trace():
    out = os.path.join(os.environ.get("PTDSIM_TMP", "/tmp"), "ptdsim_trace.json")
    expected = cli_json("evaluate", "scenarios/default.yaml", "--trace", out)
    result = ptdsim.simulate("scenarios/default.yaml")
    assert result["report"] == expected
    assert result["trace"] == json.load(open(out))


def test_sweep_equals_clis_rows_json_and_table():
    args = ["sweep", "scenarios/default.yaml", "--tp", "4,8", "--pp", "8..16", "--top", "5", "--threads", "2"]
    expected = cli_json(*args)
    table = cli(*args).stdout
    rows = ptdsim.sweep("scenarios/default.yaml", tp=[4, 8], pp=range(8, 17), top=5, threads=2)
    assert len(rows) == 5
    assert list(rows) == expected["results"]
    assert rows.json == expected
    assert rows.explanation == table
    # an override of a degree pins it, as --set does
    pinned = ptdsim.sweep("scenarios/default.yaml", parallel__tp=4, parallel__dp=16, top=3, threads=2)
    assert pinned.json == cli_json("sweep", "scenarios/default.yaml", "--set", "parallel.tp=4", "--set",
                                   "parallel.dp=16", "--top", "3", "--threads", "2")


def test_sweep_to_pandas():
    pandas = pytest.importorskip("pandas")
    rows = ptdsim.sweep("scenarios/default.yaml", tp=8, pp=16, top=3, threads=2)
    frame = rows.to_pandas()
    assert isinstance(frame, pandas.DataFrame) and len(frame) == len(rows)


def test_sweep_releases_the_gil():
    # The main thread keeps running while another sweeps: the longest pause between its iterations is
    # far below the sweep's duration (a sweep holding the GIL would stop it for all of it).
    done = threading.Event()
    seconds = []

    def work():
        start = time.perf_counter()
        ptdsim.sweep("scenarios/default.yaml", top=10, threads=1)
        seconds.append(time.perf_counter() - start)
        done.set()

    worker = threading.Thread(target=work)
    last, longest = time.perf_counter(), 0.0
    worker.start()
    while not done.is_set():
        time.sleep(0.001)
        now = time.perf_counter()
        longest, last = max(longest, now - last), now
    worker.join()
    assert seconds[0] > 0.05
    assert longest < seconds[0] / 2


def cli_error(*args):
    return cli(*args, status=2).stderr.strip()


def test_errors_raise_input_error_with_file_line_column_and_the_clis_message():
    path = f"{BAD}/scenario_cost_unknown_key.yaml"
    with pytest.raises(ptdsim.InputError) as caught:
        ptdsim.evaluate(path)
    e = caught.value
    assert str(e) == e.message == cli_error("evaluate", path)
    # cost: {gpu_hours: 2.5} on line 5: the unknown key at column 8
    assert (e.file, e.line, e.column) == (path, 5, 8)
    assert e.key == "gpu_hours"
    assert isinstance(e, ValueError)


def test_override_errors_name_the_key():
    with pytest.raises(ptdsim.InputError) as caught:
        ptdsim.evaluate("scenarios/default.yaml", parallel__tp=3)
    assert str(caught.value) == cli_error("evaluate", "scenarios/default.yaml", "--set", "parallel.tp=3")
    assert (caught.value.file, caught.value.line, caught.value.key) == ("--set", 1, "parallel.tp")


def test_sweep_option_errors_are_input_errors():
    with pytest.raises(ptdsim.InputError, match="--objective"):
        ptdsim.sweep("scenarios/default.yaml", objective="cost")  # no token budget
    with pytest.raises(ptdsim.InputError, match="--tp"):
        ptdsim.sweep("scenarios/default.yaml", tp="4..")


SMALL_SCENARIO = {"cluster": {"gpus": 8}, "training": {"seq_len": 2048, "global_batch": 64}}


def corpus():
    """The malformed-input corpus (tests/data/bad) with the call that reads each file."""
    cases = []
    for path in sorted(glob.glob(f"{BAD}/*")):
        kind = os.path.basename(path).split("_")[0]
        if kind in ("scenario", "include"):
            cases.append((path, lambda p: ptdsim.evaluate(p)))
        elif kind == "model":
            cases.append((path, lambda p: ptdsim.evaluate(dict(SMALL_SCENARIO, model=os.path.abspath(p),
                                                               hardware="dgx-h100"))))
        elif kind == "hardware":
            cases.append((path, lambda p: ptdsim.evaluate(dict(SMALL_SCENARIO, model="llama3-8b",
                                                               hardware=os.path.abspath(p)))))
        elif kind == "dataset":
            cases.append((path, lambda p: ptdsim.validate(p)))
        elif kind == "hf":
            cases.append((path, lambda p: ptdsim.import_hf(p)))
    return cases


def test_the_bad_input_corpus_raises_input_error_and_never_crashes():
    raised = 0
    for path, call in corpus():
        try:
            call(path)
        except ptdsim.InputError as e:
            raised += 1
            assert e.diagnostics, path
            assert e.file, path
    assert raised >= 100


@pytest.mark.parametrize("path", sorted(glob.glob(f"{BAD}/scenario_*.yaml") + glob.glob("tests/data/hostile/*.yaml")))
def test_bad_and_hostile_scenarios_give_the_clis_answer(path):
    # the malformed scenarios, and the hostile corpus's (an alias bomb, /dev/zero included, extreme
    # and smallest values): the CLI's JSON where it answers, its message where it refuses
    run = subprocess.run([BIN, "evaluate", path, "--format", "json"], capture_output=True, text=True, timeout=60)
    if run.returncode == 0:
        assert ptdsim.evaluate(path) == json.loads(run.stdout)
        return
    assert run.returncode == 2, run.stderr
    with pytest.raises(ptdsim.InputError) as caught:
        ptdsim.evaluate(path)
    assert str(caught.value) == run.stderr.strip()
    first = run.stderr.split(": error: ")[0]
    expected = first.split(":")
    assert caught.value.file == expected[0]
    if len(expected) == 3:
        assert (caught.value.line, caught.value.column) == (int(expected[1]), int(expected[2]))


def test_validate_equals_cli():
    assert ptdsim.validate(split="holdout") == cli_json("validate", "--split", "holdout")


def test_importers_equal_cli():
    config = "tests/data/hf/Meta-Llama-3-70B/config.json"
    opts = ["--hardware", "dgx-h100", "--gpus", "512", "--seq-len", "8192", "--global-batch", "1024",
            "--tokens", "15T", "--gpu-hour", "2.5"]
    expected = cli("import", "hf", config, *opts).stdout
    kw = dict(hardware="dgx-h100", gpus=512, seq_len=8192, global_batch=1024, tokens="15T", gpu_hour=2.5)
    assert ptdsim.import_hf(config, **kw) == expected
    # the config as the dict json.load gives: the same scenario, but for the name the path gave and the
    # file it names as its source
    imported = ptdsim.import_hf(json.load(open(config)), name="Meta-Llama-3-70B", **kw)
    assert imported.replace("<config>", config) == expected
    assert ptdsim.evaluate(imported)["time"]["step_s"] > 0
    megatron = "--num-layers 80 --hidden-size 8192 --num-attention-heads 64 --seq-length 4096 --vocab-size 128256"
    assert ptdsim.import_megatron(megatron.split()) == cli("import", "megatron", megatron).stdout


def test_kernel_equals_cli():
    hw = "hardware/dgx-h100.yaml"
    assert ptdsim.kernel(hw, "gemm", m=8192, n=8192, k=8192) == cli_json("kernel", hw, "gemm", "--m", "8192",
                                                                        "--n", "8192", "--k", "8192")
    assert ptdsim.gemm("dgx-h100", 8192, 8192, 8192) == ptdsim.gemm(hw, 8192, 8192, 8192)
    assert ptdsim.attention(hw, seq=4096, heads=64, kv_heads=8) == cli_json(
        "kernel", hw, "attention", "--seq", "4096", "--heads", "64", "--kv-heads", "8")
    with pytest.raises(ptdsim.InputError, match="fp8"):
        ptdsim.gemm("dgx-a100-80g", 1024, 1024, 1024, precision="fp8")


def test_fp8_kernel_gemm_equals_cli(tmp_path):
    # a hardware file that models the fast-accumulation kernel (hand-picked model constants), and one
    # that does not: the CLI's JSON either way, and its warning where the kernel falls back
    shipped = open("hardware/dgx-h100.yaml").read()
    assert "fp8_kernels" not in shipped
    model = "{tflops: 1450, epilogue_gbs: 4280, floor_us: 18.5, knee: 1.8, tail: 0.12, tile_m: 256, tile_n: 128}"
    modelled = tmp_path / "fast.yaml"
    assert shipped.count("    gemm:\n      model:\n") == 1
    modelled.write_text(shipped.replace("    gemm:\n      model:\n",
                                        "    gemm:\n      fp8_kernels: {fast_accum: " + model + "}\n      model:\n"))
    args = ["--m", "8192", "--n", "8192", "--k", "8192", "--precision", "fp8", "--fp8-kernel", "fast_accum"]
    for hw in (str(modelled), "hardware/dgx-h100.yaml"):
        run = cli("kernel", hw, "gemm", *args, "--format", "json")
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            got = ptdsim.gemm(hw, 8192, 8192, 8192, precision="fp8", fp8_kernel="fast_accum")
        assert got == json.loads(run.stdout)
        said = [str(w.message) for w in caught if issubclass(w.category, ptdsim.PtdsimWarning)]
        assert run.stderr == "".join(f"ptdsim: warning: {m}\n" for m in said)
        assert len(said) == (0 if hw == str(modelled) else 1)
    assert ptdsim.gemm(str(modelled), 8192, 8192, 8192, precision="fp8", fp8_kernel="fast_accum") != \
        ptdsim.gemm(str(modelled), 8192, 8192, 8192, precision="fp8")
    with pytest.raises(ptdsim.InputError, match="needs precision fp8"):
        ptdsim.gemm("dgx-h100", 1024, 1024, 1024, fp8_kernel="fast_accum")
    with pytest.raises(ptdsim.InputError, match="unknown FP8 kernel 'fastest'"):
        ptdsim.gemm("dgx-h100", 1024, 1024, 1024, precision="fp8", fp8_kernel="fastest")
    # as the CLI's parser: the kernel's name is refused before the file is read
    with pytest.raises(ptdsim.InputError, match="unknown FP8 kernel 'fastest'"):
        ptdsim.gemm(str(tmp_path / "missing.yaml"), 1024, 1024, 1024, precision="fp8", fp8_kernel="fastest")


def test_names_and_version():
    assert ptdsim.models() == sorted(os.path.basename(p)[:-5] for p in glob.glob("models/*.yaml"))
    assert ptdsim.hardware() == sorted(os.path.basename(p)[:-5] for p in glob.glob("hardware/*.yaml"))
    assert cli("--version").stdout.strip() == "ptdsim " + ptdsim.__version__

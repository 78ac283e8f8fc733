#!/usr/bin/env python3
"""Times the kernels of a training step that are not GEMMs on this GPU, with PyTorch, and writes them
as the kernel tables `ptdsim calibrate import-kernels` reads (docs/calibration.md "Kernel tables"):

  attention.csv      the attention core (scaled_dot_product_attention: FlashAttention or cuDNN), causal,
                     forward and forward+backward, GQA where kv_heads < heads
  elementwise.csv    layernorm, rmsnorm, gelu (tanh), dropout, residual add, SwiGLU on [tokens, width]
  cross_entropy.csv  the loss over [tokens, vocab / tp] logits (cast to fp32), forward and forward+backward
  optimizer.csv      one fused AdamW step over N fp32 parameters with fp32 gradients
  gemm_fp8.csv       FP8 GEMMs on each kernel a recipe runs (torch._scaled_mm): tensorwise with split
                     accumulation (what gemm.csv's fp8 rows time) and with fast accumulation, rowwise,
                     blockwise (1x128 / 128x128) and MXFP8 (Blackwell) where this PyTorch and GPU run
                     them, over the three GEMMs (forward, input and weight gradient) of layer shapes

Columns are those of calibrate/data/h100/*.csv, plus `gpu` at the end (the CUDA device name). Every
figure is a CUDA-event timing: the median over --repeats batches of (elapsed / --iters) after --warmup
untimed calls, on random normal data. GEMMs, copies and contention come from ptdsim-calibrate --tables.

  python3 calibrate/measure_kernels.py --out my-gpu-tables [--quick] [--models models]
  python3 calibrate/measure_kernels.py --compare my-gpu-tables calibrate/data/h100

PyTorch is imported only when measuring, so the table code runs (and is tested) with plain python3.
"""
import argparse
import csv
import os
import statistics
import sys
import tempfile

ATTENTION_COLUMNS = ["precision", "heads", "kv_heads", "head_dim", "seq", "batch", "causal", "fwd_s", "fwd_bwd_s",
                     "fwd_tflops", "bwd_tflops", "gpu"]
# attention: cuDNN's fused attention (what Transformer Engine runs on Hopper); attention_flash2:
# FlashAttention-2 (what PyTorch's SDPA runs first by default, and flash-attn model code)
COLUMNS = {
    "attention": ATTENTION_COLUMNS,
    "attention_flash2": ATTENTION_COLUMNS,
    "elementwise": ["op", "tokens", "width", "bytes_in", "fwd_s", "fwd_bwd_s", "fwd_GBps", "gpu"],
    "cross_entropy": ["vocab", "tp", "tokens", "fwd_s", "fwd_bwd_s", "gpu"],
    "optimizer": ["op", "params", "time_s", "s_per_param", "bytes_per_param_moved", "gpu"],
    "gemm_fp8": ["kernel", "m", "n", "k", "time_s", "tflops", "gpu"],
}

# The rows of two tables that measure the same thing: these columns agree.
ATTENTION_KEYS = ["precision", "heads", "kv_heads", "head_dim", "seq", "batch", "causal"]
KEYS = {
    "attention": ATTENTION_KEYS,
    "attention_flash2": ATTENTION_KEYS,
    "elementwise": ["op", "tokens", "width"],
    "cross_entropy": ["vocab", "tp", "tokens"],
    "optimizer": ["op", "params"],
    "gemm_fp8": ["kernel", "m", "n", "k"],
}
TIMES = {
    "attention": ["fwd_s", "fwd_bwd_s"],
    "attention_flash2": ["fwd_s", "fwd_bwd_s"],
    "elementwise": ["fwd_s", "fwd_bwd_s"],
    "cross_entropy": ["fwd_s", "fwd_bwd_s"],
    "optimizer": ["time_s"],
    "gemm_fp8": ["time_s"],
}

BF16_BYTES = 2
# Bytes one fused AdamW step moves per fp32 parameter: the parameter, exp_avg and exp_avg_sq read and
# written (3 x 8) and the gradient read (4).
ADAMW_BYTES_PER_PARAM = 28

# The default grid (that of calibrate/data/h100): attention heads / KV heads of 128-wide heads, sequence
# lengths at 16384 tokens per batch; layer widths at 8192 tokens; vocabularies of the shipped models.
ATTENTION_HEADS = [(8, 8), (16, 16), (32, 8), (64, 8)]
SEQ_LENS = [1024, 2048, 4096, 8192, 16384, 32768]
TOKENS = 8192
WIDTHS = [2048, 4096, 8192, 12288, 16384]
VOCABS = [32000, 50257, 128256, 256000]
OPTIMIZER_PARAMS = [10**8, 5 * 10**8, 10**9]
# FP8 GEMMs: the kernels of docs/analytic.md "FP8 GEMM kernels" (tensorwise is the split-accumulation
# kernel gemm.csv's fp8 rows time, measured again here for the ratio on the same GPU and run), on the
# layers of Llama 3 8B and 70B and GPT-3 175B (hidden, ffn, heads, kv_heads; SwiGLU but GPT-3) at tp 1
# and 8, 8192 tokens.
FP8_KERNELS = ["tensorwise", "fast_accum", "rowwise", "blockwise", "mxfp8"]
GEMM_LAYERS = [(4096, 14336, 32, 8, True), (8192, 28672, 64, 8, True), (12288, 49152, 96, 96, False)]
GEMM_TPS = (1, 8)
GEMM_TOKENS = 8192


def attention_flops(heads, seq, head_dim, batch, causal):
    """Forward FLOPs of the attention core: QK^T and PV, 2 x 2 b h s^2 d, half of it when causal."""
    flops = 4.0 * batch * heads * seq * seq * head_dim
    return flops / 2 if causal else flops


def attention_row(heads, kv_heads, head_dim, seq, batch, causal, fwd_s, fwd_bwd_s, gpu, precision="bf16"):
    """The backward does 2.5x the forward's FLOPs (dQ, dK, dV and the recomputed scores)."""
    flops = attention_flops(heads, seq, head_dim, batch, causal)
    return {"precision": precision, "heads": heads, "kv_heads": kv_heads, "head_dim": head_dim, "seq": seq,
            "batch": batch, "causal": bool(causal), "fwd_s": fwd_s, "fwd_bwd_s": fwd_bwd_s,
            "fwd_tflops": flops / fwd_s / 1e12, "bwd_tflops": 2.5 * flops / (fwd_bwd_s - fwd_s) / 1e12, "gpu": gpu}


def elementwise_row(op, tokens, width, fwd_s, fwd_bwd_s, gpu):
    """fwd_GBps counts one read of each input and one write of the output, bf16 (SwiGLU: two inputs)."""
    inputs = 2 if op == "swiglu" else 1
    bytes_in = inputs * tokens * width * BF16_BYTES
    moved = (inputs + 1) * tokens * width * BF16_BYTES
    return {"op": op, "tokens": tokens, "width": width, "bytes_in": bytes_in, "fwd_s": fwd_s, "fwd_bwd_s": fwd_bwd_s,
            "fwd_GBps": moved / fwd_s / 1e9, "gpu": gpu}


def cross_entropy_row(vocab, tp, tokens, fwd_s, fwd_bwd_s, gpu):
    return {"vocab": vocab, "tp": tp, "tokens": tokens, "fwd_s": fwd_s, "fwd_bwd_s": fwd_bwd_s, "gpu": gpu}


def optimizer_row(params, time_s, gpu, op="adamw_fused_fp32"):
    return {"op": op, "params": params, "time_s": time_s, "s_per_param": time_s / params,
            "bytes_per_param_moved": ADAMW_BYTES_PER_PARAM, "gpu": gpu}


def gemm_row(kernel, m, n, k, time_s, gpu):
    return {"kernel": kernel, "m": m, "n": n, "k": k, "time_s": time_s, "tflops": 2.0 * m * n * k / time_s / 1e12,
            "gpu": gpu}


def layer_gemm_shapes(layers, tps, tokens):
    """The (m, n, k) of every GEMM a layer's weights take part in, y[m,n] = x[m,k] W^T forward and its
    input gradient (m, k, n) and weight gradient (n, k, m), for the QKV, output, fc1 and fc2 weights
    of each (hidden, ffn, heads, kv_heads, gated) under each tp that divides it. Every dimension a
    multiple of 128 (the blockwise kernel's tile); sorted, no repeats."""
    shapes = set()
    for h, ffn, heads, kv, gated in layers:
        d = h // heads
        for tp in tps:
            if heads % tp or ffn % tp:
                continue
            qkv = (heads + 2 * max(kv, tp)) * d // tp
            for n, k in ((qkv, h), (h, heads * d // tp), ((2 if gated else 1) * ffn // tp, h), (h, ffn // tp)):
                for shape in ((tokens, n, k), (tokens, k, n), (n, k, tokens)):
                    if all(x % 128 == 0 for x in shape):
                        shapes.add(shape)
    return sorted(shapes)


def cell(v):
    """Six significant digits as the measured tables print them (8.56928e-05, 400.964); ints whole."""
    if isinstance(v, bool):
        return str(v)
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return "%g" % v
    return str(v)


def write_table(path, kind, rows):
    """Writes the table whole or not at all (a temporary file beside it, then a rename)."""
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=os.path.basename(path) + ".tmp.")
    umask = os.umask(0)
    os.umask(umask)
    try:
        os.fchmod(fd, 0o666 & ~umask)  # mkstemp makes the file private; a table is for everyone, as open() makes it
        with os.fdopen(fd, "w", newline="") as f:
            w = csv.writer(f, lineterminator="\n")
            w.writerow(COLUMNS[kind])
            for r in rows:
                w.writerow([cell(r[c]) for c in COLUMNS[kind]])
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def read_table(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def compare_tables(measured_dir, reference_dir):
    """Per table found in both directories: the rows that measure the same thing, the median and the
    worst |measured / reference - 1| over their times. {kind: (rows, median, worst)}."""
    out = {}
    for kind in COLUMNS:
        a, b = os.path.join(measured_dir, kind + ".csv"), os.path.join(reference_dir, kind + ".csv")
        if not (os.path.exists(a) and os.path.exists(b)):
            continue
        ref = {tuple(r[k] for k in KEYS[kind]): r for r in read_table(b)}
        errors = []
        for r in read_table(a):
            other = ref.get(tuple(r[k] for k in KEYS[kind]))
            if other is None:
                continue
            for c in TIMES[kind]:
                errors.append(abs(float(r[c]) / float(other[c]) - 1))
        if errors:
            out[kind] = (len(errors), statistics.median(errors), max(errors))
    return out


def model_grid(models, tps=(1, 2, 4, 8)):
    """Attention shapes and layer widths of model files (dicts of models/*.yaml) on one GPU under tensor
    parallelism: (heads/tp, kv_heads/tp or 1, head_dim) and the widths hidden and ffn/tp."""
    heads, widths = set(), set()
    for m in models:
        h, n, kv = int(m["hidden"]), int(m["heads"]), int(m.get("kv_heads", m["heads"]))
        ffn = int(m.get("ffn_hidden", 4 * h))
        for tp in tps:
            if n % tp or ffn % tp:
                continue
            heads.add((n // tp, max(1, kv // tp), h // n))
            widths.update([h, ffn // tp])
    return sorted(heads), sorted(widths)


# ---- measuring (needs PyTorch and a CUDA GPU) ------------------------------------------------------

def timer(torch, warmup, iters, repeats):
    def timeit(fn):
        for _ in range(warmup):
            fn()
        torch.cuda.synchronize()
        per_call = []
        for _ in range(repeats):
            start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            for _ in range(iters):
                fn()
            stop.record()
            stop.synchronize()
            per_call.append(start.elapsed_time(stop) / 1e3 / iters)
        return statistics.median(per_call)
    return timeit


def measure_attention(torch, timeit, gpu, grid, seq_lens, tokens_per_batch, flash2=False):
    F = torch.nn.functional
    from torch.nn.attention import SDPBackend, sdpa_kernel
    # One backend per table, never a list: given several, PyTorch runs its own order (FlashAttention-2
    # first), so a table meant for cuDNN filled silently with the other kernel's rates on the H100 of
    # 2026-11-27 (docs/calibration.md). attention.csv: cuDNN's fused attention, what Transformer
    # Engine runs on Hopper; attention_flash2.csv: FlashAttention-2. A shape the backend cannot run
    # is skipped, and said so.
    backend = SDPBackend.FLASH_ATTENTION if flash2 else SDPBackend.CUDNN_ATTENTION
    rows = []
    for heads, kv_heads, head_dim in grid:
        for seq in seq_lens:
            batch = max(1, tokens_per_batch // seq)
            dev, dt = "cuda", torch.bfloat16
            q = torch.randn(batch, heads, seq, head_dim, device=dev, dtype=dt, requires_grad=True)
            k = torch.randn(batch, kv_heads, seq, head_dim, device=dev, dtype=dt, requires_grad=True)
            v = torch.randn(batch, kv_heads, seq, head_dim, device=dev, dtype=dt, requires_grad=True)
            grad = torch.randn(batch, heads, seq, head_dim, device=dev, dtype=dt)
            gqa = kv_heads != heads

            def forward():
                return F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=gqa)

            def forward_backward():
                # q, k and v stand for the projections' outputs, whose gradients a training step
                # hands on, never adds into: left set, each backward would also run autograd's
                # accumulation of dQ, dK and dV into the last call's (0.8-25.6% of the backward
                # in the 2026-11-23 table; flash-attn's own benchmark clears them too)
                q.grad = k.grad = v.grad = None
                forward().backward(grad)

            try:
                with sdpa_kernel([backend]):
                    fwd = timeit(forward)
                    both = timeit(forward_backward)
                rows.append(attention_row(heads, kv_heads, head_dim, seq, batch, True, fwd, both, gpu))
            except RuntimeError as e:  # no backend for the shape (memory, head_dim): say so, go on
                print("attention (%s) %d/%d heads, seq %d: skipped (%s)" % (backend.name, heads, kv_heads, seq,
                                                                            str(e)[:120]), file=sys.stderr)
            del q, k, v, grad
        torch.cuda.empty_cache()
    return rows


def measure_elementwise(torch, timeit, gpu, widths, tokens):
    F = torch.nn.functional
    rows = []
    for width in widths:
        dev, dt = "cuda", torch.bfloat16
        x = torch.randn(tokens, width, device=dev, dtype=dt, requires_grad=True)
        grad = torch.randn(tokens, width, device=dev, dtype=dt)
        weight = torch.randn(width, device=dev, dtype=dt, requires_grad=True)
        bias = torch.randn(width, device=dev, dtype=dt, requires_grad=True)
        # the residual branch's output: its gradient is the same tensor as x's (autograd passes it on
        # uncopied), so only x accumulates one, as where the residual stream rejoins in a layer
        other = torch.randn(tokens, width, device=dev, dtype=dt)
        gate_up = torch.randn(tokens, 2 * width, device=dev, dtype=dt, requires_grad=True)

        def swiglu():
            gate, up = gate_up.chunk(2, dim=-1)
            return F.silu(gate) * up

        ops = {
            "layernorm": lambda: F.layer_norm(x, (width,), weight, bias),
            "rmsnorm": lambda: F.rms_norm(x, (width,), weight),
            "gelu_tanh": lambda: F.gelu(x, approximate="tanh"),
            "dropout": lambda: F.dropout(x, 0.1, True),
            "residual_add": lambda: x + other,
            "swiglu": swiglu,
        }
        for name, fn in ops.items():
            fwd = timeit(fn)
            both = timeit(lambda fn=fn: fn().backward(grad))
            rows.append(elementwise_row(name, tokens, width, fwd, both, gpu))
        del x, grad, weight, bias, other, gate_up
        torch.cuda.empty_cache()
    return rows


def measure_cross_entropy(torch, timeit, gpu, vocabs, tps, tokens):
    F = torch.nn.functional
    rows = []
    for vocab in vocabs:
        for tp in tps:
            logits = torch.randn(tokens, vocab // tp, device="cuda", dtype=torch.bfloat16, requires_grad=True)
            target = torch.randint(0, vocab // tp, (tokens,), device="cuda")
            fwd = timeit(lambda: F.cross_entropy(logits.float(), target))
            def forward_backward():
                logits.grad = None  # the head's output: its gradient is handed on, not added into
                F.cross_entropy(logits.float(), target).backward()

            both = timeit(forward_backward)
            rows.append(cross_entropy_row(vocab, tp, tokens, fwd, both, gpu))
            del logits, target
            torch.cuda.empty_cache()
    return rows


def measure_optimizer(torch, gpu, sizes, repeats):
    rows = []
    for n in sizes:
        p = torch.nn.Parameter(torch.randn(n, device="cuda"))
        p.grad = torch.randn(n, device="cuda")
        opt = torch.optim.AdamW([p], lr=1e-4, fused=True)
        timeit = timer(torch, warmup=2, iters=5, repeats=repeats)
        rows.append(optimizer_row(n, timeit(opt.step), gpu))
        del p, opt
        torch.cuda.empty_cache()
    return rows


def fp8_operands(torch, kernel, m, n, k):
    """A call of `kernel` on x[m,k] and W[n,k] in E4M3 (W^T column-major, as _scaled_mm wants it), or
    None where this PyTorch or GPU has no such kernel."""
    F, cap, dev = torch.nn.functional, torch.cuda.get_device_capability(), "cuda"
    if kernel == "blockwise" and (cap != (9, 0) or not hasattr(F, "scaled_mm")):
        return None
    if kernel == "mxfp8" and (cap < (10, 0) or not hasattr(F, "scaled_mm")):
        return None

    def member(enum, *spellings):  # BlockWise1x128 in some releases, Blockwise_1x128 in others
        for spelled in spellings:
            if hasattr(enum, spelled):
                return getattr(enum, spelled)
        raise RuntimeError("%s has none of %s" % (enum.__name__, ", ".join(spellings)))

    if kernel == "mxfp8":  # blocks of 32 with E8M0 scales, swizzled as the kernel reads them (Blackwell)
        from torch.nn.functional import ScalingType, SwizzleType
        from torch.testing._internal.common_quantized import to_blocked, to_mxfp
        sa, xa = to_mxfp(torch.randn(m, k, device=dev, dtype=torch.bfloat16), block_size=32, format="mxfp8")
        sb, wb = to_mxfp(torch.randn(n, k, device=dev, dtype=torch.bfloat16), block_size=32, format="mxfp8")
        sa, sb = to_blocked(sa), to_blocked(sb)
        mx = member(ScalingType, "BlockWise1x32", "Blockwise_1x32")
        swizzle = member(SwizzleType, "SWIZZLE_32_4_4", "Swizzle_32_4_4")
        return lambda: F.scaled_mm(xa, wb.t(), scale_a=sa, scale_recipe_a=mx, scale_b=sb, scale_recipe_b=mx,
                                   swizzle_a=swizzle, swizzle_b=swizzle, output_dtype=torch.bfloat16)
    x = torch.randn(m, k, device=dev).to(torch.float8_e4m3fn)
    w = torch.randn(n, k, device=dev).to(torch.float8_e4m3fn)
    if kernel in ("tensorwise", "fast_accum"):
        one = torch.tensor(1.0, device=dev)
        return lambda: torch._scaled_mm(x, w.t(), scale_a=one, scale_b=one, out_dtype=torch.bfloat16,
                                        use_fast_accum=kernel == "fast_accum")
    if kernel == "rowwise":  # PyTorch's rowwise _scaled_mm, as torchao's rowwise recipe calls it forward
        sa, sb = torch.ones(m, 1, device=dev), torch.ones(1, n, device=dev)
        return lambda: torch._scaled_mm(x, w.t(), scale_a=sa, scale_b=sb, out_dtype=torch.bfloat16,
                                        use_fast_accum=True)
    if kernel == "blockwise":  # DeepSeek-V3's tiles, as PyTorch's own scaled_mm benchmark lays them out
        from torch.nn.functional import ScalingType
        # x: 1x128 scales (m, k/128), outer-dim-major; W: 128x128 scales (n/128, k/128) with the row
        # stride padded to a multiple of 4, then transposed
        sa = torch.ones(m, k // 128, device=dev).t().contiguous().t()
        padded = -(-(k // 128) // 4) * 4
        sb = torch.ones(n // 128, padded, device=dev)[:, :k // 128].t()
        one_by = member(ScalingType, "BlockWise1x128", "Blockwise_1x128")
        square = member(ScalingType, "BlockWise128x128", "Blockwise_128x128")
        return lambda: F.scaled_mm(x, w.t(), scale_a=sa, scale_recipe_a=one_by, scale_b=sb, scale_recipe_b=square,
                                   output_dtype=torch.bfloat16)
    return None


def measure_gemm_fp8(torch, timeit, gpu, shapes, kernels):
    """Each kernel on each shape. A kernel this PyTorch or GPU does not have is skipped whole, a shape
    it refuses alone; each said on stderr."""
    rows = []
    for kernel in kernels:
        for m, n, k in shapes:
            try:
                fn = fp8_operands(torch, kernel, m, n, k)
                if fn is None:
                    print("gemm_fp8 %s: skipped (not in this PyTorch or on this GPU)" % kernel, file=sys.stderr)
                    break
                rows.append(gemm_row(kernel, m, n, k, timeit(fn), gpu))
            except (RuntimeError, TypeError, ValueError, ImportError, AssertionError, AttributeError) as e:
                print("gemm_fp8 %s %d x %d x %d: skipped (%s)" % (kernel, m, n, k, str(e)[:160]), file=sys.stderr)
            torch.cuda.empty_cache()
    return rows


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", help="directory for the tables")
    ap.add_argument("--compare", nargs=2, metavar=("MEASURED", "REFERENCE"),
                    help="compare two table directories (no GPU needed) and exit")
    ap.add_argument("--quick", action="store_true", help="a small grid, for a first look")
    ap.add_argument("--models", help="also the attention shapes and widths of these model files (a directory)")
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--iters", type=int, default=10)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--only", nargs="+", choices=list(COLUMNS), help="measure only these tables")
    a = ap.parse_args(argv)
    if a.compare:
        result = compare_tables(*a.compare)
        if not result:
            print("no table found in both directories", file=sys.stderr)
            return 2
        for kind, (n, median, worst) in result.items():
            print("%-14s %3d times: median |ratio - 1| %.1f%%, worst %.1f%%" % (kind, n, 100 * median, 100 * worst))
        return 0
    if not a.out:
        ap.error("--out DIR is needed to measure")
    try:
        import torch
    except ImportError:
        print("measure_kernels.py: error: PyTorch is not installed (pip install torch), and it is needed to measure",
              file=sys.stderr)
        return 2
    if not torch.cuda.is_available():
        print("measure_kernels.py: error: no CUDA device visible to PyTorch", file=sys.stderr)
        return 1
    gpu = torch.cuda.get_device_name(0)
    torch.manual_seed(0)
    timeit = timer(torch, a.warmup, a.iters, a.repeats)
    grid, widths = [(h, kv, 128) for h, kv in ATTENTION_HEADS], list(WIDTHS)
    seq_lens, vocabs, sizes = list(SEQ_LENS), list(VOCABS), list(OPTIMIZER_PARAMS)
    if a.models:
        import yaml  # the model files' format; python3-yaml
        models = []
        for name in sorted(os.listdir(a.models)):
            if name.endswith(".yaml"):
                with open(os.path.join(a.models, name)) as f:
                    models.append(yaml.safe_load(f))
        more_heads, more_widths = model_grid(models)
        grid = sorted(set(grid) | set(more_heads))
        widths = sorted(set(widths) | set(more_widths))
    shapes = layer_gemm_shapes(GEMM_LAYERS, GEMM_TPS, GEMM_TOKENS)
    if a.quick:
        grid, seq_lens, widths, vocabs, sizes = grid[:2], seq_lens[:3], widths[:2], vocabs[:2], sizes[:1]
        shapes = layer_gemm_shapes(GEMM_LAYERS[:1], (1,), GEMM_TOKENS)
    only = set(a.only or COLUMNS)
    print("measuring on %s (PyTorch %s, CUDA %s)" % (gpu, torch.__version__, torch.version.cuda), file=sys.stderr)
    if "attention" in only:
        write_table(os.path.join(a.out, "attention.csv"), "attention",
                    measure_attention(torch, timeit, gpu, grid, seq_lens, 16384))
    if "attention_flash2" in only:
        write_table(os.path.join(a.out, "attention_flash2.csv"), "attention_flash2",
                    measure_attention(torch, timeit, gpu, grid, seq_lens, 16384, flash2=True))
    if "elementwise" in only:
        write_table(os.path.join(a.out, "elementwise.csv"), "elementwise",
                    measure_elementwise(torch, timeit, gpu, widths, TOKENS))
    if "cross_entropy" in only:
        write_table(os.path.join(a.out, "cross_entropy.csv"), "cross_entropy",
                    measure_cross_entropy(torch, timeit, gpu, vocabs, (1, 8), TOKENS))
    if "optimizer" in only:
        write_table(os.path.join(a.out, "optimizer.csv"), "optimizer", measure_optimizer(torch, gpu, sizes, a.repeats))
    if "gemm_fp8" in only:
        if torch.cuda.get_device_capability() >= (8, 9):  # FP8 tensor cores: Ada, Hopper and later
            write_table(os.path.join(a.out, "gemm_fp8.csv"), "gemm_fp8",
                        measure_gemm_fp8(torch, timeit, gpu, shapes, FP8_KERNELS))
        else:
            print("gemm_fp8: skipped (no FP8 tensor cores before sm_89; this GPU is sm_%d%d)"
                  % torch.cuda.get_device_capability(), file=sys.stderr)
    print("wrote the tables under %s" % a.out, file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

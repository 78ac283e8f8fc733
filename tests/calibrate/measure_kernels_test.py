"""Tests of calibrate/measure_kernels.py that need neither PyTorch nor a GPU: the rows and their
derived columns against the measured H100 tables (calibrate/data/h100), the CSV layout, the
comparison of two table directories, the grid taken from model files. Run by ctest
(calibrate_measure_kernels_script) with plain python3."""
import csv
import io
import os
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "calibrate"))
import measure_kernels as mk  # noqa: E402


class Rows(unittest.TestCase):
    def test_attention_rates_follow_the_tables_convention(self):
        # attention.csv's first row: 8 heads, seq 1024, batch 16, causal: forward FLOPs
        # 4 * 16 * 8 * 1024^2 * 128 / 2 = 3.436e10 in 8.56928e-05 s = 400.964 TFLOP/s; backward
        # 2.5 x that over (0.000533251 - 8.56928e-05) s = 191.929 TFLOP/s
        r = mk.attention_row(8, 8, 128, 1024, 16, True, 8.56928e-05, 0.000533251, "H100")
        self.assertAlmostEqual(r["fwd_tflops"], 400.964, delta=0.001)
        self.assertAlmostEqual(r["bwd_tflops"], 191.929, delta=0.001)
        # not causal: the whole score matrix, twice the FLOPs
        full = mk.attention_row(8, 8, 128, 1024, 16, False, 8.56928e-05, 0.000533251, "H100")
        self.assertAlmostEqual(full["fwd_tflops"], 2 * r["fwd_tflops"], places=6)

    def test_elementwise_bandwidth_counts_reads_and_writes(self):
        # elementwise.csv: layernorm on [8192, 2048] bf16 = 33554432 bytes in, read and written
        # in 3.78816e-05 s: 2 * 33554432 / 3.78816e-05 / 1e9 = 1771.54 GB/s
        r = mk.elementwise_row("layernorm", 8192, 2048, 3.78816e-05, 0.000169034, "H100")
        self.assertEqual(r["bytes_in"], 33554432)
        self.assertAlmostEqual(r["fwd_GBps"], 1771.54, delta=0.01)
        # SwiGLU reads two [8192, 2048] halves, writes one: 3 x 33554432 / 0.000105002 s = 958.683
        s = mk.elementwise_row("swiglu", 8192, 2048, 0.000105002, 0.000370656, "H100")
        self.assertEqual(s["bytes_in"], 67108864)
        self.assertAlmostEqual(s["fwd_GBps"], 958.683, delta=0.01)

    def test_optimizer_seconds_per_parameter(self):
        # optimizer.csv: 1e8 parameters in 0.00107643 s = 1.07643e-11 s each, 28 bytes moved each
        r = mk.optimizer_row(10**8, 0.00107643, "H100")
        self.assertAlmostEqual(r["s_per_param"], 1.07643e-11, delta=1e-16)
        self.assertEqual(r["bytes_per_param_moved"], 28)


class Fp8Gemms(unittest.TestCase):
    def test_layer_shapes_are_the_three_gemms_of_each_weight(self):
        # Llama 3 8B at tp 8, 8192 tokens: QKV n = (32 + 2 x 8) x 128 / 8 = 768, output k = 512, fc1
        # n = 2 x 14336 / 8 = 3584, fc2 k = 1792; each forward (m, n, k), input gradient (m, k, n)
        # and weight gradient (n, k, m)
        shapes = mk.layer_gemm_shapes([(4096, 14336, 32, 8, True)], (8,), 8192)
        for n, k in ((768, 4096), (4096, 512), (3584, 4096), (4096, 1792)):
            self.assertIn((8192, n, k), shapes)
            self.assertIn((8192, k, n), shapes)
            self.assertIn((n, k, 8192), shapes)
        self.assertEqual(len(shapes), 12)
        self.assertEqual(shapes, sorted(set(shapes)))
        # fewer kv heads than ranks: each rank keeps one (Megatron replicates them)
        self.assertIn((8192, (32 + 2 * 8) * 128 // 8, 4096), mk.layer_gemm_shapes([(4096, 14336, 32, 4, True)], (8,), 8192))

    def test_rows_carry_the_kernel_and_its_rate(self):
        r = mk.gemm_row("fast_accum", 8192, 8192, 8192, 0.8e-3, "H")
        self.assertAlmostEqual(r["tflops"], 2 * 8192 ** 3 / 0.8e-3 / 1e12, places=6)
        self.assertEqual(mk.COLUMNS["gemm_fp8"], ["kernel", "m", "n", "k", "time_s", "tflops", "gpu"])
        with tempfile.TemporaryDirectory() as d:
            mk.write_table(os.path.join(d, "gemm_fp8.csv"), "gemm_fp8", [r])
            with open(os.path.join(d, "gemm_fp8.csv")) as f:
                self.assertEqual(f.read(), "kernel,m,n,k,time_s,tflops,gpu\nfast_accum,8192,8192,8192,0.0008,%g,H\n"
                                 % r["tflops"])
        # the kernels' names are the hardware file's (gemm.fp8_kernels) and tensorwise
        self.assertEqual(mk.FP8_KERNELS, ["tensorwise", "fast_accum", "rowwise", "blockwise", "mxfp8"])


class Tables(unittest.TestCase):
    def test_written_like_the_measured_tables_with_gpu_last(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "attention.csv")
            mk.write_table(path, "attention",
                           [mk.attention_row(8, 8, 128, 1024, 16, True, 8.56928e-05, 0.000533251, "NVIDIA H100 80GB HBM3")])
            with open(path) as f:
                text = f.read()
            self.assertEqual(text,
                             "precision,heads,kv_heads,head_dim,seq,batch,causal,fwd_s,fwd_bwd_s,fwd_tflops,bwd_tflops,gpu\n"
                             "bf16,8,8,128,1024,16,True,8.56928e-05,0.000533251,400.964,191.929,NVIDIA H100 80GB HBM3\n")
            # the reference table's columns are a prefix: a reader of those reads these
            ref = os.path.join(HERE, "..", "..", "calibrate", "data", "h100", "attention.csv")
            if os.path.exists(ref):
                with open(ref) as f:
                    self.assertEqual(next(csv.reader(f)), mk.COLUMNS["attention"][:-1])
            self.assertEqual(os.listdir(d), ["attention.csv"])  # no temporary file left

    def test_tables_get_the_permissions_open_would_give(self):
        # mkstemp makes a private file (0600); the H100 run of 2026-11-27 wrote its tables so
        old = os.umask(0o022)
        try:
            with tempfile.TemporaryDirectory() as d:
                path = os.path.join(d, "optimizer.csv")
                mk.write_table(path, "optimizer", [mk.optimizer_row(10 ** 8, 0.01, "NVIDIA H100 80GB HBM3")])
                self.assertEqual(os.stat(path).st_mode & 0o777, 0o644)
        finally:
            os.umask(old)

    def test_every_table_has_the_reference_columns_and_gpu(self):
        # the FlashAttention-2 table is read by the same parser as cuDNN's (calibrate/data/h100 has both)
        self.assertEqual(mk.COLUMNS["attention_flash2"], mk.COLUMNS["attention"])
        ref = os.path.join(HERE, "..", "..", "calibrate", "data", "h100", "attention_flash2.csv")
        if os.path.exists(ref):
            with open(ref) as f:
                self.assertEqual(next(csv.reader(f)), mk.COLUMNS["attention_flash2"])
        self.assertEqual(mk.COLUMNS["elementwise"], ["op", "tokens", "width", "bytes_in", "fwd_s", "fwd_bwd_s",
                                                     "fwd_GBps", "gpu"])
        self.assertEqual(mk.COLUMNS["cross_entropy"], ["vocab", "tp", "tokens", "fwd_s", "fwd_bwd_s", "gpu"])
        self.assertEqual(mk.COLUMNS["optimizer"], ["op", "params", "time_s", "s_per_param", "bytes_per_param_moved",
                                                   "gpu"])

    def test_compare_reports_median_and_worst_time_error(self):
        with tempfile.TemporaryDirectory() as a, tempfile.TemporaryDirectory() as b:
            mk.write_table(os.path.join(b, "cross_entropy.csv"), "cross_entropy",
                           [mk.cross_entropy_row(32000, 1, 8192, 0.002, 0.004, "ref"),
                            mk.cross_entropy_row(32000, 8, 8192, 0.001, 0.002, "ref")])
            # 2% and 4% slower, forward+backward 10% faster; one row the reference lacks
            mk.write_table(os.path.join(a, "cross_entropy.csv"), "cross_entropy",
                           [mk.cross_entropy_row(32000, 1, 8192, 0.00204, 0.0036, "mine"),
                            mk.cross_entropy_row(32000, 8, 8192, 0.00104, 0.0018, "mine"),
                            mk.cross_entropy_row(50257, 1, 8192, 1.0, 1.0, "mine")])
            result = mk.compare_tables(a, b)
            n, median, worst = result["cross_entropy"]
            self.assertEqual(n, 4)
            self.assertAlmostEqual(median, 0.07, places=9)  # of 0.02, 0.04, 0.10, 0.10
            self.assertAlmostEqual(worst, 0.10, places=9)
            self.assertNotIn("attention", result)


class Grid(unittest.TestCase):
    def test_attention_shapes_and_widths_of_model_files_under_tp(self):
        llama3_70b = {"hidden": 8192, "heads": 64, "kv_heads": 8, "ffn_hidden": 28672}
        heads, widths = mk.model_grid([llama3_70b], tps=(1, 8, 16))
        # tp 1: 64 heads, 8 KV heads; tp 8: 8 and 1; tp 16: 4 heads share one KV head (at least 1)
        self.assertEqual(heads, [(4, 1, 128), (8, 1, 128), (64, 8, 128)])
        self.assertEqual(widths, [1792, 3584, 8192, 28672])


class WithoutTorch(unittest.TestCase):
    def test_measuring_without_pytorch_says_so(self):
        try:
            import torch  # noqa: F401
            self.skipTest("PyTorch is installed here")
        except ImportError:
            pass
        err = io.StringIO()
        old, sys.stderr = sys.stderr, err
        try:
            with tempfile.TemporaryDirectory() as d:
                self.assertEqual(mk.main(["--out", d]), 2)
        finally:
            sys.stderr = old
        self.assertIn("PyTorch is not installed", err.getvalue())


if __name__ == "__main__":
    unittest.main()

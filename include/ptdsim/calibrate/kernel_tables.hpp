#pragma once
#include <array>
#include <optional>
#include <string>
#include <vector>

#include "ptdsim/core/hardware.hpp"

// Measured kernel tables (the CSV files of docs/calibration.md "Kernel tables": gemm, attention,
// elementwise, cross_entropy, optimizer, contention) and the fits that turn them into a hardware
// file's gpu.kernels section (docs/analytic.md "Compute from measured kernels").
namespace ptdsim::calibrate {

struct GemmMeasurement {
  int line = 0;  // of its row in the table (0: not from a file)
  core::Precision precision = core::Precision::bf16;
  double m = 0, n = 0, k = 0, time_s = 0;
  int hidden = 0;  // the model width the shape belongs to (0 when the file has no such column)
};
struct AttentionMeasurement {
  int line = 0;  // of its row in the table (0: not from a file)
  double heads = 0, kv_heads = 0, head_dim = 0, seq = 0, batch = 0;
  bool causal = true;
  double forward_s = 0, backward_s = 0;  // backward = fwd_bwd_s - fwd_s
};
struct ElementwiseMeasurement {
  int line = 0;  // of its row in the table (0: not from a file)
  core::MemoryOp op = core::MemoryOp::layernorm;
  double elements = 0;  // tokens x width (SwiGLU: of its output)
  double forward_s = 0, backward_s = 0;
};
struct CrossEntropyMeasurement {
  int line = 0;  // of its row in the table (0: not from a file)
  double elements = 0;  // tokens x vocab / tp logits
  double forward_s = 0, backward_s = 0;
};
struct OptimizerMeasurement {
  int line = 0;  // of its row in the table (0: not from a file)
  double params = 0, time_s = 0, bytes_per_param = 0;
};
struct ContentionMeasurement {
  int line = 0;  // of its row in the table (0: not from a file)
  double blocks = 0, alone_s = 0, with_copy_s = 0;
  double slowdown() const { return with_copy_s / alone_s; }
};

struct KernelMeasurements {
  std::vector<GemmMeasurement> gemm;
  // gemm_fp8.csv: each FP8 kernel's rows (precision fp8; its tensorwise rows, the kernel of gemm.csv's
  // fp8 rows timed again for measure_kernels.py --compare, are checked and left out)
  std::array<std::vector<GemmMeasurement>, core::kFp8KernelCount> gemm_fp8;
  std::vector<AttentionMeasurement> attention;
  std::vector<AttentionMeasurement> attention_flash2;  // attention_flash2.csv: FlashAttention-2's rows
  std::vector<ElementwiseMeasurement> elementwise;
  std::vector<CrossEntropyMeasurement> cross_entropy;
  std::vector<OptimizerMeasurement> optimizer;
  std::vector<ContentionMeasurement> contention;
  std::vector<std::string> files;  // the files read, in the order above
  std::string dir;                 // where they were read (fit errors name its files)
};

// Parsers of one file's text; `name` is the file in messages. A malformed file (a missing column,
// a row of the wrong length, a value that is not a positive number, ...) throws core::ConfigError
// at its file:line:col.
std::vector<GemmMeasurement> parse_gemm_csv(const std::string& text, const std::string& name);
std::array<std::vector<GemmMeasurement>, core::kFp8KernelCount> parse_gemm_fp8_csv(const std::string& text,
                                                                                  const std::string& name);
std::vector<AttentionMeasurement> parse_attention_csv(const std::string& text, const std::string& name);
std::vector<ElementwiseMeasurement> parse_elementwise_csv(const std::string& text, const std::string& name);
std::vector<CrossEntropyMeasurement> parse_cross_entropy_csv(const std::string& text, const std::string& name);
std::vector<OptimizerMeasurement> parse_optimizer_csv(const std::string& text, const std::string& name);
std::vector<ContentionMeasurement> parse_contention_csv(const std::string& text, const std::string& name);

// Reads whichever of DIR/{gemm,gemm_fp8,attention,attention_flash2,elementwise,cross_entropy,optimizer,contention}.csv exist;
// throws core::ConfigError when there is none.
KernelMeasurements read_kernel_tables(const std::string& dir);

// ---- fits ----

// The GEMM model of one precision (core::GemmModel) fitted to its rows by Levenberg-Marquardt on
// the log of time (every residual a relative error), for each candidate tile shape; the tile with
// the smallest error wins.
core::GemmModel fit_gemm_model(const std::vector<GemmMeasurement>& rows, core::Precision p, int sms);

// One direction of the attention core: time = flops / rate + per-row terms, weighted least squares
// with weight 1 / t (terms that come out negative are dropped and the rest refitted).
core::AttentionModel fit_attention(const std::vector<AttentionMeasurement>& rows, bool backward);

// Achieved bandwidth over the documented bytes of each class (core::memory_op_bytes), forward and
// backward: the median over the rows of bytes / time.
core::StreamRate fit_stream(const std::vector<double>& bytes, const std::vector<double>& forward_s,
                            const std::vector<double>& backward_bytes, const std::vector<double>& backward_s);

// The factor f of share = f * blocks / sms that best predicts the GEMM's slowdown 1 / (1 - share)
// beside a copy on `blocks` SMs (least squares on the log of the slowdown, Brent's method), fitted
// on the rows at `comm_sms` blocks (the SMs the hardware's collectives hold, the only share the
// engines use: the slowdown is not proportional to the blocks), else on every row below `sms`.
// Rows with blocks >= sms are left out: the copy then takes every SM first and the two serialise.
double fit_contention(const std::vector<ContentionMeasurement>& rows, int sms, int comm_sms);

// Mean absolute relative error of `predict` over rows, and the worst one (signed).
struct FitError {
  double mape = 0;
  double worst = 0;
  int count = 0;
};

// Everything import-kernels writes, and how well each part fits its rows.
struct KernelFit {
  core::KernelTables tables;
  std::optional<double> contention_factor;
  std::vector<std::string> report;  // one line per fitted part: parameters and error
};
// Fits every table present. `sms`: the measuring GPU's SM count (the GEMM model's waves and the
// contention share need it; 0 refuses those tables); `comm_sms`: the SMs a collective holds
// (gpu.comm_sms; 0 if unknown). `source`: written as the tables' source.
KernelFit fit_kernels(const KernelMeasurements& m, int sms, int comm_sms, const std::string& source);

}  // namespace ptdsim::calibrate

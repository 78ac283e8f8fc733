// Fits of the measured kernel tables (docs/analytic.md "Compute from measured kernels" derives the
// forms; docs/calibration.md "Kernel tables" shows the result on the H100 tables).
#include <Eigen/Dense>
#include <boost/math/tools/minima.hpp>
#include <fmt/format.h>
#include <unsupported/Eigen/NonLinearOptimization>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include "ptdsim/calibrate/kernel_tables.hpp"
#include "ptdsim/core/error.hpp"
#include "ptdsim/core/names.hpp"
#include "ptdsim/io/load.hpp"

namespace ptdsim::calibrate {
namespace {

// Hopper GEMM kernels give each SM (CTA) an output tile of 128 x 128 or 128 x 256 (the shapes of
// CUTLASS's SM90 examples; a 2 x 1 cluster pairs two CTAs on 256 x 128). cuBLAS does not say which
// it picks, so the fit tries each and keeps the one that explains the rows best.
constexpr std::array<std::array<int, 2>, 3> kTiles{{{128, 128}, {128, 256}, {256, 128}}};

double logistic(double x) { return 1 / (1 + std::exp(-x)); }

core::GemmModel gemm_model_of(const Eigen::VectorXd& x, int tile_m, int tile_n) {
  core::GemmModel m;
  m.rate_flops = std::exp(x[0]);
  m.floor_s = std::exp(x[1]);
  m.epilogue_Bps = std::exp(x[2]);
  m.knee = std::exp(x[3]);
  m.tail = logistic(x[4]);
  m.tile_m = tile_m;
  m.tile_n = tile_n;
  return m;
}

// Residuals log(model / measured) of the GEMM rows for the parameters x (log rate, log floor,
// log epilogue rate, log knee, logit tail), for Eigen's Levenberg-Marquardt.
struct GemmResiduals {
  using Scalar = double;
  enum { InputsAtCompileTime = Eigen::Dynamic, ValuesAtCompileTime = Eigen::Dynamic };
  using InputType = Eigen::VectorXd;
  using ValueType = Eigen::VectorXd;
  using JacobianType = Eigen::MatrixXd;

  const std::vector<const GemmMeasurement*>* rows;
  int sms, tile_m, tile_n;
  int inputs() const { return 5; }
  int values() const { return static_cast<int>(rows->size()); }
  int operator()(const Eigen::VectorXd& x, Eigen::VectorXd& r) const {
    const core::GemmModel m = gemm_model_of(x, tile_m, tile_n);
    for (std::size_t i = 0; i < rows->size(); ++i) {
      const GemmMeasurement& g = *(*rows)[i];
      const double t = m.time(sms, g.m, g.n, g.k);
      r[static_cast<Eigen::Index>(i)] = std::isfinite(t) && t > 0 ? std::log(t / g.time_s) : 1e3;
    }
    return 0;
  }
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

template <class Predict, class Measured>
FitError error_of(std::size_t n, Predict predict, Measured measured) {
  FitError e;
  for (std::size_t i = 0; i < n; ++i) {
    const double err = predict(i) / measured(i) - 1;
    e.mape += std::abs(err);
    if (std::abs(err) > std::abs(e.worst)) e.worst = err;
  }
  e.count = static_cast<int>(n);
  if (n > 0) e.mape /= static_cast<double>(n);
  return e;
}

std::string pct(const FitError& e) {
  return fmt::format("MAPE {:.1f}%, worst {:+.1f}% over {} rows", 100 * e.mape, 100 * e.worst, e.count);
}


// The table a fit read, as its path under the tables' directory (the bare name without one).
std::string table_path(const KernelMeasurements& m, const char* file) {
  return m.dir.empty() ? std::string(file) : (m.dir + "/" + file);
}

// A row's own value of a fitted constant (its FLOP rate, its bandwidth), in the constant's unit.
struct RowValue {
  int line;
  double value;
};

// Refuses a fitted constant that is not finite or lies outside the range the hardware file takes
// for it (io::valid_range of `key`, docs/inputs.md "Valid ranges"): at the table's first row whose own
// value is outside that range, naming up to five such rows; at the file when no single row is.
void check_fitted(double value, const std::string& key, const std::string& what, const std::string& file,
                  const std::vector<RowValue>& rows) {
  const io::ValidRange r = io::valid_range(key);
  auto outside = [&](double v) { return !std::isfinite(v) || v < r.min || v > r.max; };
  if (!outside(value)) return;
  std::vector<int> lines;
  for (const auto& row : rows)
    if (outside(row.value)) lines.push_back(row.line);
  std::string message = fmt::format("the fitted {} is {:g}, outside {:g} to {:g}", what, value, r.min, r.max);
  if (!lines.empty()) {
    std::string list;
    for (std::size_t i = 0; i < lines.size() && i < 5; ++i) list += (i ? ", " : "") + std::to_string(lines[i]);
    message += fmt::format(": the rows at line{} {}{} give such values on their own", lines.size() > 1 ? "s" : "",
                           list, lines.size() > 5 ? fmt::format(" (and {} more)", lines.size() - 5) : "");
  } else {
    message += ": no single row does; the rows together do not fit the model";
  }
  throw core::ConfigError({file, lines.empty() ? 0 : lines.front(), lines.empty() ? 0 : 1}, message);
}

}  // namespace

core::GemmModel fit_gemm_model(const std::vector<GemmMeasurement>& all, core::Precision p, int sms) {
  std::vector<const GemmMeasurement*> rows;
  for (const auto& g : all)
    if (g.precision == p) rows.push_back(&g);
  if (rows.size() < 6)
    throw core::ConfigError({"gemm.csv", 0, 0}, fmt::format("too few {} GEMM rows to fit the model ({}; at least 6)",
                                                            core::name(p), rows.size()));
  // start: the rate of the largest quarter of the GEMMs, the shortest time as the floor
  std::vector<const GemmMeasurement*> by_flops = rows;
  std::sort(by_flops.begin(), by_flops.end(),
            [](const auto* a, const auto* b) { return a->m * a->n * a->k < b->m * b->n * b->k; });
  std::vector<double> rates;
  for (std::size_t i = by_flops.size() * 3 / 4; i < by_flops.size(); ++i)
    rates.push_back(2 * by_flops[i]->m * by_flops[i]->n * by_flops[i]->k / by_flops[i]->time_s);
  double floor = std::numeric_limits<double>::infinity();
  for (const auto* g : rows) floor = std::min(floor, g->time_s);

  core::GemmModel best;
  double best_sse = std::numeric_limits<double>::infinity();
  for (const auto& [tm, tn] : kTiles) {
    Eigen::VectorXd x(5);
    x << std::log(median(rates)), std::log(floor), std::log(4e12), std::log(2.0), std::log(0.25 / 0.75);
    GemmResiduals f{&rows, sms, tm, tn};
    Eigen::NumericalDiff<GemmResiduals> diff(f);
    Eigen::LevenbergMarquardt<Eigen::NumericalDiff<GemmResiduals>, double> lm(diff);
    lm.parameters.maxfev = 4000;
    lm.minimize(x);
    Eigen::VectorXd r(f.values());
    f(x, r);
    const double sse = r.squaredNorm();
    if (sse < best_sse) {
      best_sse = sse;
      best = gemm_model_of(x, tm, tn);
    }
  }
  return best;
}

core::AttentionModel fit_attention(const std::vector<AttentionMeasurement>& rows, bool backward) {
  // columns: FLOPs executed, bytes of the query rows, bytes of the key/value rows; each row divided
  // by its measured time so the residuals are relative errors
  std::array<bool, 3> use{true, true, true};
  Eigen::Vector3d c = Eigen::Vector3d::Zero();
  for (int attempt = 0; attempt < 3; ++attempt) {
    const Eigen::Index n = static_cast<Eigen::Index>(rows.size());
    Eigen::MatrixXd a = Eigen::MatrixXd::Zero(n, 3);
    Eigen::VectorXd y = Eigen::VectorXd::Ones(n);
    for (Eigen::Index i = 0; i < n; ++i) {
      const auto& r = rows[static_cast<std::size_t>(i)];
      core::AttentionShape s{r.batch, r.heads, r.kv_heads, r.head_dim, r.seq, r.seq, r.causal};
      const double t = backward ? r.backward_s : r.forward_s;
      const double bytes = 2 * r.batch * r.head_dim * r.seq;
      a(i, 0) = (backward ? 2.5 : 1.0) * s.flops() / t;
      a(i, 1) = use[1] ? bytes * r.heads / t : 0.0;
      a(i, 2) = use[2] ? bytes * r.kv_heads / t : 0.0;
    }
    // scale the columns to O(1) before solving
    Eigen::Vector3d scale;
    for (int j = 0; j < 3; ++j) scale[j] = a.col(j).cwiseAbs().maxCoeff() > 0 ? a.col(j).cwiseAbs().maxCoeff() : 1.0;
    Eigen::MatrixXd as = a * scale.cwiseInverse().asDiagonal();
    c = as.colPivHouseholderQr().solve(y).cwiseQuotient(scale);
    bool dropped = false;
    for (int j = 1; j < 3; ++j)
      if (use[static_cast<std::size_t>(j)] && c[j] < 0) use[static_cast<std::size_t>(j)] = false, dropped = true;
    if (!dropped) break;
  }
  if (!(c[0] > 0)) throw core::ConfigError({"attention.csv", 0, 0}, "the attention rows give no positive FLOP rate");
  core::AttentionModel m;
  m.rate_flops = 1 / c[0];
  m.q_Bps = use[1] && c[1] > 0 ? 1 / c[1] : 0.0;
  m.kv_Bps = use[2] && c[2] > 0 ? 1 / c[2] : 0.0;
  return m;
}

namespace {
// The rate of a streaming kernel: the median over the rows of bytes / time. Robust to the odd row
// that ran long (elementwise.csv's dropout backward at width 8192 took 2.8x its neighbours' time per
// byte); it minimises the sum of |log(rate_i / rate)|.
double stream_rate(const std::vector<double>& bytes, const std::vector<double>& t) {
  std::vector<double> r;
  for (std::size_t i = 0; i < bytes.size(); ++i) r.push_back(bytes[i] / t[i]);
  std::sort(r.begin(), r.end());
  if (r.empty()) return 0.0;
  const std::size_t h = r.size() / 2;
  return r.size() % 2 ? r[h] : (r[h - 1] + r[h]) / 2;
}
}  // namespace

core::StreamRate fit_stream(const std::vector<double>& bytes, const std::vector<double>& forward_s,
                            const std::vector<double>& backward_bytes, const std::vector<double>& backward_s) {
  return {stream_rate(bytes, forward_s), stream_rate(backward_bytes, backward_s)};
}

std::vector<const ContentionMeasurement*> contention_rows(const std::vector<ContentionMeasurement>& rows, int sms,
                                                          int comm_sms) {
  std::vector<const ContentionMeasurement*> at, below;
  for (const auto& r : rows) {
    if (r.blocks >= sms) continue;
    below.push_back(&r);
    if (r.blocks == comm_sms) at.push_back(&r);
  }
  return at.empty() ? below : at;
}

double fit_contention(const std::vector<ContentionMeasurement>& rows, int sms, int comm_sms) {
  const auto use = contention_rows(rows, sms, comm_sms);
  if (use.empty())
    throw core::ConfigError({"contention.csv", 0, 0},
                            fmt::format("no row with fewer blocks than the {} SMs: every row serialises", sms));
  double most = 0;
  for (const auto* r : use) most = std::max(most, r->blocks);
  auto sse = [&](double f) {
    double s = 0;
    for (const auto* r : use) {
      const double share = f * r->blocks / sms;
      const double e = std::log(1 / (1 - share)) - std::log(r->slowdown());
      s += e * e;
    }
    return s;
  };
  // the share must stay below 1 for the largest block count used
  const double hi = 0.999 * sms / most;
  return boost::math::tools::brent_find_minima(sse, 1e-3, hi, 40).first;
}

namespace {

// One GEMM model fitted to `rows` of `file`, its parameters checked against the ranges of their keys
// (`key`: the model's section, ending in a dot), and a line of the report, headed `label`.
core::GemmModel fit_reported_gemm(const std::vector<GemmMeasurement>& rows, core::Precision p, int sms,
                                  const std::string& key, const std::string& file, const std::string& label,
                                  KernelFit& out) {
  const core::GemmModel model = fit_gemm_model(rows, p, sms);
  std::vector<RowValue> rates;
  for (const auto& g : rows) rates.push_back({g.line, 2 * g.m * g.n * g.k / g.time_s / 1e12});
  check_fitted(model.rate_flops / 1e12, key + "tflops", "GEMM rate (TFLOP/s)", file, rates);
  check_fitted(model.epilogue_Bps / 1e9, key + "epilogue_gbs", "GEMM epilogue bandwidth (GB/s)", file, {});
  check_fitted(model.floor_s * 1e6, key + "floor_us", "GEMM floor (us)", file, {});
  check_fitted(model.knee, key + "knee", "GEMM knee", file, {});
  const FitError e = error_of(
      rows.size(), [&](std::size_t i) { return model.time(sms, rows[i].m, rows[i].n, rows[i].k); },
      [&](std::size_t i) { return rows[i].time_s; });
  out.report.push_back(fmt::format(
      "{}: {:.1f} TFLOP/s, epilogue {:.0f} GB/s, floor {:.2f} us, knee {:.3g}, tail {:.3g}, tiles {}x{}; "
      "model against the rows: {}",
      label, model.rate_flops / 1e12, model.epilogue_Bps / 1e9, model.floor_s * 1e6, model.knee, model.tail,
      model.tile_m, model.tile_n, pct(e)));
  return model;
}

// gemm_fp8.csv: the GEMM model of each FP8 kernel measured (no rows kept: the model's rows are the
// tensorwise kernel's, which gemm.csv times).
void fit_fp8_kernel_tables(const KernelMeasurements& m, int sms, KernelFit& out) {
  const std::string file = table_path(m, "gemm_fp8.csv");
  bool any = false;
  for (const auto& rows : m.gemm_fp8) any = any || !rows.empty();
  // gpu.kernels is written whole: without gemm.csv beside it the file loses the tensorwise fp8 rows
  // and model every unmeasured kernel falls back on
  if (any && m.gemm.empty())
    out.report.push_back("note: " + file + " without gemm.csv: the written gpu.kernels has no tensorwise fp8 "
                         "rows or model (import gemm_fp8.csv together with the other tables)");
  for (int i = 0; i < core::kFp8KernelCount; ++i) {
    const auto& rows = m.gemm_fp8[static_cast<std::size_t>(i)];
    if (rows.empty()) continue;
    const std::string name(core::name(static_cast<core::Fp8Kernel>(i)));
    if (sms <= 0) throw core::ConfigError({file, 0, 0}, "the GEMM model needs the GPU's SM count (from --base or --sms)");
    if (rows.size() < 6)
      throw core::ConfigError({file, rows.front().line, 0},
                              fmt::format("too few {} rows to fit the GEMM model ({}; at least 6)", name, rows.size()));
    out.tables.fp8_kernels[static_cast<std::size_t>(i)] =
        fit_reported_gemm(rows, core::Precision::fp8, sms, "hardware.gpu.kernels.gemm.fp8_kernels." + name + ".", file,
                          "gemm fp8 " + name, out);
  }
}

// gemm.csv: the GEMM model per precision, and the measured rows (a shape measured more than once at
// the median of its times).
void fit_gemm_tables(const KernelMeasurements& m, int sms, KernelFit& out) {
  if (m.gemm.empty()) return;
  auto& t = out.tables;
  if (sms <= 0)
    throw core::ConfigError({table_path(m, "gemm.csv"), 0, 0}, "the GEMM model needs the GPU's SM count (from --base or --sms)");
  for (auto p : {core::Precision::bf16, core::Precision::fp8}) {
    std::vector<GemmMeasurement> rows;
    for (const auto& g : m.gemm)
      if (g.precision == p) rows.push_back(g);
    if (rows.empty()) continue;
    const std::string name(core::name(p));
    t.gemm_model[static_cast<std::size_t>(core::index(p))] = fit_reported_gemm(
        rows, p, sms, "hardware.gpu.kernels.gemm.model." + name + ".", table_path(m, "gemm.csv"), "gemm " + name, out);
  }
  // a shape measured more than once (the same GEMM occurs in several models' layers) is kept
  // once, at the median of its times
  std::vector<core::GemmTime> rows;
  for (const auto& g : m.gemm) rows.push_back({g.precision, g.m, g.n, g.k, g.time_s});
  auto key = [](const core::GemmTime& r) { return std::make_tuple(static_cast<int>(r.precision), r.m, r.n, r.k); };
  std::stable_sort(rows.begin(), rows.end(), [&](const auto& a, const auto& b) { return key(a) < key(b); });
  for (std::size_t i = 0; i < rows.size();) {
    std::size_t j = i;
    std::vector<double> times;
    while (j < rows.size() && key(rows[j]) == key(rows[i])) times.push_back(rows[j++].time_s);
    std::sort(times.begin(), times.end());
    core::GemmTime r = rows[i];
    const std::size_t h = times.size() / 2;
    r.time_s = times.size() % 2 ? times[h] : (times[h - 1] + times[h]) / 2;
    t.gemm_rows.push_back(r);
    i = j;
  }
}

// attention.csv or attention_flash2.csv (`rows`, one of m's): the forward and backward models.
void fit_attention_table(const KernelMeasurements& m, const std::vector<AttentionMeasurement>& rows,
                         core::AttentionModel& fwd, core::AttentionModel& bwd, const char* what, KernelFit& out) {
  if (rows.empty()) return;
  fwd = fit_attention(rows, false);
  bwd = fit_attention(rows, true);
  const std::string file = table_path(m, &rows == &m.attention ? "attention.csv" : "attention_flash2.csv");
  const std::string key =
      std::string("hardware.gpu.kernels.") + (&rows == &m.attention ? "attention." : "attention_flash2.");
  for (bool backward : {false, true}) {
    const auto& model = backward ? bwd : fwd;
    std::vector<RowValue> rates;
    for (const auto& r : rows) {
      core::AttentionShape s{r.batch, r.heads, r.kv_heads, r.head_dim, r.seq, r.seq, r.causal};
      rates.push_back({r.line, (backward ? 2.5 : 1.0) * s.flops() / (backward ? r.backward_s : r.forward_s) / 1e12});
    }
    const std::string pass = backward ? "backward" : "forward";
    check_fitted(model.rate_flops / 1e12, key + pass + ".tflops", std::string(what) + " " + pass + " rate (TFLOP/s)",
                 file, rates);
    check_fitted(model.q_Bps / 1e9, key + pass + ".q_gbs", std::string(what) + " " + pass + " query-row bandwidth (GB/s)", file, {});
    check_fitted(model.kv_Bps / 1e9, key + pass + ".kv_gbs", std::string(what) + " " + pass + " key/value-row bandwidth (GB/s)", file, {});
  }
  for (bool backward : {false, true}) {
    const auto& model = backward ? bwd : fwd;
    const FitError e = error_of(
        rows.size(),
        [&](std::size_t i) {
          const auto& r = rows[i];
          core::AttentionShape s{r.batch, r.heads, r.kv_heads, r.head_dim, r.seq, r.seq, r.causal};
          return model.time(s, backward);
        },
        [&](std::size_t i) { return backward ? rows[i].backward_s : rows[i].forward_s; });
    out.report.push_back(fmt::format("{} {}: {:.1f} TFLOP/s, query rows {:.0f} GB/s, key/value rows {:.0f} GB/s; {}",
                                     what, backward ? "backward" : "forward", model.rate_flops / 1e12,
                                     model.q_Bps / 1e9, model.kv_Bps / 1e9, pct(e)));
  }
}

// elementwise.csv: a forward and a backward bandwidth per memory-bound operation.
void fit_memory_bound_table(const KernelMeasurements& m, KernelFit& out) {
  auto& t = out.tables;
  for (int c = 0; c < core::kMemoryOpCount; ++c) {
    const auto op = static_cast<core::MemoryOp>(c);
    const core::ElementBytes eb = core::memory_op_bytes(op);
    std::vector<double> fb, ft, bb, bt;
    for (const auto& e : m.elementwise) {
      if (e.op != op) continue;
      fb.push_back(eb.forward * e.elements);
      ft.push_back(e.forward_s);
      bb.push_back(eb.backward * e.elements);
      bt.push_back(e.backward_s);
    }
    if (fb.empty()) continue;
    const core::StreamRate r = fit_stream(fb, ft, bb, bt);
    {
      std::vector<RowValue> fwd, bwd;
      for (const auto& e : m.elementwise) {
        if (e.op != op) continue;
        fwd.push_back({e.line, eb.forward * e.elements / e.forward_s / 1e9});
        bwd.push_back({e.line, eb.backward * e.elements / e.backward_s / 1e9});
      }
      const std::string key = std::string("hardware.gpu.kernels.memory_bound.") + std::string(core::name(op)) + ".";
      const std::string file = table_path(m, "elementwise.csv");
      check_fitted(r.forward_Bps / 1e9, key + "forward_gbs", std::string(core::name(op)) + " forward bandwidth (GB/s)", file, fwd);
      check_fitted(r.backward_Bps / 1e9, key + "backward_gbs", std::string(core::name(op)) + " backward bandwidth (GB/s)", file, bwd);
    }
    t.memory_bound[static_cast<std::size_t>(c)] = r;
    const FitError ef = error_of(fb.size(), [&](std::size_t i) { return fb[i] / r.forward_Bps; }, [&](std::size_t i) { return ft[i]; });
    const FitError eb2 = error_of(bb.size(), [&](std::size_t i) { return bb[i] / r.backward_Bps; }, [&](std::size_t i) { return bt[i]; });
    out.report.push_back(fmt::format("{}: forward {:.0f} GB/s ({}), backward {:.0f} GB/s ({})", core::name(op),
                                     r.forward_Bps / 1e9, pct(ef), r.backward_Bps / 1e9, pct(eb2)));
  }
}

// cross_entropy.csv: the loss's forward and backward bandwidths.
void fit_cross_entropy_table(const KernelMeasurements& m, KernelFit& out) {
  if (m.cross_entropy.empty()) return;
  auto& t = out.tables;
  std::vector<double> fb, ft, bb, bt;
  for (const auto& c : m.cross_entropy) {
    fb.push_back(core::kCrossEntropyBytes.forward * c.elements);
    ft.push_back(c.forward_s);
    bb.push_back(core::kCrossEntropyBytes.backward * c.elements);
    bt.push_back(c.backward_s);
  }
  t.cross_entropy = fit_stream(fb, ft, bb, bt);
  {
    std::vector<RowValue> fwd, bwd;
    for (std::size_t i = 0; i < fb.size(); ++i) {
      fwd.push_back({m.cross_entropy[i].line, fb[i] / ft[i] / 1e9});
      bwd.push_back({m.cross_entropy[i].line, bb[i] / bt[i] / 1e9});
    }
    const std::string file = table_path(m, "cross_entropy.csv");
    check_fitted(t.cross_entropy.forward_Bps / 1e9, "hardware.gpu.kernels.cross_entropy.forward_gbs",
                 "cross-entropy forward bandwidth (GB/s)", file, fwd);
    check_fitted(t.cross_entropy.backward_Bps / 1e9, "hardware.gpu.kernels.cross_entropy.backward_gbs",
                 "cross-entropy backward bandwidth (GB/s)", file, bwd);
  }
  const FitError ef = error_of(fb.size(), [&](std::size_t i) { return fb[i] / t.cross_entropy.forward_Bps; }, [&](std::size_t i) { return ft[i]; });
  const FitError eb2 = error_of(bb.size(), [&](std::size_t i) { return bb[i] / t.cross_entropy.backward_Bps; }, [&](std::size_t i) { return bt[i]; });
  out.report.push_back(fmt::format("cross_entropy: forward {:.0f} GB/s ({}), backward {:.0f} GB/s ({})",
                                   t.cross_entropy.forward_Bps / 1e9, pct(ef), t.cross_entropy.backward_Bps / 1e9, pct(eb2)));
}

// optimizer.csv: the optimizer step's bandwidth.
void fit_optimizer_table(const KernelMeasurements& m, KernelFit& out) {
  if (m.optimizer.empty()) return;
  auto& t = out.tables;
  std::vector<double> b, s;
  for (const auto& o : m.optimizer) {
    b.push_back(o.bytes_per_param * o.params);
    s.push_back(o.time_s);
  }
  t.optimizer_Bps = stream_rate(b, s);
  {
    std::vector<RowValue> rates;
    for (std::size_t i = 0; i < b.size(); ++i) rates.push_back({m.optimizer[i].line, b[i] / s[i] / 1e9});
    check_fitted(t.optimizer_Bps / 1e9, "hardware.gpu.kernels.optimizer.gbs", "optimizer bandwidth (GB/s)",
                 table_path(m, "optimizer.csv"), rates);
  }
  const FitError e = error_of(b.size(), [&](std::size_t i) { return b[i] / t.optimizer_Bps; }, [&](std::size_t i) { return s[i]; });
  out.report.push_back(fmt::format("optimizer: {:.0f} GB/s ({})", t.optimizer_Bps / 1e9, pct(e)));
}

// contention.csv: the SM share a collective's blocks take from the GEMMs beside it.
void fit_contention_table(const KernelMeasurements& m, int sms, int comm_sms, KernelFit& out) {
  if (m.contention.empty()) return;
  if (sms <= 0)
    throw core::ConfigError({table_path(m, "contention.csv"), 0, 0}, "the contention fit needs the GPU's SM count (from --base or --sms)");
  const double f = fit_contention(m.contention, sms, comm_sms);
  check_fitted(f, "hardware.gpu.kernels.contention.factor", "contention factor", table_path(m, "contention.csv"), {});
  out.contention_factor = f;
  const auto used = contention_rows(m.contention, sms, comm_sms);
  const FitError e = error_of(
      used.size(), [&](std::size_t i) { return 1 / (1 - f * used[i]->blocks / sms); },
      [&](std::size_t i) { return used[i]->slowdown(); });
  out.report.push_back(fmt::format(
      "contention: share = {:.3f} x blocks / {} SMs, fitted on the {} rows at {}; predicted slowdown {}", f, sms,
      used.size(), used.front()->blocks == comm_sms ? fmt::format("{} blocks (gpu.comm_sms)", comm_sms)
                                                    : fmt::format("fewer than {} blocks", sms),
      pct(e)));
}

}  // namespace

KernelFit fit_kernels(const KernelMeasurements& m, int sms, int comm_sms, const std::string& source) {
  KernelFit out;
  auto& t = out.tables;
  t.source = source;
  fit_gemm_tables(m, sms, out);
  fit_fp8_kernel_tables(m, sms, out);
  // cuDNN's fused attention (attention.csv) and FlashAttention-2 (attention_flash2.csv): one model each
  fit_attention_table(m, m.attention, t.attention_forward, t.attention_backward, "attention", out);
  fit_attention_table(m, m.attention_flash2, t.flash2_forward, t.flash2_backward, "attention flash2", out);
  fit_memory_bound_table(m, out);
  fit_cross_entropy_table(m, out);
  fit_optimizer_table(m, out);
  fit_contention_table(m, sms, comm_sms, out);
  return out;
}

}  // namespace ptdsim::calibrate

#include "ptdsim/calibrate/fit.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <tuple>

#include <Eigen/Dense>
#include <fmt/format.h>

#include "ptdsim/core/error.hpp"
#include "ptdsim/core/names.hpp"

namespace ptdsim::calibrate {
namespace {

struct Sample {
  double size = 0;
  double x = 0;  // size * F(n): the bytes the bus bandwidth has to carry
  double t = 0;
  std::string file;
  int line = 0;
};

struct Line {
  double alpha = 0;
  double beta = 0;  // seconds per bus byte = 1 / busbw
  bool alpha_clamped = false;
  bool beta_clamped = false;
};

// Weighted least squares of t = alpha + beta x with weights 1/t: minimises the sum of squared
// relative errors sum(((alpha + beta x_i) - t_i) / t_i)^2. Constrained to alpha >= 0 and beta > 0
// (a negative latency or bandwidth has no meaning): when the free solution leaves that region the
// offending parameter is pinned and the other refitted. `min_beta` is the slope of the fastest
// bandwidth seen, used when the points show no slope at all (a purely latency-bound range).
Line fit_line(const std::vector<Sample>& s, std::size_t from, std::size_t to, double min_beta) {
  const auto n = static_cast<Eigen::Index>(to - from);
  double x_scale = 0;
  for (std::size_t i = from; i < to; ++i) x_scale = std::max(x_scale, s[i].x);
  if (x_scale <= 0) x_scale = 1;
  Eigen::MatrixXd a(n, 2);
  Eigen::VectorXd b = Eigen::VectorXd::Ones(n);  // t_i / t_i
  for (Eigen::Index r = 0; r < n; ++r) {
    const Sample& p = s[from + static_cast<std::size_t>(r)];
    a(r, 0) = 1 / p.t;
    a(r, 1) = p.x / x_scale / p.t;  // the column scaled to O(1) for a well-conditioned QR
  }
  Eigen::Vector2d sol = a.colPivHouseholderQr().solve(b);
  Line line{sol(0), sol(1) / x_scale};
  if (line.beta <= 0 || !std::isfinite(line.beta)) {
    line.beta = min_beta;
    line.beta_clamped = true;
    double num = 0, den = 0;
    for (std::size_t i = from; i < to; ++i) {
      double w2 = 1 / (s[i].t * s[i].t);
      num += w2 * (s[i].t - line.beta * s[i].x);
      den += w2;
    }
    line.alpha = num / den;
  }
  if (line.alpha < 0) {
    line.alpha = 0;
    line.alpha_clamped = true;
    if (!line.beta_clamped) {
      double num = 0, den = 0;
      for (std::size_t i = from; i < to; ++i) {
        double w2 = 1 / (s[i].t * s[i].t);
        num += w2 * s[i].x * s[i].t;
        den += w2 * s[i].x * s[i].x;
      }
      line.beta = num / den;
    }
  }
  return line;
}

double worst_error(const std::vector<Sample>& s, std::size_t from, std::size_t to, const Line& l) {
  double worst = 0;
  for (std::size_t i = from; i < to; ++i) {
    worst = std::max(worst, std::abs(l.alpha + l.beta * s[i].x - s[i].t) / s[i].t);
  }
  return worst;
}

std::string size_text(double bytes) {
  if (bytes >= 1024.0 * 1024 * 1024) return fmt::format("{:g} GiB", bytes / (1024.0 * 1024 * 1024));
  if (bytes >= 1024.0 * 1024) return fmt::format("{:g} MiB", bytes / (1024.0 * 1024));
  if (bytes >= 1024.0) return fmt::format("{:g} KiB", bytes / 1024.0);
  return fmt::format("{:g} B", bytes);
}

CollectiveFitResult fit_one(std::vector<Sample> s, core::Collective op, core::Scope scope, int ranks,
                            const FitOptions& o) {
  std::stable_sort(s.begin(), s.end(), [](const Sample& a, const Sample& b) { return a.size < b.size; });
  // Breakpoints fall between distinct sizes: `starts[u]` is the first sample of the u-th size.
  std::vector<std::size_t> starts;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (i == 0 || s[i].size != s[i - 1].size) starts.push_back(i);
  }
  const int m = static_cast<int>(starts.size());
  starts.push_back(s.size());
  double peak_bw = 0;
  for (const auto& p : s) peak_bw = std::max(peak_bw, p.x / p.t);
  const double min_beta = 1 / peak_bw;

  // cost[i][j]: the worst relative error of one line over sizes i..j (at least two sizes).
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<std::vector<double>> cost(static_cast<std::size_t>(m), std::vector<double>(static_cast<std::size_t>(m), inf));
  for (int i = 0; i < m; ++i) {
    for (int j = i + 1; j < m; ++j) {
      auto from = starts[static_cast<std::size_t>(i)], to = starts[static_cast<std::size_t>(j) + 1];
      cost[static_cast<std::size_t>(i)][static_cast<std::size_t>(j)] =
          worst_error(s, from, to, fit_line(s, from, to, min_beta));
    }
  }
  // best[k][j]: the smallest worst error covering sizes 0..j with k+1 pieces; cut[k][j] the first
  // size of the last of them.
  const int k_max = std::max(1, std::min(o.max_pieces, m / 2));
  std::vector<std::vector<double>> best(static_cast<std::size_t>(k_max), std::vector<double>(static_cast<std::size_t>(m), inf));
  std::vector<std::vector<int>> cut(static_cast<std::size_t>(k_max), std::vector<int>(static_cast<std::size_t>(m), 0));
  for (int j = 1; j < m; ++j) best[0][static_cast<std::size_t>(j)] = cost[0][static_cast<std::size_t>(j)];
  for (int k = 1; k < k_max; ++k) {
    for (int j = 2 * k + 1; j < m; ++j) {
      for (int i = 2 * k; i < j; ++i) {
        double c = std::max(best[static_cast<std::size_t>(k - 1)][static_cast<std::size_t>(i - 1)],
                            cost[static_cast<std::size_t>(i)][static_cast<std::size_t>(j)]);
        if (c < best[static_cast<std::size_t>(k)][static_cast<std::size_t>(j)]) {
          best[static_cast<std::size_t>(k)][static_cast<std::size_t>(j)] = c;
          cut[static_cast<std::size_t>(k)][static_cast<std::size_t>(j)] = i;
        }
      }
    }
  }
  int k_use = 0;
  for (int k = 0; k < k_max; ++k) {
    double e = best[static_cast<std::size_t>(k)][static_cast<std::size_t>(m - 1)];
    if (e < best[static_cast<std::size_t>(k_use)][static_cast<std::size_t>(m - 1)] - 1e-12) k_use = k;
    if (e <= o.target_rel_error) {
      k_use = k;
      break;
    }
  }
  std::vector<int> first_size(static_cast<std::size_t>(k_use) + 1);
  for (int k = k_use, j = m - 1; k >= 0; --k) {
    int i = k == 0 ? 0 : cut[static_cast<std::size_t>(k)][static_cast<std::size_t>(j)];
    first_size[static_cast<std::size_t>(k)] = i;
    j = i - 1;
  }

  CollectiveFitResult r;
  r.op = op;
  r.scope = scope;
  r.ranks = ranks;
  const double factor = bus_factor(op, ranks);
  for (int k = 0; k <= k_use; ++k) {
    int u0 = first_size[static_cast<std::size_t>(k)];
    int u1 = k == k_use ? m - 1 : first_size[static_cast<std::size_t>(k) + 1] - 1;
    auto from = starts[static_cast<std::size_t>(u0)], to = starts[static_cast<std::size_t>(u1) + 1];
    Line l = fit_line(s, from, to, min_beta);
    FitPiece piece;
    piece.alpha_s = l.alpha;
    piece.busbw_Bps = 1 / l.beta;
    piece.alpha_clamped = l.alpha_clamped;
    piece.busbw_clamped = l.beta_clamped;
    piece.first_bytes = s[from].size;
    piece.last_bytes = s[to - 1].size;
    piece.min_bytes = k == 0 ? 0 : piece.first_bytes;
    piece.max_bytes = std::numeric_limits<double>::infinity();
    if (k > 0) r.pieces.back().max_bytes = piece.first_bytes;
    for (std::size_t i = from; i < to; ++i) {
      FitPoint p;
      p.size_bytes = s[i].size;
      p.measured_s = s[i].t;
      p.fitted_s = l.alpha + l.beta * s[i].size * factor;
      p.rel_error = (p.fitted_s - p.measured_s) / p.measured_s;
      p.piece = k;
      p.file = s[i].file;
      p.line = s[i].line;
      piece.max_abs_rel_error = std::max(piece.max_abs_rel_error, std::abs(p.rel_error));
      r.max_abs_rel_error = std::max(r.max_abs_rel_error, std::abs(p.rel_error));
      r.points.push_back(p);
    }
    r.pieces.push_back(piece);
  }
  if (k_use > 0) {
    r.notes.push_back(fmt::format(
        "piecewise: {} pieces, because one line misses by {:.0f}% (NCCL changes protocol and algorithm "
        "with size)",
        k_use + 1, 100 * best[0][static_cast<std::size_t>(m - 1)]));
  }
  if (r.max_abs_rel_error > o.target_rel_error) {
    auto worst = std::max_element(r.points.begin(), r.points.end(), [](const auto& a, const auto& b) {
      return std::abs(a.rel_error) < std::abs(b.rel_error);
    });
    r.notes.push_back(fmt::format("the best fit with at most {} pieces still misses by {:.0f}% at {}",
                                  o.max_pieces, 100 * std::abs(worst->rel_error), size_text(worst->size_bytes)));
  }
  for (const auto& p : r.pieces) {
    if (p.busbw_clamped) {
      r.notes.push_back(fmt::format("{}..{}: no bandwidth term visible (latency-bound); busbw set to the "
                                    "highest measured, {:.2f} GB/s",
                                    size_text(p.first_bytes), size_text(p.last_bytes), p.busbw_Bps / 1e9));
    }
    if (p.busbw_Bps > 2 * peak_bw) {
      r.notes.push_back(fmt::format("{}..{}: busbw {:.0f} GB/s is far above the highest measured ({:.0f} GB/s): "
                                    "the time hardly grows with size here (latency-bound, or a dip in the log), so this busbw is a "
                                    "fit parameter, not a link rate",
                                    size_text(p.first_bytes), size_text(p.last_bytes), p.busbw_Bps / 1e9,
                                    peak_bw / 1e9));
    }
    if (p.alpha_clamped) {
      r.notes.push_back(fmt::format("{}..{}: the free fit had a negative alpha; refitted with alpha = 0",
                                    size_text(p.first_bytes), size_text(p.last_bytes)));
    }
  }
  return r;
}

}  // namespace

std::vector<CollectiveFitResult> fit_collectives(const std::vector<NcclRun>& runs, const FitOptions& o) {
  using Key = std::tuple<int, int, int>;
  std::map<Key, std::vector<Sample>> samples;
  std::map<Key, std::vector<std::string>> files, notes;
  for (const auto& run : runs) {
    if (run.ranks < 2) {
      throw core::ConfigError(
          {run.file, run.line, 1},
          "cannot fit " + std::string(core::name(run.op)) + " on " + std::to_string(run.ranks) +
              " rank: with one rank nothing crosses a link, so busbw is meaningless; measure with 2 or "
              "more GPUs");
    }
    Key key{static_cast<int>(run.op), static_cast<int>(run.scope), run.ranks};
    const double factor = bus_factor(run.op, run.ranks);
    for (const auto& row : run.rows) {
      if (row.size_bytes <= 0 || row.time_s() <= 0) continue;  // size-0 rows time an empty launch
      samples[key].push_back({row.size_bytes, row.size_bytes * factor, row.time_s(), run.file, row.line});
    }
    auto& f = files[key];
    if (std::find(f.begin(), f.end(), run.file) == f.end()) f.push_back(run.file);
    for (const auto& n : run.notes) notes[key].push_back(run.file + ": " + n);
  }
  std::vector<CollectiveFitResult> out;
  for (auto& [key, s] : samples) {
    auto [op, scope, ranks] = key;
    std::sort(s.begin(), s.end(), [](const Sample& a, const Sample& b) { return a.size < b.size; });
    std::size_t sizes = 0;
    for (std::size_t i = 0; i < s.size(); ++i) sizes += (i == 0 || s[i].size != s[i - 1].size) ? 1 : 0;
    if (sizes < 2) {
      throw core::ConfigError({s.front().file, s.front().line, 1},
                              "cannot fit alpha and busbw from one message size: run nccl-tests over a "
                              "range (-b 8 -e 8G -f 2)");
    }
    auto r = fit_one(std::move(s), static_cast<core::Collective>(op), static_cast<core::Scope>(scope), ranks, o);
    r.files = files[key];
    auto& n = notes[key];
    r.notes.insert(r.notes.begin(), n.begin(), n.end());
    out.push_back(std::move(r));
  }
  return out;
}

std::vector<core::CollectiveFit> hardware_rows(const std::vector<CollectiveFitResult>& fits) {
  std::vector<core::CollectiveFit> rows;
  for (const auto& f : fits) {
    for (const auto& p : f.pieces) {
      core::CollectiveFit row;
      row.op = f.op;
      row.scope = f.scope;
      row.ranks = f.ranks;
      row.alpha_s = p.alpha_s;
      row.busbw_Bps = p.busbw_Bps;
      row.min_bytes = p.min_bytes;
      row.max_bytes = p.max_bytes;
      rows.push_back(row);
    }
  }
  return rows;
}

double fitted_time(const CollectiveFitResult& fit, double size_bytes) {
  const FitPiece* piece = &fit.pieces.front();
  for (const auto& p : fit.pieces) {
    if (size_bytes >= p.min_bytes) piece = &p;
  }
  return piece->alpha_s + size_bytes * bus_factor(fit.op, fit.ranks) / piece->busbw_Bps;
}

}  // namespace ptdsim::calibrate

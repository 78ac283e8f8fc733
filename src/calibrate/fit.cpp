#include "ptdsim/calibrate/fit.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <tuple>

#include <fmt/format.h>

#include "ptdsim/core/error.hpp"
#include "ptdsim/core/names.hpp"

namespace ptdsim::calibrate {
namespace {

// Up to this many distinct sizes the split into pieces is searched exactly, every size a possible
// breakpoint (an nccl-tests sweep with -f 2 from 8 B to 16 GiB has 32 sizes). Beyond it the sizes
// are grouped into this many contiguous blocks and breakpoints fall between blocks, so the search
// costs O(blocks^3) plus one pass over the points, whatever the number of sizes.
constexpr std::size_t kMaxBlocks = 64;

struct Sample {
  double size = 0;
  double x = 0;  // size * F(n): the bytes the bus bandwidth has to carry
  double t = 0;
  const std::string* file = nullptr;
  int line = 0;
  // The residual of the line alpha + beta x against t, relative to t, is alpha*u + beta*v - 1.
  double u() const { return 1 / t; }
  double v() const { return x / t; }
};

struct Line {
  double alpha = 0;
  double beta = 0;  // seconds per bus byte = 1 / busbw
  bool alpha_clamped = false;
  bool beta_clamped = false;
};

// The sums the weighted least-squares line needs: with u = 1/t and v = x/t the fit minimises
// sum (alpha u + beta v - 1)^2, whose normal equations are
//   [suu suv] [alpha]   [su]
//   [suv svv] [beta ] = [sv].
struct Sums {
  double suu = 0, suv = 0, svv = 0, su = 0, sv = 0;
  void add(const Sample& p) {
    const double u = p.u(), v = p.v();
    suu += u * u;
    suv += u * v;
    svv += v * v;
    su += u;
    sv += v;
  }
  void add(const Sums& o) {
    suu += o.suu;
    suv += o.suv;
    svv += o.svv;
    su += o.su;
    sv += o.sv;
  }
};

// Weighted least squares of t = alpha + beta x with weights 1/t (every residual a relative error),
// solved from the sums with the two columns scaled to unit length. Constrained to alpha >= 0 and
// beta > 0 (a negative latency or bandwidth has no meaning): when the free solution leaves that
// region the offending parameter is pinned and the other refitted. `min_beta` is the slope of the
// fastest bandwidth seen, used when the points show no slope (a purely latency-bound range).
Line fit_line(const Sums& s, double min_beta) {
  Line line;
  const double du = std::sqrt(s.suu), dv = std::sqrt(s.svv);
  const double r = s.suv / (du * dv);  // the cosine between the two columns
  const double det = 1 - r * r;
  if (det > 1e-12 && std::isfinite(det)) {
    const double bu = s.su / du, bv = s.sv / dv;
    line.alpha = (bu - r * bv) / det / du;
    line.beta = (bv - r * bu) / det / dv;
  }
  if (!(line.beta > 0) || !std::isfinite(line.beta) || !std::isfinite(line.alpha)) {
    line.beta = min_beta;
    line.beta_clamped = true;
    line.alpha = (s.su - line.beta * s.suv) / s.suu;
  }
  if (line.alpha < 0) {
    line.alpha = 0;
    line.alpha_clamped = true;
    if (!line.beta_clamped) line.beta = s.sv / s.svv;
  }
  return line;
}

// The vertices of the convex hull of a block's (u, v) points (Andrew's monotone chain). The
// relative error alpha u + beta v - 1 is affine in (u, v), so its largest magnitude over the block
// lies at a vertex: the search reads the few vertices instead of every point.
std::vector<std::pair<double, double>> hull(std::vector<std::pair<double, double>> p) {
  std::sort(p.begin(), p.end());
  p.erase(std::unique(p.begin(), p.end()), p.end());
  if (p.size() <= 2) return p;
  auto cross = [](const auto& o, const auto& a, const auto& b) {
    return (a.first - o.first) * (b.second - o.second) - (a.second - o.second) * (b.first - o.first);
  };
  std::vector<std::pair<double, double>> h(2 * p.size());
  std::size_t k = 0;
  for (std::size_t i = 0; i < p.size(); ++i) {
    while (k >= 2 && cross(h[k - 2], h[k - 1], p[i]) <= 0) --k;
    h[k++] = p[i];
  }
  for (std::size_t i = p.size() - 1, lower = k + 1; i-- > 0;) {
    while (k >= lower && cross(h[k - 2], h[k - 1], p[i]) <= 0) --k;
    h[k++] = p[i];
  }
  h.resize(k - 1);
  return h;
}

// A contiguous run of distinct sizes: the unit the split into pieces is made of.
struct Block {
  std::size_t from = 0, to = 0;  // samples [from, to)
  int sizes = 0;                 // distinct sizes in it
  Sums sums;
  std::vector<std::pair<double, double>> vertices;
};

double worst_error(const std::vector<Block>& blocks, std::size_t first, std::size_t last, const Line& l) {
  double worst = 0;
  for (std::size_t b = first; b <= last; ++b) {
    for (const auto& [u, v] : blocks[b].vertices) worst = std::max(worst, std::abs(l.alpha * u + l.beta * v - 1));
  }
  return worst;
}

// A size whose time exceeds the next larger size's by this factor is a spike (congestion, a page
// fault, a clock change), not the link: NCCL's tuner picks the fastest algorithm for every size, so
// a larger message is never much faster than a smaller one in a clean run.
constexpr double kSpike = 1.25;

// Removes the spikes' samples from `s` (sorted by size) and returns them.
std::vector<Sample> remove_spikes(std::vector<Sample>& s) {
  std::vector<std::pair<double, double>> fastest;  // per distinct size: (size, smallest time)
  for (const auto& p : s) {
    if (fastest.empty() || fastest.back().first != p.size) fastest.emplace_back(p.size, p.t);
    fastest.back().second = std::min(fastest.back().second, p.t);
  }
  std::vector<double> spikes;
  for (std::size_t i = 0; i + 1 < fastest.size(); ++i) {
    if (fastest[i].second > kSpike * fastest[i + 1].second) spikes.push_back(fastest[i].first);
  }
  if (spikes.empty() || fastest.size() - spikes.size() < 2) return {};
  std::vector<Sample> kept, dropped;
  for (auto& p : s) {
    (std::binary_search(spikes.begin(), spikes.end(), p.size) ? dropped : kept).push_back(p);
  }
  s = std::move(kept);
  return dropped;
}

std::string size_text(double bytes) {
  if (bytes >= 1024.0 * 1024 * 1024) return fmt::format("{:g} GiB", bytes / (1024.0 * 1024 * 1024));
  if (bytes >= 1024.0 * 1024) return fmt::format("{:g} MiB", bytes / (1024.0 * 1024));
  if (bytes >= 1024.0) return fmt::format("{:g} KiB", bytes / 1024.0);
  return fmt::format("{:g} B", bytes);
}

std::vector<Block> blocks_of(const std::vector<Sample>& s) {
  std::vector<std::size_t> starts;  // the first sample of each distinct size
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (i == 0 || s[i].size != s[i - 1].size) starts.push_back(i);
  }
  const std::size_t m = starts.size();
  const std::size_t count = std::min(m, kMaxBlocks);
  std::vector<Block> blocks(count);
  for (std::size_t b = 0; b < count; ++b) {
    const std::size_t u0 = b * m / count, u1 = (b + 1) * m / count;
    Block& blk = blocks[b];
    blk.from = starts[u0];
    blk.to = u1 < m ? starts[u1] : s.size();
    blk.sizes = static_cast<int>(u1 - u0);
    std::vector<std::pair<double, double>> points;
    for (std::size_t i = blk.from; i < blk.to; ++i) {
      blk.sums.add(s[i]);
      points.emplace_back(s[i].u(), s[i].v());
    }
    blk.vertices = hull(std::move(points));
  }
  return blocks;
}

// The cheapest split of `blocks` (m sizes in all) into at most o.max_pieces lines by their worst
// relative error: the fewest pieces that reach o.target_rel_error, else the best; each piece's
// first block, in order.
std::vector<std::size_t> best_cuts(const std::vector<Block>& blocks, double min_beta, const FitOptions& o, int m) {
  const std::size_t nb = blocks.size();
  // cost[i][j]: the worst relative error of one line over blocks i..j (at least two sizes).
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<std::vector<double>> cost(nb, std::vector<double>(nb, inf));
  for (std::size_t i = 0; i < nb; ++i) {
    Sums sums;
    int sizes = 0;
    for (std::size_t j = i; j < nb; ++j) {
      sums.add(blocks[j].sums);
      sizes += blocks[j].sizes;
      if (sizes >= 2) cost[i][j] = worst_error(blocks, i, j, fit_line(sums, min_beta));
    }
  }
  // best[k][j]: the smallest worst error covering blocks 0..j with k+1 pieces; cut[k][j] the first
  // block of the last of them.
  const std::size_t k_max = static_cast<std::size_t>(std::max(1, std::min(o.max_pieces, m / 2)));
  std::vector<std::vector<double>> best(k_max, std::vector<double>(nb, inf));
  std::vector<std::vector<std::size_t>> cut(k_max, std::vector<std::size_t>(nb, 0));
  for (std::size_t j = 0; j < nb; ++j) best[0][j] = cost[0][j];
  for (std::size_t k = 1; k < k_max; ++k) {
    for (std::size_t j = 1; j < nb; ++j) {
      for (std::size_t i = 1; i <= j; ++i) {
        const double c = std::max(best[k - 1][i - 1], cost[i][j]);
        if (c < best[k][j]) {
          best[k][j] = c;
          cut[k][j] = i;
        }
      }
    }
  }
  std::size_t k_use = 0;
  for (std::size_t k = 0; k < k_max; ++k) {
    const double e = best[k][nb - 1];
    if (e < best[k_use][nb - 1] - 1e-12) k_use = k;
    if (e <= o.target_rel_error) {
      k_use = k;
      break;
    }
  }
  std::vector<std::size_t> first_block(k_use + 1);
  for (std::size_t k = k_use, j = nb - 1;; --k) {
    const std::size_t i = k == 0 ? 0 : cut[k][j];
    first_block[k] = i;
    if (k == 0) break;
    j = i - 1;
  }
  return first_block;
}

// The worst relative error of one line over every block (what a piecewise fit improves on).
double one_line_error(const std::vector<Block>& blocks, double min_beta) {
  Sums sums;
  for (const auto& b : blocks) sums.add(b.sums);
  return worst_error(blocks, 0, blocks.size() - 1, fit_line(sums, min_beta));
}

// The fit's notes: why it is piecewise (`one_line`: one line's worst error), where pieces could
// start (`nb` blocks of `m` sizes), how far the best fit still misses, and each piece's clamped or
// implausible terms against the highest measured bandwidth `peak_bw`.
void fit_notes(CollectiveFitResult& r, const FitOptions& o, double one_line, std::size_t nb, int m, double peak_bw) {
  if (r.pieces.size() > 1) {
    r.notes.push_back(fmt::format(
        "piecewise: {} pieces, because one line misses by {:.0f}% (NCCL changes protocol and algorithm "
        "with size)",
        r.pieces.size(), 100 * one_line));
  }
  if (nb < static_cast<std::size_t>(m)) {
    r.notes.push_back(fmt::format("{} distinct sizes: pieces may start only at {} evenly spaced ones", m, nb));
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
}

// `s` sorted by size.
CollectiveFitResult fit_one(std::vector<Sample> s, core::Collective op, core::Scope scope, int ranks,
                            const FitOptions& o) {
  const std::vector<Block> blocks = blocks_of(s);
  const std::size_t nb = blocks.size();
  int m = 0;
  for (const auto& b : blocks) m += b.sizes;
  double peak_bw = 0;
  for (const auto& p : s) peak_bw = std::max(peak_bw, p.x / p.t);
  const double min_beta = 1 / peak_bw;

  const std::vector<std::size_t> first_block = best_cuts(blocks, min_beta, o, m);
  const std::size_t k_use = first_block.size() - 1;

  CollectiveFitResult r;
  r.op = op;
  r.scope = scope;
  r.ranks = ranks;
  for (std::size_t k = 0; k <= k_use; ++k) {
    const std::size_t b0 = first_block[k], b1 = k == k_use ? nb - 1 : first_block[k + 1] - 1;
    Sums sums;
    for (std::size_t b = b0; b <= b1; ++b) sums.add(blocks[b].sums);
    const Line l = fit_line(sums, min_beta);
    const std::size_t from = blocks[b0].from, to = blocks[b1].to;
    FitPiece piece;
    piece.alpha_s = l.alpha;
    piece.busbw_Bps = 1 / l.beta;
    piece.alpha_clamped = l.alpha_clamped;
    piece.busbw_clamped = l.beta_clamped;
    piece.first_bytes = s[from].size;
    piece.last_bytes = s[to - 1].size;
    piece.min_bytes = k == 0 ? 0 : piece.first_bytes;
    piece.max_bytes = std::numeric_limits<double>::infinity();
    if (!std::isfinite(piece.alpha_s) || !std::isfinite(piece.busbw_Bps) || piece.busbw_Bps <= 0) {
      throw core::ConfigError({*s[from].file, s[from].line, 1},
                              "the alpha-beta fit of " + std::string(core::name(op)) + " over " +
                                  size_text(piece.first_bytes) + ".." + size_text(piece.last_bytes) +
                                  " has no finite solution: the times cannot be a measurement");
    }
    if (k > 0) r.pieces.back().max_bytes = piece.first_bytes;
    for (std::size_t i = from; i < to; ++i) {
      FitPoint p;
      p.size_bytes = s[i].size;
      p.measured_s = s[i].t;
      p.fitted_s = l.alpha + l.beta * s[i].x;
      p.rel_error = (p.fitted_s - p.measured_s) / p.measured_s;
      p.piece = static_cast<int>(k);
      p.file = *s[i].file;
      p.line = s[i].line;
      piece.max_abs_rel_error = std::max(piece.max_abs_rel_error, std::abs(p.rel_error));
      r.max_abs_rel_error = std::max(r.max_abs_rel_error, std::abs(p.rel_error));
      r.points.push_back(p);
    }
    r.pieces.push_back(piece);
  }
  fit_notes(r, o, r.pieces.size() > 1 ? one_line_error(blocks, min_beta) : 0.0, nb, m, peak_bw);
  return r;
}

// The runs' rows as samples of one measurement per collective, scope, rank count, ranks per node,
// GPU and forced algorithm and protocol (logs of another shape, part or algorithm are other
// measurements, not more samples of the same one), with the files they came from and their notes; a run with one rank or no usable row is an
// error at the run.
struct Measurements {
  using Key = std::tuple<int, int, int, int, std::string, int, int>;
  std::map<Key, std::vector<Sample>> samples;
  std::map<Key, std::vector<std::string>> files, notes;
};
Measurements measurements(const std::vector<NcclRun>& runs) {
  Measurements m;
  auto& samples = m.samples;
  auto& files = m.files;
  auto& notes = m.notes;
  using Key = Measurements::Key;
  for (const auto& run : runs) {
    if (run.ranks < 2) {
      throw core::ConfigError(
          {run.file, run.line, 1},
          "cannot fit " + std::string(core::name(run.op)) + " on " + std::to_string(run.ranks) +
              " rank: with one rank nothing crosses a link, so busbw is meaningless; measure with 2 or "
              "more GPUs");
    }
    Key key{static_cast<int>(run.op), static_cast<int>(run.scope), run.ranks, run.ranks_per_node, run.gpu,
            run.algo, run.proto};
    const double factor = bus_factor(run.op, run.ranks);
    std::size_t used = 0, zero_time = 0;
    for (const auto& row : run.rows) {
      if (row.size_bytes <= 0) continue;  // size-0 rows time an empty launch
      if (row.time_s() <= 0) {
        ++zero_time;
        continue;
      }
      samples[key].push_back({row.size_bytes, row.size_bytes * factor, row.time_s(), &run.file, row.line});
      ++used;
    }
    if (used == 0) {
      throw core::ConfigError({run.file, run.line, 1},
                              "no row of this table has both a size and a time above 0 (" +
                                  std::to_string(zero_time) +
                                  " rows with a time of 0): there is nothing to fit, and a time of 0 "
                                  "cannot be a measurement");
    }
    auto& f = files[key];
    if (std::find(f.begin(), f.end(), run.file) == f.end()) f.push_back(run.file);
    for (const auto& n : run.notes) notes[key].push_back(run.file + ": " + n);
    if (zero_time > 0) {
      notes[key].push_back(fmt::format("{}: {} row{} with a time of 0 skipped", run.file, zero_time,
                                       zero_time == 1 ? "" : "s"));
    }
  }
  return m;
}

// The samples remove_spikes() left out, as dropped points of the fit `r` (in size order) and one
// note naming their sizes.
void note_spikes(CollectiveFitResult& r, const std::vector<Sample>& spikes) {
  std::string which;
  for (const auto& p : spikes) {
    FitPoint f;
    f.size_bytes = p.size;
    f.measured_s = p.t;
    f.fitted_s = fitted_time(r, p.size);
    f.rel_error = (f.fitted_s - f.measured_s) / f.measured_s;
    f.piece = -1;
    f.dropped = true;
    f.file = *p.file;
    f.line = p.line;
    if (&p == &spikes.front() || p.size != (&p - 1)->size) {  // one mention per size
      which += (which.empty() ? "" : ", ") + size_text(p.size) + fmt::format(" ({:.2f} us)", p.t * 1e6);
    }
    r.points.insert(std::upper_bound(r.points.begin(), r.points.end(), f,
                                     [](const FitPoint& a, const FitPoint& b) { return a.size_bytes < b.size_bytes; }),
                    f);
  }
  r.notes.push_back(fmt::format("left out of the fit: {}, slower by more than {:.0f}% than the next larger size "
                                "(a spike in the run, not the link)",
                                which, 100 * (kSpike - 1)));
}

}  // namespace

std::vector<CollectiveFitResult> fit_collectives(const std::vector<NcclRun>& runs, const FitOptions& o) {
  Measurements m = measurements(runs);
  std::vector<CollectiveFitResult> out;
  for (auto& [key, s] : m.samples) {
    const auto& [op, scope, ranks, ranks_per_node, gpu, algo, proto] = key;
    std::stable_sort(s.begin(), s.end(), [](const Sample& a, const Sample& b) { return a.size < b.size; });
    std::size_t sizes = 0;
    for (std::size_t i = 0; i < s.size(); ++i) sizes += (i == 0 || s[i].size != s[i - 1].size) ? 1 : 0;
    if (sizes < 2) {
      throw core::ConfigError({*s.front().file, s.front().line, 1},
                              "cannot fit alpha and busbw from one message size: run nccl-tests over a "
                              "range (-b 8 -e 8G -f 2)");
    }
    const std::vector<Sample> spikes = remove_spikes(s);
    auto r = fit_one(std::move(s), static_cast<core::Collective>(op), static_cast<core::Scope>(scope), ranks, o);
    if (!spikes.empty()) note_spikes(r, spikes);
    r.ranks_per_node = ranks_per_node;
    r.gpu = gpu;
    r.algo = algo;
    r.proto = proto;
    r.files = m.files[key];
    auto& n = m.notes[key];
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
      row.ranks_per_node = f.ranks_per_node;
      row.gpu = f.gpu;
      row.algo = f.algo;
      row.proto = f.proto;
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
  double best = INFINITY;
  for (const auto& p : fit.pieces) {
    const double miss = core::piece_miss(p.min_bytes, p.max_bytes, size_bytes);
    if (miss < best) {
      best = miss;
      piece = &p;
    }
  }
  return piece->alpha_s + size_bytes * bus_factor(fit.op, fit.ranks) / piece->busbw_Bps;
}

}  // namespace ptdsim::calibrate

#include "svg.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <iterator>

namespace ptdsim::report::svg {

// ---- scales and ticks -------------------------------------------------------------------------

double Scale::operator()(double v) const {
  double a = d0, b = d1, x = v;
  if (log) {
    a = std::log10(d0);
    b = std::log10(d1);
    x = v > 0 ? std::log10(v) : a;
  }
  if (!(b != a)) return 0.5 * (r0 + r1);
  return r0 + (x - a) / (b - a) * (r1 - r0);
}

std::vector<double> Scale::ticks(int target) const {
  const double lo = std::min(d0, d1), hi = std::max(d0, d1);
  if (!log) return nice_ticks(lo, hi, target);
  auto t = log_ticks(lo, hi);
  // inside one decade even 1-2-5 leaves one tick or none: linear nice ticks read better there
  if (t.size() < 3) t = nice_ticks(lo, hi, target);
  return t;
}

double nice_step(double span, int target) {
  if (!(span > 0) || !std::isfinite(span)) return 0;
  const double raw = span / std::max(1, target);
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  const double r = raw / mag;
  // the nearest of 1, 2, 5, 10 on a log scale: the geometric means are the thresholds
  const double nice = r < std::sqrt(2.0) ? 1 : r < std::sqrt(10.0) ? 2 : r < std::sqrt(50.0) ? 5 : 10;
  return nice * mag;
}

std::vector<double> nice_ticks(double lo, double hi, int target) {
  std::vector<double> out;
  const double step = nice_step(hi - lo, target);
  if (step <= 0) {
    if (std::isfinite(lo)) out.push_back(lo);
    return out;
  }
  const double eps = 1e-9 * step;
  for (double i = std::ceil((lo - eps) / step); i * step <= hi + eps; ++i) {
    const double v = i * step;
    out.push_back(std::abs(v) < eps ? 0.0 : v);
  }
  return out;
}

std::pair<double, double> nice_domain(double lo, double hi, int target) {
  if (!(hi > lo)) return lo == 0 ? std::pair{0.0, 1.0} : std::pair{lo - 0.5, lo + 0.5};
  const double step = nice_step(hi - lo, target);
  const double eps = 1e-9 * step;
  return {std::floor((lo + eps) / step) * step, std::ceil((hi - eps) / step) * step};
}

std::vector<double> log_ticks(double lo, double hi) {
  std::vector<double> out;
  if (!(lo > 0) || !(hi >= lo)) return out;
  const double eps = 1e-9;
  const int k0 = static_cast<int>(std::floor(std::log10(lo))), k1 = static_cast<int>(std::ceil(std::log10(hi)));
  auto inside = [&](double v) { return v >= lo * (1 - eps) && v <= hi * (1 + eps); };
  for (int k = k0; k <= k1; ++k)
    if (inside(std::pow(10.0, k))) out.push_back(std::pow(10.0, k));
  if (out.size() < 3) {
    out.clear();
    for (int k = k0; k <= k1; ++k)
      for (double f : {1.0, 2.0, 5.0})
        if (inside(f * std::pow(10.0, k))) out.push_back(f * std::pow(10.0, k));
  }
  return out;
}

std::pair<double, double> log_domain(double lo, double hi) {
  if (!(lo > 0) || !(hi > 0)) return {1, 10};
  if (hi < lo) std::swap(lo, hi);
  auto down = [](double v) {
    const double mag = std::pow(10.0, std::floor(std::log10(v) + 1e-12));
    for (double f : {5.0, 2.0, 1.0})
      if (f * mag <= v * (1 + 1e-12)) return f * mag;
    return mag;
  };
  auto up = [](double v) {
    const double mag = std::pow(10.0, std::floor(std::log10(v) - 1e-12));
    for (double f : {1.0, 2.0, 5.0, 10.0})
      if (f * mag >= v * (1 - 1e-12)) return f * mag;
    return 10 * mag;
  };
  double a = down(lo), b = up(hi);
  if (!(b > a)) b = up(a * 1.5);
  return {a, b};
}

std::string tick_label(double v) {
  if (std::abs(v) < 1e-300) return "0";
  return fmt::format("{:.4g}", v);
}

// ---- colours ----------------------------------------------------------------------------------

std::string_view palette(std::size_t i) {
  static constexpr std::array<std::string_view, kPaletteSize> kTableau10{
      "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
      "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};
  return kTableau10[i % kPaletteSize];
}

Colours::Colours(std::vector<std::string> known) : names_(std::move(known)) {}

std::string_view Colours::of(std::string_view category) {
  auto it = std::find(names_.begin(), names_.end(), category);
  if (it == names_.end()) {
    names_.emplace_back(category);
    it = names_.end() - 1;
  }
  return palette(static_cast<std::size_t>(it - names_.begin()));
}

namespace {

struct Rgb {
  double r, g, b;
};

Rgb parse(std::string_view hex) {
  auto byte = [&](std::size_t at) {
    return at + 2 <= hex.size() ? std::stoi(std::string(hex.substr(at, 2)), nullptr, 16) : 0;
  };
  const std::size_t o = !hex.empty() && hex[0] == '#' ? 1 : 0;
  return {static_cast<double>(byte(o)), static_cast<double>(byte(o + 2)), static_cast<double>(byte(o + 4))};
}

}  // namespace

std::string ramp(double t) {
  // viridis at 0, 1/8, ..., 1 (the values of R's viridisLite::viridis(9))
  static constexpr std::array<std::string_view, 9> kStops{"#440154", "#472d7b", "#3b528b",
                                                          "#2c728e", "#21908c", "#27ad81",
                                                          "#5dc863", "#aadc32", "#fde725"};
  if (!(t > 0)) t = 0;
  if (t > 1) t = 1;
  const double x = t * (kStops.size() - 1);
  const std::size_t i = std::min(kStops.size() - 2, static_cast<std::size_t>(x));
  const double f = x - static_cast<double>(i);
  const Rgb a = parse(kStops[i]), b = parse(kStops[i + 1]);
  auto mix = [&](double u, double v) { return static_cast<int>(std::lround(u + f * (v - u))); };
  return fmt::format("#{:02x}{:02x}{:02x}", mix(a.r, b.r), mix(a.g, b.g), mix(a.b, b.b));
}

bool light(std::string_view colour) {
  const Rgb c = parse(colour);
  auto lin = [](double v) {
    v /= 255;
    return v <= 0.04045 ? v / 12.92 : std::pow((v + 0.055) / 1.055, 2.4);
  };
  return 0.2126 * lin(c.r) + 0.7152 * lin(c.g) + 0.0722 * lin(c.b) > 0.4;
}

// ---- text -------------------------------------------------------------------------------------

std::string escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  auto lower = [](char c) { return static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c); };
  auto scheme_at = [&](std::size_t i) {
    static constexpr std::string_view kHttp = "http";
    if (i + 5 > text.size()) return false;
    for (std::size_t k = 0; k < kHttp.size(); ++k)
      if (lower(text[i + k]) != kHttp[k]) return false;
    const std::size_t colon = lower(text[i + 4]) == 's' ? i + 5 : i + 4;
    return colon < text.size() && text[colon] == ':';
  };
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n') break;
        if (static_cast<unsigned char>(c) == 0x7f) break;
        if ((c == 'h' || c == 'H') && scheme_at(i)) {
          out += c == 'h' ? "&#104;" : "&#72;";
          break;
        }
        out += c;
    }
  }
  return out;
}

std::string coord(double v) {
  if (!std::isfinite(v)) return "0";
  std::string s = fmt::format("{:.1f}", v);
  if (s.size() > 2 && s.compare(s.size() - 2, 2, ".0") == 0) s.resize(s.size() - 2);
  if (s == "-0") s = "0";
  return s;
}

// ---- the element builder ----------------------------------------------------------------------

namespace {

void attr(std::string& out, std::string_view name, std::string_view value) {
  if (value.empty()) return;
  out += ' ';
  out += name;
  out += "=\"";
  out += escape(value);
  out += '"';
}

void close(std::string& out, std::string_view element, std::string_view tip) {
  if (tip.empty()) {
    out += "/>";
  } else {
    out += "><title>" + escape(tip) + "</title></";
    out += element;
    out += '>';
  }
  out += '\n';
}

}  // namespace

Svg::Svg(std::string_view id, const Frame& frame, std::string_view title) : frame_(frame) {
  // inline SVG in HTML needs no xmlns (HTML5 parsing puts it in the SVG namespace)
  out_ = "<svg";
  attr(out_, "id", id);
  out_ += " class=\"chart\" viewBox=\"0 0 " + coord(frame.width) + " " + coord(frame.height) + "\" role=\"img\"";
  attr(out_, "aria-label", title);
  out_ += ">\n<title>" + escape(title) + "</title>\n";
  text(frame.width / 2, 20, title, "chart-title", "middle");
}

void Svg::rect(double x, double y, double w, double h, std::string_view cls, std::string_view fill,
               std::string_view tip) {
  out_ += "<rect x=\"" + coord(x) + "\" y=\"" + coord(y) + "\" width=\"" + coord(std::max(0.0, w)) +
          "\" height=\"" + coord(std::max(0.0, h)) + "\"";
  attr(out_, "class", cls);
  attr(out_, "fill", fill);
  close(out_, "rect", tip);
}

void Svg::circle(double cx, double cy, double r, std::string_view cls, std::string_view fill,
                 std::string_view tip) {
  out_ += "<circle cx=\"" + coord(cx) + "\" cy=\"" + coord(cy) + "\" r=\"" + coord(r) + "\"";
  attr(out_, "class", cls);
  attr(out_, "fill", fill);
  close(out_, "circle", tip);
}

void Svg::line(double x1, double y1, double x2, double y2, std::string_view cls) {
  out_ += "<line x1=\"" + coord(x1) + "\" y1=\"" + coord(y1) + "\" x2=\"" + coord(x2) + "\" y2=\"" +
          coord(y2) + "\"";
  attr(out_, "class", cls);
  out_ += "/>\n";
}

void Svg::text(double x, double y, std::string_view s, std::string_view cls, std::string_view anchor,
               double rotate) {
  out_ += "<text x=\"" + coord(x) + "\" y=\"" + coord(y) + "\"";
  attr(out_, "class", cls);
  if (anchor != "start") attr(out_, "text-anchor", anchor);
  if (rotate != 0)
    out_ += " transform=\"rotate(" + coord(rotate) + " " + coord(x) + " " + coord(y) + ")\"";
  out_ += '>';
  out_ += escape(s);
  out_ += "</text>\n";
}

namespace {
std::string points_of(const std::vector<std::pair<double, double>>& points) {
  std::string p;
  for (const auto& [x, y] : points) {
    if (!p.empty()) p += ' ';
    p += coord(x) + "," + coord(y);
  }
  return p;
}
}  // namespace

void Svg::polyline(const std::vector<std::pair<double, double>>& points, std::string_view cls) {
  out_ += "<polyline points=\"" + points_of(points) + "\"";
  attr(out_, "class", cls);
  out_ += "/>\n";
}

void Svg::polygon(const std::vector<std::pair<double, double>>& points, std::string_view cls,
                  std::string_view fill) {
  out_ += "<polygon points=\"" + points_of(points) + "\"";
  attr(out_, "class", cls);
  attr(out_, "fill", fill);
  out_ += "/>\n";
}

void Svg::rects(const std::vector<std::array<double, 4>>& boxes, std::string_view cls) {
  if (boxes.empty()) return;
  out_ += "<path d=\"";
  for (const auto& [x, y, w, h] : boxes) {
    const std::string wd = coord(std::max(0.0, w));
    fmt::format_to(std::back_inserter(out_), "M{} {}h{}v{}h-{}z", coord(x), coord(y), wd, coord(std::max(0.0, h)), wd);
  }
  out_ += "\"";
  attr(out_, "class", cls);
  out_ += "/>\n";
}

void Svg::hatch(std::string_view id, std::string_view colour, std::string_view background) {
  out_ += "<defs><pattern";
  attr(out_, "id", id);
  out_ += " width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" patternTransform=\"rotate(45)\">"
          "<rect width=\"6\" height=\"6\"";
  attr(out_, "fill", background);
  out_ += "/><line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"6\" stroke-width=\"3\"";
  attr(out_, "stroke", colour);
  out_ += "/></pattern></defs>\n";
}

void Svg::open_group(std::string_view cls) {
  out_ += "<g";
  attr(out_, "class", cls);
  out_ += ">\n";
}

void Svg::close_group() { out_ += "</g>\n"; }

void Svg::x_axis(const Scale& x, std::string_view label, int target) {
  const Frame& f = frame_;
  open_group("axis x");
  for (double v : x.ticks(target)) {
    const double px = x(v);
    line(px, f.y1(), px, f.y0(), "grid");
    line(px, f.y0(), px, f.y0() + 5, "tick");
    text(px, f.y0() + 18, tick_label(v), "tick-label", "middle");
  }
  line(f.x0(), f.y0(), f.x1(), f.y0(), "domain");
  text((f.x0() + f.x1()) / 2, f.y0() + 36, label, "axis-label", "middle");
  close_group();
}

void Svg::y_axis(const Scale& y, std::string_view label, int target) {
  const Frame& f = frame_;
  open_group("axis y");
  for (double v : y.ticks(target)) {
    const double py = y(v);
    line(f.x0(), py, f.x1(), py, "grid");
    line(f.x0() - 5, py, f.x0(), py, "tick");
    text(f.x0() - 8, py + 4, tick_label(v), "tick-label", "end");
  }
  line(f.x0(), f.y1(), f.x0(), f.y0(), "domain");
  text(16, (f.y0() + f.y1()) / 2, label, "axis-label", "middle", -90);
  close_group();
}

void Svg::legend(double x, double y, const std::vector<std::pair<std::string, std::string>>& entries) {
  open_group("legend");
  double cx = x;
  for (const auto& [name, colour] : entries) {
    const double w = 22 + 6.5 * static_cast<double>(name.size());
    if (cx + w > frame_.width - 10 && cx > x) {
      cx = x;
      y += 16;
    }
    rect(cx, y - 9, 10, 10, "swatch", colour);
    text(cx + 14, y, name, "legend-label");
    cx += w;
  }
  close_group();
}

}  // namespace ptdsim::report::svg

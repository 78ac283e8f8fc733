#pragma once
#include <array>
#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

// The small SVG writer behind the HTML report (docs/report.md): scales, nice ticks, log axes,
// colours by category, text escaping and an element builder. No third-party type; every chart of
// html_*.cpp is drawn with it, so the pages need no script and no external file.
namespace ptdsim::report::svg {

// ---- scales and ticks -------------------------------------------------------------------------

// Maps the domain [d0, d1] onto the pixel range [r0, r1] (r1 < r0 for a y axis, whose pixels grow
// downwards), linearly or in log10 (then d0, d1 > 0). A degenerate domain maps to the range's
// middle.
struct Scale {
  double d0 = 0, d1 = 1;
  double r0 = 0, r1 = 1;
  bool log = false;
  double operator()(double v) const;
  // Tick values inside the domain: nice_ticks, or log_ticks for a log scale (nice_ticks again
  // when fewer than three log ticks fall inside, as on an axis within one decade).
  std::vector<double> ticks(int target = 5) const;
};

// The step of about `target` ticks over `span`: 1, 2 or 5 times a power of ten (the "nice
// numbers" of Heckbert, Graphics Gems, 1990). 0 when span <= 0.
double nice_step(double span, int target);
// Multiples of nice_step(hi - lo, target) inside [lo, hi] (a small tolerance keeps the ends).
std::vector<double> nice_ticks(double lo, double hi, int target = 5);
// [lo, hi] widened outwards to multiples of that step, so the axis starts and ends on a tick.
// A single value v gives [v - 0.5, v + 0.5] (or [0, 1] for 0).
std::pair<double, double> nice_domain(double lo, double hi, int target = 5);
// Powers of ten inside [lo, hi] (lo > 0); when fewer than three fall inside, also their 2 and 5
// multiples, so a short log axis still has ticks.
std::vector<double> log_ticks(double lo, double hi);
// [lo, hi] (lo > 0) widened to the enclosing 1, 2, 5 times powers of ten.
std::pair<double, double> log_domain(double lo, double hi);
// A tick's text: at most four significant digits, no trailing zeros ("0.25", "1500", "1e+06").
std::string tick_label(double v);

// ---- colours ----------------------------------------------------------------------------------

// The categorical palette (Tableau 10: distinguishable, and by lightness in greyscale print).
inline constexpr std::size_t kPaletteSize = 10;
std::string_view palette(std::size_t i);  // i modulo kPaletteSize

// Colours by category name: `known` names take palette entries in their order, other names the
// next free entries in order of first request, so a chart's colours do not depend on its data's
// order and two charts with the same `known` list agree.
class Colours {
 public:
  explicit Colours(std::vector<std::string> known = {});
  std::string_view of(std::string_view category);
  const std::vector<std::string>& categories() const { return names_; }  // in palette order

 private:
  std::vector<std::string> names_;
};

// A sequential colour for t in [0, 1] (clamped): the viridis colour map's nine stops (van der
// Walt and Smith, matplotlib 1.5), interpolated in RGB; dark purple at 0, yellow at 1.
std::string ramp(double t);
// Whether dark text reads better than white on `colour` ("#rrggbb"): relative luminance
// (WCAG 2.x) above 0.4.
bool light(std::string_view colour);

// ---- text -------------------------------------------------------------------------------------

// Escapes text for an HTML or SVG text node or a quoted attribute: & < > " ' become entities,
// control characters other than tab and newline are dropped, and the first letter of an "http:"
// or "https:" scheme is written as a character reference, so that a page holds no URL scheme in
// its bytes (docs/report.md "Self-contained"): the text reads the same.
std::string escape(std::string_view text);
// A number for an SVG coordinate: one decimal, trailing ".0" dropped.
std::string coord(double v);

// ---- the element builder ----------------------------------------------------------------------

// Plot area inside a chart: the margins keep room for axis ticks, labels and the title.
struct Frame {
  double width = 1000, height = 400;  // the whole chart (viewBox)
  double left = 70, right = 20, top = 40, bottom = 50;
  double x0() const { return left; }
  double x1() const { return width - right; }
  double y0() const { return height - bottom; }  // the bottom of the plot area
  double y1() const { return top; }
};

class Svg {
 public:
  // An <svg> with id `id` and class "chart", the viewBox of `frame`, an accessible <title> and
  // the visible title text (class "chart-title").
  Svg(std::string_view id, const Frame& frame, std::string_view title);

  // `cls` is a class list; `fill` a colour or "" (the stylesheet decides); `tip` a tooltip (an
  // SVG <title> child, shown on hover) or "".
  void rect(double x, double y, double w, double h, std::string_view cls, std::string_view fill = {},
            std::string_view tip = {});
  void circle(double cx, double cy, double r, std::string_view cls, std::string_view fill = {},
              std::string_view tip = {});
  void line(double x1, double y1, double x2, double y2, std::string_view cls);
  // `anchor`: start, middle or end; `rotate`: degrees about (x, y).
  void text(double x, double y, std::string_view s, std::string_view cls, std::string_view anchor = "start",
            double rotate = 0);
  void polyline(const std::vector<std::pair<double, double>>& points, std::string_view cls);
  void polygon(const std::vector<std::pair<double, double>>& points, std::string_view cls,
               std::string_view fill = {});
  // Many rectangles (x, y, w, h) of one class as a single <path>: one element for the browser to
  // lay out, where a rectangle each costs it one (the timeline's critical path has ~1,000).
  void rects(const std::vector<std::array<double, 4>>& boxes, std::string_view cls);
  // A diagonal-line pattern `id` in `colour` on `background`, for fill="url(#id)".
  void hatch(std::string_view id, std::string_view colour, std::string_view background);
  void open_group(std::string_view cls);
  void close_group();

  // Axes on the frame's plot area: ticks, their labels, grid lines and the axis label (class
  // "axis-label"), in a group of class "axis x" or "axis y".
  void x_axis(const Scale& x, std::string_view label, int target = 8);
  void y_axis(const Scale& y, std::string_view label, int target = 6);
  // A legend row of coloured squares and names at (x, y), wrapping at the frame's width.
  void legend(double x, double y, const std::vector<std::pair<std::string, std::string>>& entries);

  const Frame& frame() const { return frame_; }
  std::string str() const { return out_ + "</svg>\n"; }

 private:
  Frame frame_;
  std::string out_;
};

}  // namespace ptdsim::report::svg

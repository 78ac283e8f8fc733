#include "svg.hpp"

#include <catch2/catch.hpp>
#include <limits>
#include <set>
#include <string>

using namespace ptdsim::report;

namespace {
std::size_t occurrences(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
  return n;
}
}  // namespace

TEST_CASE("io: a linear scale maps its domain onto its range", "[io][svg]") {
  // [0, 10] onto pixels [100, 600]: 50 px per unit; a y axis runs the other way
  const svg::Scale x{0, 10, 100, 600};
  CHECK(x(0) == 100);
  CHECK(x(10) == 600);
  CHECK(x(2.5) == Approx(225));  // 100 + 2.5 * 50
  CHECK(x(-1) == Approx(50));    // outside the domain: extrapolated, the caller clips
  const svg::Scale y{0, 100, 400, 40};
  CHECK(y(0) == 400);
  CHECK(y(100) == 40);
  CHECK(y(25) == Approx(310));  // 400 - 25 * 3.6
  SECTION("a degenerate domain maps to the range's middle") {
    CHECK(svg::Scale{3, 3, 0, 200}(3) == 100);
  }
}

TEST_CASE("io: a log scale spaces decades evenly", "[io][svg]") {
  // [1, 1000] onto [0, 300]: 100 px per decade
  const svg::Scale x{1, 1000, 0, 300, true};
  CHECK(x(1) == Approx(0).margin(1e-12));
  CHECK(x(10) == Approx(100));
  CHECK(x(1000) == Approx(300));
  CHECK(x(2) == Approx(100 * 0.30103).epsilon(1e-4));  // log10(2) of a decade
  CHECK(x(0) == Approx(0).margin(1e-12));             // no log of 0: the axis start
  CHECK(x.ticks() == std::vector<double>{1, 10, 100, 1000});
  // inside one decade, [16.9, 28.6]: log ticks give only 20, so linear nice ticks (step 2)
  const svg::Scale narrow{16.9, 28.6, 0, 100, true};
  CHECK(narrow.ticks(4) == std::vector<double>{18, 20, 22, 24, 26, 28});
}

TEST_CASE("io: nice steps are 1, 2 or 5 times a power of ten", "[io][svg]") {
  // raw step = span / target; the nearest of 1, 2, 5, 10 (times its power of ten) on a log scale
  CHECK(svg::nice_step(10, 5) == Approx(2));      // raw 2
  CHECK(svg::nice_step(1, 5) == Approx(0.2));     // raw 0.2
  CHECK(svg::nice_step(100, 4) == Approx(20));    // raw 25: 2.5 < sqrt(10) -> 2
  CHECK(svg::nice_step(0.37, 5) == Approx(0.1));  // raw 0.074: 7.4 > sqrt(50) -> 10 x 0.01
  CHECK(svg::nice_step(7, 5) == Approx(1));       // raw 1.4 < sqrt(2) -> 1
  CHECK(svg::nice_step(33, 5) == Approx(5));      // raw 6.6 < sqrt(50) -> 5
  CHECK(svg::nice_step(0, 5) == 0);
  CHECK(svg::nice_step(-3, 5) == 0);
}

TEST_CASE("io: nice ticks are the step's multiples inside the interval", "[io][svg]") {
  auto t = svg::nice_ticks(0, 1, 5);  // step 0.2
  REQUIRE(t.size() == 6);
  for (std::size_t i = 0; i < t.size(); ++i) CHECK(t[i] == Approx(0.2 * static_cast<double>(i)).margin(1e-12));
  CHECK(svg::nice_ticks(-3, 7, 5) == std::vector<double>{-2, 0, 2, 4, 6});  // step 2
  CHECK(svg::nice_ticks(0.5, 0.5, 5) == std::vector<double>{0.5});          // one value: itself
  SECTION("a nice domain starts and ends on a tick") {
    CHECK(svg::nice_domain(0.3, 9.7, 5) == std::pair{0.0, 10.0});  // step 2
    CHECK(svg::nice_domain(0, 84, 6) == std::pair{0.0, 90.0});     // raw 14 -> step 10
    CHECK(svg::nice_domain(0, 0, 5) == std::pair{0.0, 1.0});
    CHECK(svg::nice_domain(4, 4, 5) == std::pair{3.5, 4.5});
  }
}

TEST_CASE("io: log ticks are decades, or 1-2-5 on a short axis", "[io][svg]") {
  CHECK(svg::log_ticks(1, 1000) == std::vector<double>{1, 10, 100, 1000});
  CHECK(svg::log_ticks(0.5, 5000) == std::vector<double>{1, 10, 100, 1000});
  // [2, 30] holds one decade (10): fewer than three, so 2, 5, 10, 20
  const auto t = svg::log_ticks(2, 30);
  REQUIRE(t.size() == 4);
  CHECK(t[0] == Approx(2));
  CHECK(t[1] == Approx(5));
  CHECK(t[2] == Approx(10));
  CHECK(t[3] == Approx(20));
  CHECK(svg::log_ticks(0, 10).empty());  // no log axis through 0
  SECTION("a log domain widens to 1-2-5 values") {
    const auto [lo, hi] = svg::log_domain(0.3, 45);
    CHECK(lo == Approx(0.2));
    CHECK(hi == Approx(50));
    const auto [a, b] = svg::log_domain(16.9, 28.6);
    CHECK(a == Approx(10));
    CHECK(b == Approx(50));
  }
}

TEST_CASE("io: tick labels are short", "[io][svg]") {
  CHECK(svg::tick_label(0) == "0");
  CHECK(svg::tick_label(0.25) == "0.25");
  CHECK(svg::tick_label(0.1 + 0.2) == "0.3");  // 0.30000000000000004 in binary
  CHECK(svg::tick_label(1500) == "1500");
  CHECK(svg::tick_label(1e6) == "1e+06");
  CHECK(svg::tick_label(-2) == "-2");
}

TEST_CASE("io: colours go by category, known names first", "[io][svg]") {
  svg::Colours c({"weights", "gradients"});
  CHECK(c.of("gradients") == svg::palette(1));
  CHECK(c.of("weights") == svg::palette(0));
  CHECK(c.of("activations") == svg::palette(2));  // the next free entry, in order of request
  CHECK(c.of("other") == svg::palette(3));
  CHECK(c.of("activations") == svg::palette(2));  // stable
  CHECK(c.categories() == std::vector<std::string>{"weights", "gradients", "activations", "other"});
  SECTION("the palette's entries differ and wrap around") {
    std::set<std::string_view> seen;
    for (std::size_t i = 0; i < svg::kPaletteSize; ++i) seen.insert(svg::palette(i));
    CHECK(seen.size() == svg::kPaletteSize);
    CHECK(svg::palette(svg::kPaletteSize) == svg::palette(0));
  }
}

TEST_CASE("io: the sequential ramp runs along viridis", "[io][svg]") {
  CHECK(svg::ramp(0) == "#440154");
  CHECK(svg::ramp(1) == "#fde725");
  CHECK(svg::ramp(0.5) == "#21908c");  // the middle stop exactly
  CHECK(svg::ramp(-3) == "#440154");   // clamped
  CHECK(svg::ramp(7) == "#fde725");
  // half way between the first two stops #440154 and #472d7b:
  // r (68+71)/2 = 69.5 -> 70 = 0x46, g (1+45)/2 = 23 = 0x17, b (84+123)/2 = 103.5 -> 104 = 0x68
  CHECK(svg::ramp(1.0 / 16) == "#461768");
  SECTION("text colour by luminance") {
    CHECK(svg::light("#ffffff"));
    CHECK(svg::light("#fde725"));
    CHECK_FALSE(svg::light("#000000"));
    CHECK_FALSE(svg::light("#440154"));
  }
}

TEST_CASE("io: text is escaped for HTML and SVG", "[io][svg]") {
  CHECK(svg::escape("<a & 'b'>\"") == "&lt;a &amp; &#39;b&#39;&gt;&quot;");
  CHECK(svg::escape(std::string("a\x01\x1b" "b\tc\x7f", 7)) == "ab\tc");  // control characters dropped
  CHECK(svg::escape("mlp 4h, 8 GPUs") == "mlp 4h, 8 GPUs");
  SECTION("no URL scheme survives in the bytes; the text reads the same") {
    CHECK(svg::escape("see https://arxiv.org/abs/2104.04473") == "see &#104;ttps://arxiv.org/abs/2104.04473");
    CHECK(svg::escape("HTTP://X") == "&#72;TTP://X");
    CHECK(svg::escape("http:") == "&#104;ttp:");
    CHECK(svg::escape("httpx and http") == "httpx and http");  // not a scheme
  }
  SECTION("coordinates keep one decimal") {
    CHECK(svg::coord(1.04) == "1");
    CHECK(svg::coord(2.5) == "2.5");
    CHECK(svg::coord(-0.04) == "0");
    CHECK(svg::coord(std::numeric_limits<double>::infinity()) == "0");
  }
}

TEST_CASE("io: the SVG builder writes its elements", "[io][svg]") {
  svg::Frame f;  // 1000 x 400, plot area x 70..980, y 40..350
  svg::Svg chart("c1", f, "A <title>");
  chart.rect(1, 2, 3, 4, "bar", "#4e79a7", "tip & more");
  chart.text(5, 6, "x < y", "label", "middle");
  chart.rects({{10, 20, 5, 2}, {30.5, 20, 0.6, 2}}, "mark");  // two rectangles, one element
  chart.rects({}, "none");                                    // none: no element
  chart.y_axis(svg::Scale{0, 10, f.y0(), f.y1()}, "GiB");  // ticks 0, 2, ..., 10
  chart.x_axis(svg::Scale{1, 100, f.x0(), f.x1(), true}, "seconds");  // ticks 1, 10, 100
  const std::string s = chart.str();
  CHECK(s.rfind("<svg id=\"c1\" class=\"chart\" viewBox=\"0 0 1000 400\"", 0) == 0);
  CHECK(s.find("<title>A &lt;title&gt;</title>") != std::string::npos);
  CHECK(s.find("<rect x=\"1\" y=\"2\" width=\"3\" height=\"4\" class=\"bar\" fill=\"#4e79a7\"><title>tip &amp; "
               "more</title></rect>") != std::string::npos);
  CHECK(s.find(">x &lt; y</text>") != std::string::npos);
  CHECK(s.find("<path d=\"M10 20h5v2h-5zM30.5 20h0.6v2h-0.6z\" class=\"mark\"/>") != std::string::npos);
  CHECK(s.find("class=\"none\"") == std::string::npos);
  CHECK(occurrences(s, "class=\"tick-label\"") == 6 + 3);
  CHECK(occurrences(s, "class=\"axis-label\"") == 2);
  CHECK(occurrences(s, "class=\"chart-title\"") == 1);
  CHECK(s.find(">GiB</text>") != std::string::npos);
  // the y axis's tick 10 sits at the plot's top (y 40), its 0 at the bottom (y 350)
  CHECK(s.find("<text x=\"62\" y=\"44\" class=\"tick-label\" text-anchor=\"end\">10</text>") != std::string::npos);
  CHECK(s.find("<text x=\"62\" y=\"354\" class=\"tick-label\" text-anchor=\"end\">0</text>") != std::string::npos);
  CHECK(s.substr(s.size() - 7) == "</svg>\n");
}

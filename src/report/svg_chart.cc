#include "report/svg_chart.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <tuple>

#include "report/html.h"
#include "util/format.h"

namespace ppsearch::report {
namespace {

// Geometry of every chart, in CSS pixels; the svg scales with its viewBox.
constexpr double kWidth = 880;
constexpr double kLeft = 84, kRight = 24;
constexpr double kTitleY = 22, kLegendY = 44, kLegendRow = 18;
constexpr double kPlotHeight = 250;
constexpr double kCharWidth = 6.6;  // 12 px sans-serif, for laying out the legend

std::string Num(double v) { return fmt::format("{:.1f}", v); }

std::string Value(double v, int decimals) { return fmt::format("{:.{}f}", v, decimals); }

std::string TickText(double v, double step) {
  if (step >= 1) return FormatThousands(static_cast<int64_t>(std::llround(v)));
  const int decimals = static_cast<int>(std::ceil(-std::log10(step) - 1e-9));
  return FormatNumber(v, decimals);
}

struct LegendItem {
  std::string swatch;  // svg markup drawn in a 12 x 12 box at (0, 0)
  std::string text;
};

// Legend entries in rows under the title; returns the markup and the height used.
std::pair<std::string, double> Legend(const std::vector<LegendItem>& items) {
  std::string out = "<g class=\"legend\">";
  double x = kLeft, y = kLegendY;
  for (const LegendItem& item : items) {
    const double w = 20 + item.text.size() * kCharWidth + 18;
    if (x + w > kWidth - kRight && x > kLeft) {
      x = kLeft;
      y += kLegendRow;
    }
    out += fmt::format("<g transform=\"translate({},{})\">{}<text x=\"18\" y=\"10\">{}</text></g>",
                       Num(x), Num(y - 10), item.swatch, EscapeHtml(item.text));
    x += w;
  }
  out += "</g>";
  return {out, y - kLegendY + kLegendRow};
}

std::string SquareSwatch(const std::string& color) {
  return fmt::format("<rect width=\"12\" height=\"12\" fill=\"{}\"/>", color);
}

std::string Header(const std::string& id, const std::string& title, double height) {
  return fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" id=\"{}\" viewBox=\"0 0 {} {}\" "
      "width=\"{}\" height=\"{}\" role=\"img\" aria-label=\"{}\"><rect class=\"bg\" width=\"{}\" "
      "height=\"{}\" fill=\"#fff\"/><text class=\"title\" x=\"{}\" y=\"{}\">{}</text>",
      id, kWidth, Num(height), kWidth, Num(height), EscapeHtml(title), kWidth, Num(height),
      Num(kLeft), Num(kTitleY), EscapeHtml(title));
}

struct YAxis {
  double top = 0, bottom = 0, max = 1;
  double At(double v) const { return bottom - (v / max) * (bottom - top); }
};

// Grid lines, tick labels and the rotated y label.
std::string DrawYAxis(const YAxis& y, const std::vector<double>& ticks, const std::string& label) {
  const double step = ticks.size() > 1 ? ticks[1] - ticks[0] : 1;
  std::string out = "<g class=\"axis y\">";
  for (double t : ticks) {
    out += fmt::format(
        "<line x1=\"{}\" x2=\"{}\" y1=\"{}\" y2=\"{}\" class=\"grid\"/><text x=\"{}\" y=\"{}\" "
        "text-anchor=\"end\">{}</text>",
        Num(kLeft), Num(kWidth - kRight), Num(y.At(t)), Num(y.At(t)), Num(kLeft - 6),
        Num(y.At(t) + 4), TickText(t, step));
  }
  const double mid = (y.top + y.bottom) / 2;
  out += fmt::format(
      "<text class=\"label\" transform=\"translate(18,{}) rotate(-90)\" "
      "text-anchor=\"middle\">{}</text></g>",
      Num(mid), EscapeHtml(label));
  return out;
}

std::string Diamond(double cx, double cy, double r) {
  return fmt::format("M{} {}L{} {}L{} {}L{} {}Z", Num(cx), Num(cy - r), Num(cx + r), Num(cy),
                     Num(cx), Num(cy + r), Num(cx - r), Num(cy));
}

// A closed path through points at `radii` (alternating, when two) around
// (cx, cy), the first straight up (or rotated by `turn` of a step).
std::string Polygon(int corners, const std::vector<double>& radii, double turn, double cx,
                    double cy, const std::string& attrs) {
  std::string d;
  const double step = 2 * M_PI / corners;
  for (int i = 0; i < corners; ++i) {
    const double r = radii[static_cast<size_t>(i) % radii.size()];
    const double a = (i + turn) * step;
    d += fmt::format("{}{} {}", i == 0 ? "M" : "L", Num(cx + r * std::sin(a)),
                     Num(cy - r * std::cos(a)));
  }
  return fmt::format("<path d=\"{}Z\" {}/>", d, attrs);
}

// A point shape, one of kShapes: 0 circle, 1 square, 2 triangle, 3 diamond,
// 4 triangle down, 5 pentagon, 6 hexagon, 7 four-pointed star, 8 that star
// turned 45 degrees; then again.
std::string Shape(int shape, double cx, double cy, double r, const std::string& attrs) {
  switch (shape % kShapes) {
    case 1:
      return fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" {}/>", Num(cx - r),
                         Num(cy - r), Num(2 * r), Num(2 * r), attrs);
    case 2:
      return fmt::format("<path d=\"M{} {}L{} {}L{} {}Z\" {}/>", Num(cx), Num(cy - r * 1.2),
                         Num(cx + r * 1.1), Num(cy + r * 0.8), Num(cx - r * 1.1), Num(cy + r * 0.8),
                         attrs);
    case 3:
      return Polygon(4, {r * 1.3}, 0, cx, cy, attrs);
    case 4:
      return Polygon(3, {r * 1.25}, 0.5, cx, cy, attrs);
    case 5:
      return Polygon(5, {r * 1.15}, 0, cx, cy, attrs);
    case 6:
      return Polygon(6, {r * 1.1}, 0, cx, cy, attrs);
    case 7:  // a four-pointed star: points and inner corners alternate
      return Polygon(8, {r * 1.35, r * 0.5}, 0, cx, cy, attrs);
    case 8:
      return Polygon(8, {r * 1.35, r * 0.5}, 1, cx, cy, attrs);
    default:
      return fmt::format("<circle cx=\"{}\" cy=\"{}\" r=\"{}\" {}/>", Num(cx), Num(cy), Num(r),
                         attrs);
  }
}

std::string MarkAttrs(const std::string& kind, const std::string& what, double value,
                      int decimals) {
  return fmt::format("class=\"mark {}\" data-key=\"{}\" data-value=\"{}\"", kind, EscapeHtml(what),
                     Value(value, decimals));
}

std::string Tooltip(const std::string& what, double value, int decimals) {
  return fmt::format("<title>{}: {}</title>", EscapeHtml(what), Value(value, decimals));
}

double BandMax(const BandChart& c) {
  double m = 0;
  for (const Band& b : c.bands)
    for (const Slot& s : b.slots) {
      for (const Bar& bar : s.bars) m = std::max({m, bar.from, bar.to});
      for (double d : s.dots) m = std::max(m, d);
      if (s.marker) m = std::max(m, *s.marker);
      if (s.whisker) m = std::max(m, s.whisker->high);
    }
  for (const RefLine& l : c.lines) m = std::max(m, l.y);
  return m;
}

}  // namespace

std::string PaletteColor(size_t i) {
  static const char* kColors[] = {"#0072B2", "#E69F00", "#009E73", "#CC79A7",
                                  "#56B4E9", "#D55E00", "#F0E442", "#000000"};
  return kColors[i % (sizeof(kColors) / sizeof(kColors[0]))];
}

std::vector<double> NiceTicks(double max) {
  if (!(max > 0) || !std::isfinite(max)) return {0, 1};
  const double raw = max / 5;
  const double mag = std::pow(10, std::floor(std::log10(raw)));
  double step = mag;
  for (double f : {1.0, 2.0, 5.0, 10.0}) {
    step = f * mag;
    if (max / step <= 8) break;
  }
  std::vector<double> ticks;
  for (int i = 0; i <= 64; ++i) {
    ticks.push_back(i * step);
    if (i * step >= max) break;
  }
  return ticks;
}

std::string RenderBandChart(const BandChart& c) {
  std::vector<LegendItem> legend;
  for (const Series& s : c.series) legend.push_back({SquareSwatch(s.color), s.name});
  if (!c.dots_legend.empty())
    legend.push_back({"<circle cx=\"6\" cy=\"6\" r=\"3.5\" class=\"dot\"/>", c.dots_legend});
  if (!c.marker_legend.empty())
    legend.push_back(
        {"<path d=\"" + Diamond(6, 6, 6) + "\" class=\"predicted\"/>", c.marker_legend});
  if (!c.whisker_legend.empty())
    legend.push_back({"<path d=\"M3 0H9M6 0V12M3 12H9\" class=\"interval\"/>", c.whisker_legend});
  if (!c.emphasis_legend.empty())
    legend.push_back({"<rect width=\"12\" height=\"12\" class=\"emphasis\"/>", c.emphasis_legend});
  for (const RefLine& l : c.lines)
    legend.push_back({fmt::format("<line x1=\"0\" x2=\"12\" y1=\"6\" y2=\"6\" stroke=\"{}\" "
                                  "class=\"refline\"/>",
                                  l.color),
                      l.label});
  auto [legend_svg, legend_h] = Legend(legend);
  YAxis y;
  y.top = kLegendY + legend_h + 10;
  y.bottom = y.top + kPlotHeight;
  const std::vector<double> ticks = NiceTicks(BandMax(c) * 1.05);
  y.max = ticks.back();
  const double height = y.bottom + 70;
  std::string out = Header(c.id, c.title, height) + legend_svg + DrawYAxis(y, ticks, c.y_label);

  const double plot_w = kWidth - kLeft - kRight;
  const double band_w = plot_w / std::max<size_t>(c.bands.size(), 1);
  out += "<g class=\"plot\">";
  for (size_t bi = 0; bi < c.bands.size(); ++bi) {
    const Band& band = c.bands[bi];
    const double x0 = kLeft + bi * band_w;
    const size_t k = std::max<size_t>(band.slots.size(), 1);
    const double slot_w = band_w * 0.8 / k;
    double band_top = y.bottom;
    for (size_t si = 0; si < band.slots.size(); ++si) {
      const Slot& slot = band.slots[si];
      const double sx = x0 + band_w * 0.1 + si * slot_w;
      const double cx = sx + slot_w / 2;
      for (const Bar& bar : slot.bars) {
        const double top = y.At(std::max(bar.from, bar.to));
        const double h = std::abs(y.At(bar.from) - y.At(bar.to));
        band_top = std::min(band_top, top);
        out += fmt::format(
            "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\" {}>{}</rect>",
            Num(sx + slot_w * 0.08), Num(top), Num(slot_w * 0.84), Num(std::max(h, 0.5)),
            c.series[bar.series % c.series.size()].color,
            MarkAttrs(band.emphasized ? "bar emphasis" : "bar", bar.what, bar.to - bar.from,
                      c.value_decimals),
            Tooltip(bar.what, bar.to - bar.from, c.value_decimals));
      }
      for (size_t di = 0; di < slot.dots.size(); ++di) {
        // Repeats spread across the slot so equal values stay visible.
        const double n = static_cast<double>(slot.dots.size());
        const double dx = slot.dots.size() > 1 ? (di / (n - 1) - 0.5) * slot_w * 0.5 : 0;
        const std::string what = slot.what + " repeat " + std::to_string(di + 1);
        out += fmt::format("<circle cx=\"{}\" cy=\"{}\" r=\"3.5\" {}>{}</circle>", Num(cx + dx),
                           Num(y.At(slot.dots[di])),
                           MarkAttrs("dot", what, slot.dots[di], c.value_decimals),
                           Tooltip(what, slot.dots[di], c.value_decimals));
        band_top = std::min(band_top, y.At(slot.dots[di]));
      }
      if (slot.whisker) {
        // The stem, then each cap as a mark holding its value.
        const double lo = y.At(slot.whisker->low), hi = y.At(slot.whisker->high);
        out += fmt::format("<line class=\"interval\" x1=\"{}\" x2=\"{}\" y1=\"{}\" y2=\"{}\"/>",
                           Num(cx), Num(cx), Num(lo), Num(hi));
        for (const auto& [end, value, py] : {std::tuple{"low", slot.whisker->low, lo},
                                             std::tuple{"high", slot.whisker->high, hi}}) {
          const std::string what = slot.what + " " + c.whisker_key + " " + end;
          out += fmt::format("<line x1=\"{}\" x2=\"{}\" y1=\"{}\" y2=\"{}\" {}>{}</line>",
                             Num(cx - 5), Num(cx + 5), Num(py), Num(py),
                             MarkAttrs("interval", what, value, c.value_decimals),
                             Tooltip(what, value, c.value_decimals));
        }
        band_top = std::min(band_top, hi - 2);
      }
      if (slot.marker) {
        const std::string what = slot.what + " " + c.marker_legend;
        out += fmt::format("<path d=\"{}\" {}>{}</path>", Diamond(cx, y.At(*slot.marker), 6),
                           MarkAttrs("predicted", what, *slot.marker, c.value_decimals),
                           Tooltip(what, *slot.marker, c.value_decimals));
        band_top = std::min(band_top, y.At(*slot.marker) - 6);
      }
    }
    if (band.emphasized && !band.tag.empty())
      out += fmt::format("<text class=\"tag\" x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
                         Num(x0 + band_w / 2), Num(band_top - 6), EscapeHtml(band.tag));
    out += fmt::format("<text class=\"tick\" x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
                       Num(x0 + band_w / 2), Num(y.bottom + 16), EscapeHtml(band.label));
    // A group label under its first band, centred over the run of bands sharing it.
    if (!band.group.empty() && (bi == 0 || c.bands[bi - 1].group != band.group)) {
      size_t end = bi;
      while (end + 1 < c.bands.size() && c.bands[end + 1].group == band.group) ++end;
      const double gx = kLeft + (bi + (end - bi + 1) / 2.0) * band_w;
      out += fmt::format("<text class=\"group\" x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
                         Num(gx), Num(y.bottom + 34), EscapeHtml(band.group));
      if (bi > 0)
        out += fmt::format("<line class=\"sep\" x1=\"{}\" x2=\"{}\" y1=\"{}\" y2=\"{}\"/>", Num(x0),
                           Num(x0), Num(y.top), Num(y.bottom + 38));
    }
  }
  for (const RefLine& l : c.lines) {
    out += fmt::format("<line x1=\"{}\" x2=\"{}\" y1=\"{}\" y2=\"{}\" stroke=\"{}\" {}>{}</line>",
                       Num(kLeft), Num(kWidth - kRight), Num(y.At(l.y)), Num(y.At(l.y)), l.color,
                       MarkAttrs("refline", l.label, l.y, c.value_decimals),
                       Tooltip(l.label, l.y, c.value_decimals));
  }
  out += fmt::format(
      "<line class=\"axisline\" x1=\"{}\" x2=\"{}\" y1=\"{}\" y2=\"{}\"/></g><text class=\"label\" "
      "x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text></svg>",
      Num(kLeft), Num(kWidth - kRight), Num(y.bottom), Num(y.bottom), Num(kLeft + plot_w / 2),
      Num(y.bottom + 58), EscapeHtml(c.x_label));
  return out;
}

std::string RenderScatterChart(const ScatterChart& c) {
  std::vector<LegendItem> legend;
  for (const Series& s : c.series) legend.push_back({SquareSwatch(s.color), s.name});
  for (size_t i = 0; i < c.shapes.size(); ++i)
    legend.push_back({Shape(static_cast<int>(i), 6, 6, 5, "class=\"shape\""), c.shapes[i]});
  if (!c.emphasis_legend.empty())
    legend.push_back({"<circle cx=\"6\" cy=\"6\" r=\"6\" class=\"ring\"/>", c.emphasis_legend});
  auto [legend_svg, legend_h] = Legend(legend);
  YAxis y;
  y.top = kLegendY + legend_h + 10;
  y.bottom = y.top + kPlotHeight;
  double xmax = 0, ymax = 0;
  for (const ScatterPoint& p : c.points) {
    xmax = std::max(xmax, p.x);
    ymax = std::max(ymax, p.y);
  }
  const std::vector<double> yticks = NiceTicks(ymax * 1.05), xticks = NiceTicks(xmax * 1.05);
  y.max = yticks.back();
  const double plot_w = kWidth - kLeft - kRight;
  auto x_at = [&](double v) { return kLeft + v / xticks.back() * plot_w; };
  const double height = y.bottom + 56;
  std::string out = Header(c.id, c.title, height) + legend_svg + DrawYAxis(y, yticks, c.y_label);
  const double xstep = xticks.size() > 1 ? xticks[1] - xticks[0] : 1;
  out += "<g class=\"axis x\">";
  for (double t : xticks)
    out += fmt::format(
        "<line x1=\"{}\" x2=\"{}\" y1=\"{}\" y2=\"{}\" class=\"grid\"/><text x=\"{}\" y=\"{}\" "
        "text-anchor=\"middle\">{}</text>",
        Num(x_at(t)), Num(x_at(t)), Num(y.top), Num(y.bottom), Num(x_at(t)), Num(y.bottom + 16),
        TickText(t, xstep));
  out += "</g><g class=\"plot\">";
  for (const ScatterPoint& p : c.points) {
    const double cx = x_at(p.x), cy = y.At(p.y);
    if (p.emphasized)
      out += fmt::format("<circle class=\"ring\" cx=\"{}\" cy=\"{}\" r=\"10\"/>", Num(cx), Num(cy));
    const std::string attrs =
        fmt::format("fill=\"{}\" {} data-x=\"{}\"", c.series[p.series % c.series.size()].color,
                    MarkAttrs(p.emphasized ? "point pareto" : "point", p.what, p.y, c.y_decimals),
                    Value(p.x, c.x_decimals));
    std::string shape = Shape(p.shape, cx, cy, 5.5, attrs);
    // The tooltip goes inside the shape element: replace its "/>" with "><title>..</title></tag>".
    const std::string tag = shape.substr(1, shape.find(' ') - 1);
    shape.resize(shape.size() - 2);
    out += shape + fmt::format("><title>{}: {} at {}</title></{}>", EscapeHtml(p.what),
                               Value(p.y, c.y_decimals), Value(p.x, c.x_decimals), tag);
  }
  out += fmt::format(
      "<line class=\"axisline\" x1=\"{}\" x2=\"{}\" y1=\"{}\" y2=\"{}\"/></g><text class=\"label\" "
      "x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text></svg>",
      Num(kLeft), Num(kWidth - kRight), Num(y.bottom), Num(y.bottom), Num(kLeft + plot_w / 2),
      Num(y.bottom + 42), EscapeHtml(c.x_label));
  return out;
}

}  // namespace ppsearch::report

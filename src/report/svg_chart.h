#pragma once
// Charts as inline SVG, written by C++ (no script, no library, no network):
// a band chart (categories along x, bars side by side or stacked, repeat
// dots, predicted markers, reference lines) and a scatter chart. Every chart
// has a title, axis labels with units and a legend. Pure and deterministic:
// the same chart gives the same bytes. Each drawn datum is an element of
// class "mark" whose data-value attribute holds its number, so a test can
// read back what a chart shows.

#include <optional>
#include <string>
#include <vector>

namespace ppsearch::report {

struct Series {
  std::string name;
  std::string color;  // CSS colour
};

// One bar, or one segment of a stacked bar, from `from` to `to` on the y axis.
struct Bar {
  int series = 0;
  double from = 0;
  double to = 0;
  std::string what;  // tooltip and data-key, e.g. "PP2/TP16/EP4 C=8 median"
};

// A vertical whisker from `low` to `high` (e.g. a prediction's interval).
struct Whisker {
  double low = 0, high = 0;
};

// One x position inside a band: its bars are drawn over each other (stack
// them by chaining from/to); dots (e.g. repeats), a marker (e.g. the
// predicted value) and a whisker through the marker sit on it.
struct Slot {
  std::vector<Bar> bars;
  std::vector<double> dots;
  std::optional<double> marker;
  std::string what;  // names the dots, the marker and the whisker in tooltips
  std::optional<Whisker> whisker{};
};

struct Band {
  std::string label;        // first line under the band, e.g. "PP2/TP16"
  std::string group;        // second line, shared by neighbouring bands, e.g. "C = 8"
  bool emphasized = false;  // outlined and tagged with `tag` (e.g. the baseline)
  std::string tag;
  std::vector<Slot> slots;
};

struct RefLine {
  double y = 0;
  std::string label;
  std::string color;
};

struct BandChart {
  std::string id;  // the svg element's id
  std::string title, x_label, y_label;
  std::vector<Series> series;
  std::vector<Band> bands;
  std::vector<RefLine> lines;
  std::string dots_legend;    // "" leaves dots out of the legend
  std::string marker_legend;  // "" leaves the marker out of the legend
  // The whisker's legend; its two caps are marks keyed "<slot what> <whisker_key> low|high".
  std::string whisker_legend;
  std::string whisker_key = "interval";
  std::string emphasis_legend;
  int value_decimals = 2;  // data-value precision
};

// Distinct point shapes: circle, square, triangle, diamond, triangle down,
// pentagon, hexagon, four-pointed star upright and turned; a shape index
// past them starts again.
inline constexpr int kShapes = 9;

struct ScatterPoint {
  double x = 0, y = 0;
  int series = 0;
  int shape = 0;            // index into ScatterChart::shapes (kShapes distinct marks)
  bool emphasized = false;  // ringed (e.g. Pareto-optimal)
  std::string what;
};

struct ScatterChart {
  std::string id;
  std::string title, x_label, y_label;
  std::vector<Series> series;
  std::vector<std::string> shapes;  // legend names of the shapes, e.g. "C = 8"
  std::vector<ScatterPoint> points;
  std::string emphasis_legend;
  int x_decimals = 2, y_decimals = 2;
};

std::string RenderBandChart(const BandChart& chart);
std::string RenderScatterChart(const ScatterChart& chart);

// Colour-blind-safe colours (Okabe and Ito), cycled.
std::string PaletteColor(size_t i);

// Tick positions from 0 to at least `max`: 4 to 8 steps of 1, 2 or 5 x 10^k.
std::vector<double> NiceTicks(double max);

}  // namespace ppsearch::report

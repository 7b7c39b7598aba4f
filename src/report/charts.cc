#include "report/charts.h"

#include <fmt/format.h>

#include <algorithm>

#include "decide/rules.h"
#include "evidence/point_columns.h"
#include "report/adaptive_section.h"
#include "report/svg_chart.h"

namespace ppsearch::report {
namespace {

// "2/16/4": short enough to sit under a bar; a disaggregated deployment's
// "1P3D 1/8/8+3x1/8/8/8".
std::string Short(const spec::LayoutSpec& l) {
  if (l.disaggregated())
    return fmt::format("{}P{}D {}+{}", l.prefill().instances, l.decode().instances,
                       Short(l.prefill()), Short(l.decode()));
  return (l.instances > 1 ? fmt::format("{}x", l.instances) : "") +
         fmt::format("{}/{}/{}", l.pp, l.tp, l.ep) + (l.dp > 1 ? fmt::format("/{}", l.dp) : "");
}

std::string PointName(const ChartPoint& p) {
  return fmt::format("{}{} C={}", p.layout.Label(), p.imported ? " (imported)" : "", p.concurrency);
}

// One colour per layout, in order of first appearance, shared by every chart.
struct LayoutColors {
  std::vector<spec::LayoutSpec> layouts;
  size_t Index(const spec::LayoutSpec& l) {
    for (size_t i = 0; i < layouts.size(); ++i)
      if (layouts[i] == l) return i;
    layouts.push_back(l);
    return layouts.size() - 1;
  }
  std::vector<Series> AsSeries() const {
    std::vector<Series> out;
    for (size_t i = 0; i < layouts.size(); ++i)
      out.push_back({layouts[i].Label(), PaletteColor(i)});
    return out;
  }
};

std::vector<int> Concurrencies(const ChartInputs& in) {
  std::vector<int> out;
  for (const ChartPoint& p : in.points)
    if (std::find(out.begin(), out.end(), p.concurrency) == out.end()) out.push_back(p.concurrency);
  std::sort(out.begin(), out.end());
  return out;
}

// Bands grouped by concurrency, one per point, in the table's order.
template <typename F>
std::vector<Band> PointBands(const ChartInputs& in, F slots) {
  std::vector<Band> bands;
  for (int c : Concurrencies(in))
    for (const ChartPoint& p : in.points) {
      if (p.concurrency != c) continue;
      Band b;
      b.label = Short(p.layout) + (p.imported ? " imp" : "");
      b.group = fmt::format("C = {}", c);
      b.emphasized = p.baseline;
      b.tag = "baseline";
      b.slots = slots(p);
      bands.push_back(std::move(b));
    }
  return bands;
}

std::string InputTpsChart(const ChartInputs& in, LayoutColors& colors) {
  BandChart c;
  c.id = kFigureInputTps;
  c.title = in.measured ? "Input throughput per layout and concurrency (bar: median of the repeats)"
                        : "Predicted input throughput per layout and concurrency";
  c.x_label = "layout (PP / TP / EP), grouped by concurrency C";
  c.y_label = "input TPS (tokens/s)";
  bool any_prediction = false, any_repeat = false, any_interval = false;
  c.bands = PointBands(in, [&](const ChartPoint& p) {
    Slot s;
    s.what = PointName(p);
    s.bars.push_back({static_cast<int>(colors.Index(p.layout)), 0, p.input_tps,
                      s.what + (in.measured && !p.imported ? " median" : "")});
    s.dots = p.input_tps_repeats;
    s.marker = p.predicted_input_tps;
    if (const auto& i = p.predicted_input_tps_interval) {
      s.whisker = Whisker{i->low, i->high};
      any_interval = true;
    }
    any_prediction |= s.marker.has_value();
    any_repeat |= !s.dots.empty();
    return std::vector<Slot>{s};
  });
  c.series = colors.AsSeries();
  c.dots_legend = any_repeat ? "one repeat" : "";
  c.marker_legend = any_prediction ? "predicted" : "";
  c.whisker_legend = any_interval ? "predicted 10th\u201390th percentile" : "";
  c.whisker_key = "predicted interval";
  c.emphasis_legend = "baseline";
  return RenderBandChart(c);
}

std::string TtftChart(const ChartInputs& in) {
  BandChart c;
  c.id = kFigureTtft;
  c.title = in.measured ? "Time to first token, p50 and p95 (medians of the repeats)"
                        : "Predicted time to first token, p50 and p95";
  c.x_label = "layout (PP / TP / EP), grouped by concurrency C";
  c.y_label = "TTFT (s)";
  c.series = {{"TTFT p50", PaletteColor(0)}, {"TTFT p95", PaletteColor(1)}};
  bool any_repeat = false;
  c.bands = PointBands(in, [&](const ChartPoint& p) {
    Slot p50, p95;
    p50.what = PointName(p) + " TTFT p50";
    p95.what = PointName(p) + " TTFT p95";
    if (p.ttft_p50_s) p50.bars.push_back({0, 0, *p.ttft_p50_s, p50.what});
    if (p.ttft_p95_s) p95.bars.push_back({1, 0, *p.ttft_p95_s, p95.what});
    p50.dots = p.ttft_p50_repeats;
    any_repeat |= !p50.dots.empty();
    return std::vector<Slot>{p50, p95};
  });
  c.dots_legend = any_repeat ? "TTFT p50 of one repeat" : "";
  c.emphasis_legend = "baseline";
  return RenderBandChart(c);
}

std::string TradeoffChart(const ChartInputs& in, LayoutColors& colors) {
  ScatterChart c;
  c.id = kFigureTradeoff;
  c.title = in.measured ? "Throughput against TTFT p50, every point (medians of the repeats)"
                        : "Predicted throughput against TTFT p50, every point";
  c.x_label = "TTFT p50 (s)";
  c.y_label = "input TPS (tokens/s)";
  const std::vector<int> levels = Concurrencies(in);
  for (int level : levels) c.shapes.push_back(fmt::format("C = {}", level));
  std::vector<const ChartPoint*> held;  // the points with a TTFT p50
  std::vector<std::pair<double, double>> tps_ttft;
  for (const ChartPoint& p : in.points)
    if (p.ttft_p50_s) {
      held.push_back(&p);
      tps_ttft.push_back({p.input_tps, *p.ttft_p50_s});
    }
  const std::vector<bool> optimal = decide::ParetoOptimal(tps_ttft);
  for (size_t i = 0; i < held.size(); ++i) {
    const ChartPoint& p = *held[i];
    ScatterPoint s;
    s.x = *p.ttft_p50_s;
    s.y = p.input_tps;
    s.series = static_cast<int>(colors.Index(p.layout));
    s.shape =
        static_cast<int>(std::find(levels.begin(), levels.end(), p.concurrency) - levels.begin());
    s.emphasized = optimal[i];
    s.what = PointName(p);
    c.points.push_back(s);
  }
  c.series = colors.AsSeries();
  c.emphasis_legend = "Pareto-optimal (no point has more TPS at a lower TTFT)";
  return RenderScatterChart(c);
}

// Decode's trade-off: what a GPU serves against what one user sees.
std::string DecodeTradeoffChart(const ChartInputs& in, LayoutColors& colors) {
  ScatterChart c;
  c.id = kFigureDecodeTradeoff;
  c.title = in.measured ? "Output throughput per GPU against throughput per user (medians of "
                          "the repeats)"
                        : "Predicted output throughput per GPU against throughput per user";
  c.x_label = "throughput per user, 1 / TPOT p50 (tokens/s)";
  c.y_label = "output tokens/s per GPU";
  const std::vector<int> levels = Concurrencies(in);
  for (int level : levels) c.shapes.push_back(fmt::format("C = {}", level));
  for (const ChartPoint& p : in.points) {
    if (!p.output_tps_per_gpu || !p.output_tps_per_user) continue;
    ScatterPoint s;
    s.x = *p.output_tps_per_user;
    s.y = *p.output_tps_per_gpu;
    s.series = static_cast<int>(colors.Index(p.layout));
    s.shape =
        static_cast<int>(std::find(levels.begin(), levels.end(), p.concurrency) - levels.begin());
    s.emphasized = p.decode_pareto;
    s.what = PointName(p);
    c.points.push_back(s);
  }
  c.series = colors.AsSeries();
  c.emphasis_legend =
      "Pareto-optimal (no point has as many tokens/s per GPU and per user, and more of one)";
  c.x_decimals = 1;
  c.y_decimals = 1;
  return RenderScatterChart(c);
}

std::string MemoryChart(const ChartInputs& in) {
  BandChart c;
  c.id = kFigureMemory;
  c.title = in.measured ? "Peak GPU memory per layout and PP stage"
                        : "Predicted peak GPU memory per layout and PP stage";
  c.x_label = "layout (PP / TP / EP); one bar per PP stage, stage 0 first";
  c.y_label = "GPU memory (MiB)";
  c.value_decimals = 0;
  c.series = {{"peak used on the stage's GPUs", PaletteColor(0)},
              {"peak used (no per-stage data)", PaletteColor(4)}};
  for (const ChartMemory& m : in.memory) {
    Band b;
    b.label = Short(m.layout) + (m.imported ? " imp" : "");
    // A deployment's pools have stages of their own: its one peak is no stage's.
    const bool per_stage = !m.imported && !m.layout.disaggregated() &&
                           m.stage_peak_mib.size() == static_cast<size_t>(m.layout.pp);
    for (size_t s = 0; s < m.stage_peak_mib.size(); ++s) {
      Slot slot;
      slot.what = per_stage ? fmt::format("{} stage {}", m.layout.Label(), s)
                            : m.layout.Label() + (m.imported ? " (imported)" : "");
      slot.bars.push_back({per_stage ? 0 : 1, 0, m.stage_peak_mib[s], slot.what + " peak"});
      b.slots.push_back(std::move(slot));
    }
    c.bands.push_back(std::move(b));
  }
  if (in.gpu_total_mib) {
    c.lines.push_back({*in.gpu_total_mib, "GPU total", "#111"});
    if (in.min_headroom_mib > 0)
      c.lines.push_back({*in.gpu_total_mib - in.min_headroom_mib,
                         "GPU total minus the decision's minimum headroom", "#D55E00"});
  }
  return RenderBandChart(c);
}

std::string BreakdownChart(const analysis::RunPrediction& prediction) {
  BandChart c;
  c.id = kFigureBreakdown;
  c.title = "Predicted time per pipeline stage (share of the sample window)";
  c.x_label = "concurrency C, grouped by layout; one stacked bar per PP stage, stage 0 first";
  c.y_label = "share of the window (%)";
  c.value_decimals = 1;
  c.series = {{"compute", PaletteColor(0)},
              {"exposed TP communication", PaletteColor(1)},
              {"pipeline transfer", PaletteColor(2)},
              {"kernel gaps", PaletteColor(4)},
              {"bubble (idle)", "#c8c8c8"}};
  for (const analysis::PredictedPoint& p : prediction.points) {
    Band b;
    b.label = fmt::format("C={}", p.concurrency);
    b.group = p.layout.Label();
    for (size_t s = 0; s < p.stages.size(); ++s) {
      const predict::StageShare& sh = p.stages[s];
      Slot slot;
      slot.what = fmt::format("{} C={} stage {}", p.layout.Label(), p.concurrency, s);
      double y = 0;
      const double parts[] = {sh.compute, sh.exposed_comm, sh.transfer, sh.overhead, sh.idle};
      for (size_t k = 0; k < 5; ++k) {
        slot.bars.push_back(
            {static_cast<int>(k), y, y + parts[k] * 100, slot.what + " " + c.series[k].name});
        y += parts[k] * 100;
      }
      b.slots.push_back(std::move(slot));
    }
    c.bands.push_back(std::move(b));
  }
  return RenderBandChart(c);
}

}  // namespace

void MarkDecodePareto(std::vector<ChartPoint>& points) {
  // More per GPU and more per user: the rule's (more, less) pairs with per user negated.
  std::vector<std::pair<double, double>> per_gpu_tpot;
  std::vector<ChartPoint*> decode;
  for (ChartPoint& p : points)
    if (p.output_tps_per_gpu && p.output_tps_per_user) {
      per_gpu_tpot.push_back({*p.output_tps_per_gpu, -*p.output_tps_per_user});
      decode.push_back(&p);
    }
  const std::vector<bool> optimal = decide::ParetoOptimal(per_gpu_tpot);
  for (size_t i = 0; i < decode.size(); ++i) decode[i]->decode_pareto = optimal[i];
}

ChartInputs ChartInputsFromRun(const analysis::RunAnalysis& a,
                               const analysis::RunPrediction& prediction) {
  ChartInputs in;
  in.prediction = &prediction;
  if (a.evidence.trajectory) in.trajectory = &*a.evidence.trajectory;
  in.min_headroom_mib = a.spec().decision.min_headroom_mib;
  auto add = [&](const analysis::PointSummary& p) {
    if (!evidence::HasMedians(p)) return;  // no sample of it completed a request
    ChartPoint cp;
    cp.layout = p.layout;
    cp.concurrency = p.concurrency;
    cp.input_tps = p.median.input_tps;
    using F = stats::Figures;
    cp.ttft_p50_s = evidence::ValueOf(*evidence::ColumnOf(&F::ttft_p50_s), p);
    cp.ttft_p95_s = evidence::ValueOf(*evidence::ColumnOf(&F::ttft_p95_s), p);
    cp.baseline = p.is_baseline;
    cp.imported = p.imported;
    if (p.median.decode && p.median.output_tps_per_user > 0) {
      cp.output_tps_per_gpu = p.median.output_tps_per_gpu;
      cp.output_tps_per_user = p.median.output_tps_per_user;
    }
    if (!p.imported) {
      for (const analysis::SampleAnalysis& s : a.evidence.samples)
        if (s.completed() && s.measured_figures() && s.id.layout == p.layout &&
            s.id.concurrency == p.concurrency) {
          cp.input_tps_repeats.push_back(s.metrics.input_tps);
          if (s.Holds(&stats::Figures::ttft_p50_s))
            cp.ttft_p50_repeats.push_back(s.metrics.ttft_s.p50);
        }
      if (const analysis::PredictedPoint* pp = prediction.Find(p.layout, p.concurrency)) {
        cp.predicted_input_tps = pp->input_tps;
        cp.predicted_input_tps_interval = pp->input_tps_interval;
      }
    }
    in.points.push_back(std::move(cp));
  };
  // The order of the result table: imported baseline rows first.
  for (const auto& p : a.baseline_rows)
    if (p.imported) add(p);
  for (const auto& p : a.points) add(p);
  for (const analysis::LayoutMemory& m : a.memory) {
    if (!in.gpu_total_mib && m.gpu_total_mib) in.gpu_total_mib = m.gpu_total_mib;
    ChartMemory cm;
    cm.layout = m.layout;
    cm.imported = m.imported;
    for (const analysis::StagePeak& s : m.stages) cm.stage_peak_mib.push_back(s.peak_mib);
    if (cm.stage_peak_mib.empty() && m.peak_gpu_mib) cm.stage_peak_mib.push_back(*m.peak_gpu_mib);
    if (!cm.stage_peak_mib.empty()) in.memory.push_back(std::move(cm));
  }
  MarkDecodePareto(in.points);
  in.pools = PoolPoints(a);
  // Imported first, as in the memory table.
  std::stable_partition(in.memory.begin(), in.memory.end(),
                        [](const ChartMemory& m) { return m.imported; });
  return in;
}

std::map<std::string, std::string> RenderCharts(const ChartInputs& in) {
  std::map<std::string, std::string> out;
  LayoutColors colors;
  for (const ChartPoint& p : in.points) colors.Index(p.layout);
  if (!in.points.empty()) {
    out[kFigureInputTps] = InputTpsChart(in, colors);
    out[kFigureTtft] = TtftChart(in);
    out[kFigureTradeoff] = TradeoffChart(in, colors);
    if (std::any_of(in.points.begin(), in.points.end(),
                    [](const ChartPoint& p) { return p.output_tps_per_gpu.has_value(); }))
      out[kFigureDecodeTradeoff] = DecodeTradeoffChart(in, colors);
  }
  if (!in.memory.empty()) out[kFigureMemory] = MemoryChart(in);
  if (in.prediction && !in.prediction->points.empty())
    out[kFigureBreakdown] = BreakdownChart(*in.prediction);
  if (in.trajectory && (!in.trajectory->steps.empty() || in.trajectory->stop))
    out[kFigureTrajectory] = TrajectoryChart(*in.trajectory);
  if (!in.pools.empty()) {
    out[kFigurePoolTtft] = PoolTtftChart(in.pools);
    out[kFigurePoolLoad] = PoolLoadChart(in.pools);
  }
  return out;
}

}  // namespace ppsearch::report

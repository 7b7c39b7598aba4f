#include "analysis/points.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "evidence/point_columns.h"

namespace ppsearch::analysis {
namespace {

// A median over the repeats is known where every repeat holds the figure
// (SampleAnalysis::Holds): a sample synthesized from a CSV of medians
// reproduces only what the file holds.
void ForgetWhatSamplesDoNotHold(const std::vector<const SampleAnalysis*>& samples,
                                PointSummary& p) {
  for (const evidence::PointColumn& c : evidence::PointColumns()) {
    if (c.median == nullptr) continue;
    const bool held = std::all_of(samples.begin(), samples.end(),
                                  [&](const SampleAnalysis* s) { return s->Holds(c.median); });
    if (held) continue;
    if (p.held.empty()) p.held.assign(evidence::PointColumns().size(), true);
    p.held[evidence::IndexOf(c)] = false;
  }
}

PointSummary Summarize(const spec::LayoutSpec& layout, int concurrency,
                       const std::vector<const SampleAnalysis*>& samples) {
  PointSummary p;
  p.layout = layout;
  p.concurrency = concurrency;
  p.repeats = static_cast<int>(samples.size());
  p.requests_completed = samples.empty() ? 0 : samples[0]->metrics.requests_completed;
  for (const SampleAnalysis* s : samples) {
    if (s->valid()) ++p.valid_repeats;
    p.requests_completed = std::min(p.requests_completed, s->metrics.requests_completed);
    p.requests_total = std::max(p.requests_total, s->requests_total());
    if (s->peak_gpu_mib && (!p.peak_gpu_mib || *s->peak_gpu_mib > *p.peak_gpu_mib)) {
      p.peak_gpu_mib = s->peak_gpu_mib;
      p.gpu_total_mib = s->gpu_total_mib;
    }
    if (s->headroom_mib && (!p.headroom_mib || *s->headroom_mib < *p.headroom_mib))
      p.headroom_mib = s->headroom_mib;
  }
  // Each figure's median over the repeats that measured it (input TPS and
  // TTFT p50 with their spreads); the derived ones from the medians. A
  // repeat in which no request completed measured none, and one that could
  // not tell a figure (FigureField::zero_unknown) is left out of its median.
  std::vector<stats::Figures> figures;
  for (const SampleAnalysis* s : samples)
    if (s->measured_figures()) figures.push_back(stats::FiguresOf(s->metrics, layout.gpus()));
  if (figures.empty()) {
    evidence::ForgetMedians(p);
    return p;
  }
  for (const stats::FigureField& field : stats::FigureFields()) {
    if (field.derived) continue;
    std::vector<double> values;
    for (const stats::Figures& f : figures)
      if (!field.zero_unknown || f.*field.member != 0) values.push_back(f.*field.member);
    p.median.*field.member = values.empty() ? 0 : stats::Median(values);
    if (field.member == &stats::Figures::input_tps) p.input_tps_spread = stats::Spread(values);
    if (field.member == &stats::Figures::ttft_p50_s) p.ttft_p50_s_spread = stats::Spread(values);
  }
  p.median.decode =
      std::any_of(figures.begin(), figures.end(), [](const stats::Figures& f) { return f.decode; });
  stats::Derive(p.median, layout.gpus());
  if (figures.size() < 2) evidence::ForgetSpreads(p);
  ForgetWhatSamplesDoNotHold(samples, p);
  return p;
}

}  // namespace

double stats::Figures::*SlaMember(decide::SlaMetric m) {
  using F = stats::Figures;
  switch (m) {
    case decide::SlaMetric::kTtft:
      return &F::ttft_p99_s;
    case decide::SlaMetric::kTpot:
      return &F::tpot_p99_s;
    case decide::SlaMetric::kItl:
      return &F::itl_p99_s;
    case decide::SlaMetric::kE2e:
      break;
  }
  return &F::e2e_p99_s;
}

std::string WhyUnknown(const PointSummary& p, double stats::Figures::*member) {
  const evidence::PointColumn& c = *evidence::ColumnOf(member);
  return !p.held.empty() && !p.held[evidence::IndexOf(c)]
             ? "samples replayed from a file of medians do not reproduce it"
             : "no request generated a second token";
}

std::vector<std::string> DecisionFiguresNotHeld(const spec::Spec& spec,
                                                const std::vector<std::string>& held,
                                                const std::string& source) {
  const auto holds = [&](double stats::Figures::*member) {
    const std::string name = stats::FieldOf(member)->name;
    return std::find(held.begin(), held.end(), name) != held.end();
  };
  std::string list;
  for (const std::string& h : held) list += (list.empty() ? "" : ", ") + h;
  std::vector<std::string> out;
  const decide::Objective& objective = spec.decision.objective;
  if (!holds(evidence::ObjectiveMember(objective)))
    out.push_back(fmt::format(
        "{}: objective {} ranks by {}, which no row of {} holds (its replayed samples hold {} "
        "at most), so no layout could be ranked",
        spec.Origin("decision.objective").Where(), objective.name(), objective.label(), source,
        list));
  for (decide::SlaMetric m : decide::kSlaMetrics)
    if (spec.decision.sla[m] && !holds(SlaMember(m)))
      out.push_back(fmt::format(
          "{}: a limit on {} cannot be judged on {}, whose replayed samples hold {} at most",
          spec.Origin(std::string("decision.") + decide::Info(m).key).Where(),
          decide::Info(m).label, source, list));
  return out;
}

decide::SlaValues SlaFigures(const PointSummary& p) {
  decide::SlaValues v;
  for (decide::SlaMetric m : decide::kSlaMetrics)
    v[m] = evidence::ValueOf(*evidence::ColumnOf(SlaMember(m)), p);
  return v;
}

std::vector<PointSummary> AggregatePoints(const std::vector<SampleAnalysis>& samples,
                                          const std::vector<spec::LayoutSpec>& layouts,
                                          const std::vector<int>& concurrency) {
  std::vector<PointSummary> out;
  for (const spec::LayoutSpec& layout : layouts) {
    for (int c : concurrency) {
      std::vector<const SampleAnalysis*> point;
      for (const SampleAnalysis& s : samples)
        if (s.completed() && s.trustworthy() && s.id.layout == layout && s.id.concurrency == c)
          point.push_back(&s);
      if (!point.empty()) out.push_back(Summarize(layout, c, point));
    }
  }
  return out;
}

void ApplyBaseline(std::vector<PointSummary>& points,
                   const std::vector<PointSummary>& baseline_rows,
                   const spec::LayoutSpec& baseline) {
  const bool imported = std::any_of(baseline_rows.begin(), baseline_rows.end(),
                                    [](const PointSummary& b) { return b.imported; });
  for (PointSummary& p : points) {
    if (p.layout == baseline && p.imported == imported) {
      p.is_baseline = true;
      continue;
    }
    if (!evidence::HasMedians(p)) continue;
    for (const PointSummary& b : baseline_rows) {
      if (!(b.layout == baseline) || b.concurrency != p.concurrency || !evidence::HasMedians(b))
        continue;
      if (b.median.input_tps > 0)
        p.input_tps_vs_baseline = p.median.input_tps / b.median.input_tps - 1;
      if (b.median.ttft_p50_s > 0)
        p.ttft_p50_vs_baseline = p.median.ttft_p50_s / b.median.ttft_p50_s - 1;
    }
  }
}

LayoutMemory AnalyseLayoutMemory(const spec::LayoutSpec& layout,
                                 const std::vector<SampleAnalysis>& samples,
                                 const plan::LayoutPlan* plan) {
  LayoutMemory m;
  m.layout = layout;
  std::map<int, double> stage_peak;
  if (plan != nullptr)
    for (const plan::TpGroup& g : plan->tp_groups) stage_peak[g.pp_rank] = 0;
  auto stage_of = [&](const GpuPeak& g) -> int {
    if (plan == nullptr) return -1;
    for (const plan::RankPlacement& r : plan->ranks)
      if (r.node == g.node && r.local_gpu == g.local_gpu) return r.pp_rank;
    return -1;
  };
  for (const SampleAnalysis& s : samples) {
    if (!(s.id.layout == layout) || !s.completed()) continue;
    for (const GpuPeak& g : s.gpus) {
      const int stage = stage_of(g);
      if (stage >= 0) stage_peak[stage] = std::max(stage_peak[stage], g.used_mib);
      if (!m.peak_gpu_mib || g.used_mib > *m.peak_gpu_mib) {
        m.peak_gpu_mib = g.used_mib;
        m.gpu_total_mib = g.total_mib;
        m.peak_where = fmt::format("host {} GPU {}", g.host, g.local_gpu);
        if (stage >= 0) m.peak_where += fmt::format(" (stage {})", stage);
      }
      if (g.total_mib > 0 && (!m.headroom_mib || g.total_mib - g.used_mib < *m.headroom_mib))
        m.headroom_mib = g.total_mib - g.used_mib;
    }
  }
  if (m.peak_gpu_mib && m.gpu_total_mib && *m.gpu_total_mib > 0)
    m.remaining_mib = *m.gpu_total_mib - *m.peak_gpu_mib;
  bool any_stage_seen = false;
  for (const auto& [stage, peak] : stage_peak) {
    m.stages.push_back({stage, peak});
    any_stage_seen |= peak > 0;
  }
  if (!any_stage_seen) {
    m.stages.clear();
  } else {
    auto [lo, hi] = std::minmax_element(
        m.stages.begin(), m.stages.end(),
        [](const StagePeak& a, const StagePeak& b) { return a.peak_mib < b.peak_mib; });
    m.stage_spread_mib = hi->peak_mib - lo->peak_mib;
  }
  return m;
}

}  // namespace ppsearch::analysis

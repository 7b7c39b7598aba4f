#include "analysis/decision.h"

#include <fmt/format.h>

#include <algorithm>

#include "analysis/repeat_spread.h"
#include "decide/objective.h"
#include "decide/rules.h"
#include "evidence/point_columns.h"
#include "util/format.h"

namespace ppsearch::analysis {
namespace {

std::string Mib(double v) {
  return FormatThousands(static_cast<int64_t>(std::llround(v))) + " MiB";
}

const PointSummary* FindPoint(const std::vector<PointSummary>& points, const spec::LayoutSpec& l,
                              int c) {
  for (const PointSummary& p : points)
    if (!p.imported && p.layout == l && p.concurrency == c) return &p;
  return nullptr;
}

const SampleAnalysis* FindSample(const std::vector<SampleAnalysis>& samples,
                                 const evidence::SampleId& id) {
  for (const SampleAnalysis& s : samples)
    if (s.id == id) return &s;
  return nullptr;
}

const LayoutMemory* FindMemory(const std::vector<LayoutMemory>& memory, const spec::LayoutSpec& l) {
  for (const LayoutMemory& m : memory)
    if (!m.imported && m.layout == l) return &m;
  return nullptr;
}

// Why each sample of the layout does not count, and the findings to keep;
// false when no sample of it ran at all.
bool AuditSamples(const spec::Spec& spec, const std::vector<SampleAnalysis>& samples,
                  LayoutVerdict& v) {
  const std::string label = v.layout.Label();
  const bool exclude_findings = spec.decision.failure_policy != "warn";
  // A layout none of whose samples ran (an adaptive run that did not need
  // it, an interrupted sweep) is one line, not one per sample.
  const bool any_ran = std::any_of(samples.begin(), samples.end(), [&](const SampleAnalysis& s) {
    return s.id.layout == v.layout;
  });
  if (!any_ran) {
    v.exclusions.push_back(fmt::format("{}: not measured (no sample of it ran)", label));
    return false;
  }
  for (int c : spec.sweep.concurrency) {
    for (int r = 1; r <= spec.sweep.repeats; ++r) {
      evidence::SampleId id{v.layout, c, r};
      const SampleAnalysis* s = FindSample(samples, id);
      if (s == nullptr) {
        v.exclusions.push_back(fmt::format("{}: sample {} was not run", label, id.str()));
        continue;
      }
      const bool engine_failed =
          s->engine_verdict == s->verdict && evidence::IsEngineVerdict(s->verdict);
      if (!s->completed()) {
        v.exclusions.push_back(fmt::format(
            "{}: sample {} {} (manifest){}", label, s->name, evidence::SampleStateName(s->state),
            engine_failed ? std::string(": ") + evidence::VerdictName(s->verdict) + ": " + s->detail
                          : std::string()));
      } else if (engine_failed) {
        v.exclusions.push_back(fmt::format("{}: sample {} {}: {}", label, s->name,
                                           evidence::VerdictName(s->verdict), s->detail));
      } else if (s->trustworthy() && !s->all_requests_ok()) {  // else its problems say why
        std::string errors = s->metrics.request_errors > 0
                                 ? fmt::format(" ({} request errors)", s->metrics.request_errors)
                                 : "";
        v.exclusions.push_back(fmt::format("{}: sample {} completed {}/{} requests{}", label,
                                           s->name, s->metrics.requests_completed,
                                           s->requests_total(), errors));
      }
      for (const std::string& problem : s->problems)
        v.exclusions.push_back(fmt::format("{}: sample {}: {}", label, s->name, problem));
      if (const LogFinding* f = MostSevere(s->findings)) {
        std::string text = fmt::format("{}: {} in {}", label, FindingKindName(f->kind), f->Where());
        (exclude_findings ? v.exclusions : v.notes).push_back(text);
      }
      if (s->completed() && !engine_failed && s->trustworthy() && s->all_requests_ok() &&
          !s->passes_validity_gate())
        v.exclusions.push_back(fmt::format(
            "{}: sample {} did not measure the intended workload: {}", label, s->name, s->detail));
    }
  }
  return true;
}

// Every SLA limit at every level, on the point's medians of repeat p99s,
// and the objective ranked by: a figure not measured is not passed.
void CheckSlaLimits(const spec::Spec& spec, const std::vector<PointSummary>& points,
                    LayoutVerdict& v) {
  const std::string label = v.layout.Label();
  for (int c : spec.sweep.concurrency) {
    const PointSummary* p = FindPoint(points, v.layout, c);
    // Already excluded: no completed sample, or none completed a request.
    if (p == nullptr || !evidence::HasMedians(*p)) continue;
    const decide::SlaCheck check = decide::CheckSla(spec.decision.sla, SlaFigures(*p));
    for (const decide::SlaMiss& miss : check.misses) {
      v.sla_misses.push_back({c, miss});
      v.exclusions.push_back(
          fmt::format("{}: misses the SLA at C={}: {}", label, c, decide::MissText(miss)));
    }
    for (decide::SlaMetric m : check.unchecked)
      v.exclusions.push_back(
          fmt::format("{}: no {} was measured at C={} ({}), so {} cannot be checked", label,
                      decide::Info(m).label, c, WhyUnknown(*p, SlaMember(m)), decide::Info(m).key));
    const decide::Objective& objective = spec.decision.objective;
    if (!evidence::ObjectiveValue(objective, *p))
      v.exclusions.push_back(
          fmt::format("{}: no {} was measured at C={} ({}), so it cannot be ranked by objective {}",
                      label, objective.label(), c,
                      WhyUnknown(*p, evidence::ObjectiveMember(objective)), objective.name()));
  }
}

void CheckKeepsUp(const spec::Spec& spec, const std::vector<PointSummary>& points,
                  LayoutVerdict& v) {
  for (int c : spec.sweep.concurrency)
    if (const PointSummary* p = FindPoint(points, v.layout, c))
      if (std::string why = FellBehind(spec, *p); !why.empty())
        v.exclusions.push_back(v.layout.Label() + ": " + why);
}

void CheckSpreadAndHeadroom(const spec::Spec& spec, const std::vector<PointSummary>& points,
                            const LayoutMemory* memory, LayoutVerdict& v) {
  const std::string label = v.layout.Label();
  for (int c : spec.sweep.concurrency) {
    const PointSummary* p = FindPoint(points, v.layout, c);
    if (p == nullptr) {
      v.exclusions.push_back(fmt::format("{}: no completed sample at C={}", label, c));
      continue;
    }
    const std::optional<double> spread = JudgedRepeatSpread(spec, *p);
    if (spread && *spread > spec.decision.max_repeat_spread)
      v.exclusions.push_back(fmt::format(
          "{}: input TPS varies by {} across repeats at C={} (max_repeat_spread {})", label,
          FormatPercent(*spread), c, FormatPercent(spec.decision.max_repeat_spread)));
  }
  CheckKeepsUp(spec, points, v);
  CheckSlaLimits(spec, points, v);
  v.headroom_mib = memory != nullptr ? memory->headroom_mib : std::nullopt;
  if (!v.headroom_mib) {
    if (spec.decision.min_headroom_mib > 0)
      v.exclusions.push_back(
          fmt::format("{}: no GPU memory snapshot, so its headroom cannot be checked against {}",
                      label, Mib(spec.decision.min_headroom_mib)));
  } else if (!decide::MeetsHeadroom(*v.headroom_mib, spec.decision.min_headroom_mib)) {
    v.exclusions.push_back(
        fmt::format("{}: worst-rank headroom {} at {} is below min_headroom_mib {}", label,
                    Mib(*v.headroom_mib), memory->peak_where, Mib(spec.decision.min_headroom_mib)));
  }
}

void Score(const spec::Spec& spec, const std::vector<PointSummary>& points,
           std::vector<LayoutVerdict>& verdicts) {
  const decide::Objective& objective = spec.decision.objective;
  std::vector<std::vector<double>> values;
  for (const LayoutVerdict& v : verdicts) {
    if (!v.qualifies) continue;
    values.emplace_back();
    for (int c : spec.sweep.concurrency)
      values.back().push_back(
          objective.Of(evidence::ObjectiveMedians(*FindPoint(points, v.layout, c))));
  }
  const std::vector<double> scores = decide::RelativeScores(values, objective.lower_is_better());
  size_t i = 0;
  for (LayoutVerdict& v : verdicts)
    if (v.qualifies) v.score = scores[i++];
}

// "+12.34% vs PP1 at C=8 and +11.00% at C=16".
std::string BaselineDeltas(const spec::Spec& spec, const std::vector<PointSummary>& points,
                           const spec::LayoutSpec& layout, const decide::Objective& objective) {
  if (!spec.baseline.layout) return "";
  std::vector<std::string> parts;
  for (int c : spec.sweep.concurrency) {
    const PointSummary* p = FindPoint(points, layout, c);
    if (p == nullptr) continue;
    // The baseline deltas are of input TPS and TTFT p50 only.
    const std::optional<double> d = objective.Of(evidence::ObjectiveVsBaseline(*p));
    if (!d) continue;
    parts.push_back(fmt::format(
        "{} {}at C={}", FormatSignedPercent(*d),
        parts.empty() ? "vs PP" + std::to_string(spec.baseline.layout->pp) + " " : "", c));
  }
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i)
    out += (i == 0 ? "" : i + 1 == parts.size() ? " and " : ", ") + parts[i];
  return out;
}

std::string PrimaryReason(const spec::Spec& spec, const std::vector<PointSummary>& points,
                          const std::vector<LayoutVerdict>& ranked,
                          const decide::Objective& objective) {
  const LayoutVerdict& best = ranked[0];
  std::string reason = ranked.size() == 1 ? "the only layout that qualifies; " : "";
  reason += objective.lower_is_better() ? "best (lowest) " + objective.label()
                                        : "best " + objective.label();
  const std::string deltas = BaselineDeltas(spec, points, best.layout, objective);
  if (!deltas.empty()) reason += " (" + deltas + ")";
  if (!best.headroom_mib) return reason;
  // Compared with the other qualifying layouts' worst-rank headroom.
  const LayoutVerdict* roomiest = nullptr;
  for (size_t i = 1; i < ranked.size(); ++i)
    if (ranked[i].headroom_mib &&
        (roomiest == nullptr || *ranked[i].headroom_mib > *roomiest->headroom_mib))
      roomiest = &ranked[i];
  const std::string mine = Mib(*best.headroom_mib);
  if (roomiest == nullptr)
    reason += " with worst-rank headroom " + mine;
  else if (*best.headroom_mib > *roomiest->headroom_mib)
    reason += " and best worst-rank headroom (" + mine + ")";
  else if (*best.headroom_mib == *roomiest->headroom_mib)
    reason += " and worst-rank headroom " + mine + " (tied for best)";
  else
    reason += " with worst-rank headroom " + mine + " (" + roomiest->layout.Label() + " keeps " +
              Mib(*roomiest->headroom_mib) + ")";
  return reason;
}

std::string FallbackReason(const spec::Spec& spec, const std::vector<PointSummary>& points,
                           const std::vector<LayoutVerdict>& ranked,
                           const decide::Objective& objective) {
  const LayoutVerdict& primary = ranked[0];
  const LayoutVerdict& fb = ranked[1];
  std::string reason =
      fmt::format("runner-up: {} {} than {} (geometric mean over the concurrency levels)",
                  FormatPercent(std::abs(1 - fb.score / primary.score)),
                  (objective.lower_is_better() ? "higher " : "less ") + objective.label(),
                  primary.layout.Label());
  const std::string deltas = BaselineDeltas(spec, points, fb.layout, objective);
  if (!deltas.empty()) reason += ", " + deltas;
  if (fb.headroom_mib) reason += ", worst-rank headroom " + Mib(*fb.headroom_mib);
  if (fb.layout.pp != primary.layout.pp || fb.layout.tp != primary.layout.tp)
    reason += fmt::format(
        "; a different PP/TP shape (PP{}/TP{}), so a problem specific to {} "
        "does not take both down",
        fb.layout.pp, fb.layout.tp, primary.layout.Label());
  return reason;
}

}  // namespace

std::string FellBehind(const spec::Spec& spec, const PointSummary& p) {
  const double rate = spec.workload.request_rate;
  if (!(rate > 0) || !evidence::HasMedians(p) || p.requests_total <= 0) return "";
  const std::optional<double> e2e =
      evidence::ValueOf(*evidence::ColumnOf(&stats::Figures::e2e_p50_s), p);
  if (!e2e) return "";
  const decide::OpenLoopSample s{.rate = rate,
                                 .cap = p.concurrency,
                                 .requests = static_cast<double>(p.requests_total),
                                 .request_rps = p.median.request_rps,
                                 .e2e_p50_s = *e2e,
                                 .first_token_pace = p.median.first_token_pace};
  switch (decide::HowBehind(s)) {
    case decide::Behind::kNo:
      return "";
    case decide::Behind::kFillsTheCap:
      return fmt::format(
          "fell behind the offered {} requests/s at C<={}: {} requests in flight at an "
          "end-to-end p50 of {} s complete at most {} requests/s (it completed {}); its requests "
          "waited for a free slot, which its latencies do not count",
          FormatNumber(rate, 2), p.concurrency, p.concurrency, FormatNumber(*e2e, 2),
          FormatNumber(decide::CapRps(p.concurrency, *e2e), 2),
          FormatNumber(p.median.request_rps, 2));
    case decide::Behind::kCompletedTooFew:
      return fmt::format(
          "fell behind the offered {} requests/s at C<={}: it completed {} requests/s, where "
          "keeping up completes about {} ({} requests over their sends and an end-to-end p50 of "
          "{} s); {}",
          FormatNumber(rate, 2), p.concurrency, FormatNumber(p.median.request_rps, 2),
          FormatNumber(decide::KeepingUpRps(rate, s.requests, *e2e), 2),
          FormatThousands(p.requests_total), FormatNumber(*e2e, 2),
          // Only a sample larger than the cap has requests waiting for a slot.
          p.concurrency > 0 && p.requests_total > p.concurrency
              ? "its requests waited for a free slot, which its latencies do not count"
              : "its requests queued in the server");
    case decide::Behind::kQueuedInTheServer:
      break;
  }
  return fmt::format(
      "fell behind the offered {} requests/s{}: its requests queued in the server, the first "
      "tokens of the middle half of the sample coming at a pace of {} of the sends' (keeping up "
      "is at least {} with {} requests); its TTFT grew with the queue",
      FormatNumber(rate, 2), p.concurrency > 0 ? fmt::format(" at C<={}", p.concurrency) : "",
      FormatNumber(s.first_token_pace, 2), FormatNumber(decide::KeepingUpPace(s.requests), 2),
      FormatThousands(p.requests_total));
}

Decision Decide(const spec::Spec& spec, const std::vector<SampleAnalysis>& samples,
                const std::vector<PointSummary>& points, const std::vector<LayoutMemory>& memory,
                const std::vector<std::string>& flag_warnings) {
  Decision d;
  d.objective = spec.decision.objective;
  d.flags_not_to_carry_forward = flag_warnings;
  d.sla = spec.decision.sla;
  for (const spec::LayoutSpec& layout : spec.sweep.layouts) {
    LayoutVerdict v;
    v.layout = layout;
    // A layout that never ran has nothing for the other checks to judge.
    if (AuditSamples(spec, samples, v))
      CheckSpreadAndHeadroom(spec, points, FindMemory(memory, layout), v);
    v.qualifies = v.exclusions.empty();
    d.verdicts.push_back(v);
  }
  Score(spec, points, d.verdicts);
  std::vector<LayoutVerdict> ranked;
  for (const LayoutVerdict& v : d.verdicts)
    if (v.qualifies) ranked.push_back(v);
  std::stable_sort(ranked.begin(), ranked.end(),
                   [](const LayoutVerdict& a, const LayoutVerdict& b) {
                     if (a.score != b.score) return a.score > b.score;
                     return a.headroom_mib.value_or(0) > b.headroom_mib.value_or(0);
                   });
  if (ranked.empty()) {
    d.none_reason =
        d.verdicts.empty() ? "the sweep holds no layout" : "no layout meets the decision policy";
    return d;
  }
  d.primary = ranked[0].layout;
  d.primary_reason = PrimaryReason(spec, points, ranked, d.objective);
  if (ranked.size() > 1) {
    d.fallback = ranked[1].layout;
    d.fallback_reason = FallbackReason(spec, points, ranked, d.objective);
  }
  return d;
}

}  // namespace ppsearch::analysis

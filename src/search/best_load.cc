#include "search/best_load.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "decide/objective.h"
#include "decide/rules.h"
#include "util/format.h"

namespace ppsearch::search {

std::optional<LoadPoint> Between(const LoadPoint& meets, const LoadPoint& misses) {
  LoadPoint mid = meets;
  if (meets.open()) {
    if (misses.request_rate - meets.request_rate <= kRateResolution * meets.request_rate)
      return std::nullopt;
    mid.request_rate = (meets.request_rate + misses.request_rate) / 2;
    return mid;
  }
  if (misses.concurrency - meets.concurrency <= 1) return std::nullopt;
  mid.concurrency = (meets.concurrency + misses.concurrency) / 2;
  return mid;
}

bool LighterThan(const LoadPoint& a, const LoadPoint& b) {
  if (a.request_rate != b.request_rate) return a.request_rate < b.request_rate;
  return a.concurrency < b.concurrency;
}

namespace {

decide::OpenLoopSample OpenLoopSampleOf(const PointFigures& f) {
  return {.rate = f.load.request_rate,
          .cap = f.load.concurrency,
          .requests = static_cast<double>(f.requests),
          .request_rps = f.request_rps,
          .e2e_p50_s = f.e2e_p50_s,
          .first_token_pace = f.first_token_pace};
}

}  // namespace

bool KeepsUpAt(const PointFigures& f) {
  // A point that sent nothing has nothing to judge.
  return !f.load.open() || f.requests <= 0 || decide::KeepsUp(OpenLoopSampleOf(f));
}

std::string FellBehindText(const PointFigures& f) {
  const decide::OpenLoopSample s = OpenLoopSampleOf(f);
  switch (decide::HowBehind(s)) {
    case decide::Behind::kFillsTheCap:
      return fmt::format(
          "fell behind: {} requests in flight at an end-to-end p50 of {} s complete at most {} of "
          "the offered {} requests/s",
          f.load.concurrency, FormatNumber(f.e2e_p50_s, 2),
          FormatNumber(decide::CapRps(s.cap, s.e2e_p50_s), 2), FormatNumber(s.rate, 2));
    case decide::Behind::kCompletedTooFew:
      return fmt::format(
          "fell behind: it completed {} of the offered {} requests/s, where keeping up completes "
          "about {}",
          FormatNumber(f.request_rps, 2), FormatNumber(s.rate, 2),
          FormatNumber(decide::KeepingUpRps(s.rate, s.requests, s.e2e_p50_s), 2));
    case decide::Behind::kQueuedInTheServer:
    case decide::Behind::kNo:
      break;
  }
  return fmt::format(
      "fell behind: requests queued in the server, its first tokens coming at about {} of the "
      "offered {} requests/s (a first-token pace of {}, where keeping up is at least {})",
      FormatNumber(s.first_token_pace * s.rate, 2), FormatNumber(s.rate, 2),
      FormatNumber(s.first_token_pace, 2), FormatNumber(decide::KeepingUpPace(s.requests), 2));
}

bool MeetsSlaAt(const decide::SlaLimits& limits, const PointFigures& f) {
  return decide::CheckSla(limits, f.sla).meets() && KeepsUpAt(f);
}

double ObjectiveAt(const PointFigures& f, const decide::Objective& objective) {
  return objective.Of(decide::ObjectiveFigures{f.input_tps, f.ttft_p50_s, f.output_tps,
                                               f.output_tps_per_gpu, f.goodput_rps});
}

Bisection BisectLoad(const decide::SlaLimits& limits, const PointFigures& meets,
                     const PointFigures& misses,
                     const std::function<PointFigures(const LoadPoint&)>& predict) {
  Bisection b{meets.load, misses.load, {}};
  while (const std::optional<LoadPoint> mid = Between(b.meets, b.misses)) {
    b.probed.push_back(predict(*mid));
    b.probed.back().load = *mid;
    b.probed.back().probed = true;
    b.probed.back().meets_sla = MeetsSlaAt(limits, b.probed.back());
    (b.probed.back().meets_sla ? b.meets : b.misses) = *mid;
  }
  return b;
}

std::string NoPredictionReason(const PointFigures& f, const decide::SlaLimits& limits,
                               const decide::Objective& objective, bool decode) {
  if (f.requests_completed == 0)
    return fmt::format("no simulated request completed at {} (of {} sent)", f.load.Label(),
                       f.requests);
  for (decide::SlaMetric m : decide::kSlaMetrics)
    if (limits[m] && !f.sla[m] && (decode || !decide::Info(m).decode))
      return fmt::format("no predicted {} at {} for {}", decide::Info(m).label, f.load.Label(),
                         decide::Info(m).key);
  if (!objective.may_be_zero() && !(ObjectiveAt(f, objective) > 0))
    return fmt::format("no predicted {} at {}", objective.label(), f.load.Label());
  return "";
}

namespace {

// Every point of a candidate, listed and probed, lightest first.
std::vector<const PointFigures*> ByLoad(const Evaluated& e) {
  std::vector<const PointFigures*> out;
  for (const PointFigures& f : e.points) out.push_back(&f);
  for (const PointFigures& f : e.probed) out.push_back(&f);
  std::stable_sort(out.begin(), out.end(), [](const PointFigures* a, const PointFigures* b) {
    return LighterThan(a->load, b->load);
  });
  return out;
}

// The lightest load of `points` its layout fell behind at; none when it
// kept up at every one. Keeping up is taken to fall with the rate, so a
// heavier rate that looked kept up (a small sample answered in one prefill
// batch) is no best load.
std::optional<LoadPoint> LightestBehind(const std::vector<const PointFigures*>& points) {
  std::optional<LoadPoint> out;
  for (const PointFigures* g : points)
    if (!KeepsUpAt(*g) && (!out || LighterThan(g->load, *out))) out = g->load;
  return out;
}

// Whether `f` meets the limits below the lightest load its layout fell
// behind at.
bool MeetsBelow(const decide::SlaLimits& limits, const PointFigures& f,
                const std::optional<LoadPoint>& behind) {
  return MeetsSlaAt(limits, f) && (!behind || LighterThan(f.load, *behind));
}

// The point meeting the limits with the best objective (on a tie the
// lighter load: a saturated layout gives no more for the longer queue);
// none when no point meets them.
std::optional<PointFigures> BestMeeting(const Evaluated& e, const decide::SlaLimits& limits,
                                        const decide::Objective& objective) {
  const PointFigures* best = nullptr;
  const std::vector<const PointFigures*> points = ByLoad(e);
  const std::optional<LoadPoint> behind = LightestBehind(points);
  for (const PointFigures* f : points)
    if (MeetsBelow(limits, *f, behind) &&
        (best == nullptr ||
         objective.Beats(ObjectiveAt(*f, objective), ObjectiveAt(*best, objective))))
      best = f;
  return best ? std::optional<PointFigures>(*best) : std::nullopt;
}

// The bracket bisection refines: the heaviest listed load meeting the
// limits and the lightest listed load above it, which misses one.
struct Bracket {
  const PointFigures* meets = nullptr;
  const PointFigures* misses = nullptr;
};

std::optional<Bracket> BracketOf(const Evaluated& e, const decide::SlaLimits& limits) {
  std::vector<const PointFigures*> listed;
  for (const PointFigures& f : e.points) listed.push_back(&f);
  std::stable_sort(listed.begin(), listed.end(), [](const PointFigures* a, const PointFigures* b) {
    return LighterThan(a->load, b->load);
  });
  Bracket b;
  const std::optional<LoadPoint> behind = LightestBehind(listed);
  for (const PointFigures* f : listed)
    if (MeetsBelow(limits, *f, behind)) b.meets = f;
  if (b.meets == nullptr) return std::nullopt;
  for (const PointFigures* f : listed)
    if (LighterThan(b.meets->load, f->load)) {
      b.misses = f;
      break;
    }
  if (b.misses == nullptr || !Between(b.meets->load, b.misses->load)) return std::nullopt;
  return b;
}

// The limit that binds next at `at` (see Binding).
std::optional<Binding> BindsNext(const Evaluated& e, const PointFigures& at,
                                 const decide::SlaLimits& limits) {
  if (!limits.any()) return std::nullopt;
  for (const PointFigures* f : ByLoad(e)) {
    if (!LighterThan(at.load, f->load)) continue;
    const decide::SlaCheck check = decide::CheckSla(limits, f->sla);
    if (check.meets()) {
      if (KeepsUpAt(*f)) continue;
      Binding behind{decide::SlaMetric::kTtft, 0, f->load};
      behind.keeping_up = true;
      return behind;
    }
    const decide::SlaMiss* worst = &check.misses.front();
    for (const decide::SlaMiss& m : check.misses)
      if (m.over() > worst->over()) worst = &m;
    const std::optional<double>& here = at.sla[worst->metric];
    return Binding{worst->metric, here ? *here / worst->limit_s : 0, f->load};
  }
  std::optional<Binding> closest;
  for (decide::SlaMetric m : decide::kSlaMetrics)
    if (limits[m] && at.sla[m] && (!closest || *at.sla[m] / *limits[m] > closest->use))
      closest = Binding{m, *at.sla[m] / *limits[m], std::nullopt};
  return closest;
}

// Says how a candidate that meets the limits nowhere misses them: the first
// miss at its lightest load, and the least any of its loads is over (a
// load it fell behind at is over by decide::BehindBy).
void SayMiss(Evaluated& e, const decide::SlaLimits& limits) {
  e.meets_sla = false;
  e.sla_shortfall = INFINITY;
  for (const PointFigures* f : ByLoad(e)) {
    const decide::SlaCheck check = decide::CheckSla(limits, f->sla);
    double over = 0;
    for (const decide::SlaMiss& m : check.misses) over = std::max(over, m.over());
    if (!KeepsUpAt(*f)) {
      over = std::max(over, decide::BehindBy(OpenLoopSampleOf(*f)));
    } else if (check.meets()) {
      continue;
    }
    if (e.sla_miss.empty()) {
      e.sla_miss =
          fmt::format("{}: {}", f->load.Label(),
                      check.meets() ? FellBehindText(*f) : decide::MissText(check.misses.front()));
      e.sla_missed_key =
          check.meets() ? kKeepingUpKey : decide::Info(check.misses.front().metric).key;
    }
    e.sla_shortfall = std::min(e.sla_shortfall, over);
  }
}

}  // namespace

int FindBestLoads(std::vector<Evaluated>& candidates, const decide::SlaLimits& limits,
                  const decide::Objective& objective, bool screen,
                  const std::function<PointFigures(size_t, const LoadPoint&)>& predict) {
  bool open = false;
  for (const Evaluated& e : candidates)
    for (const PointFigures& f : e.points) open = open || f.load.open();
  const bool refine = (limits.any() || open) && !objective.lower_is_better();
  // The best objective at the best load of any candidate within the headroom so far.
  std::optional<double> best;
  struct Gap {
    size_t candidate;
    double could_reach;  // the objective at the listed load that misses
  };
  std::vector<Gap> gaps;
  for (size_t i = 0; i < candidates.size(); ++i) {
    Evaluated& e = candidates[i];
    for (PointFigures& f : e.points) f.meets_sla = MeetsSlaAt(limits, f);
    e.at = BestMeeting(e, limits, objective);
    if (!e.meets_headroom) continue;  // it does not qualify: it sets no bar and is not refined
    if (e.at && (!best || objective.Beats(ObjectiveAt(*e.at, objective), *best)))
      best = ObjectiveAt(*e.at, objective);
    if (!refine) continue;
    if (const std::optional<Bracket> b = BracketOf(e, limits))
      gaps.push_back({i, ObjectiveAt(*b->misses, objective)});
  }
  std::stable_sort(gaps.begin(), gaps.end(),
                   [](const Gap& a, const Gap& b) { return a.could_reach > b.could_reach; });
  int probes = 0;
  for (const Gap& g : gaps) {
    // Under the assumption that the objective grows with the load, no load
    // below the missing one can beat the best found: it keeps its listed load.
    if (screen && best && !(g.could_reach > *best)) continue;
    Evaluated& e = candidates[g.candidate];
    const Bracket b = *BracketOf(e, limits);
    Bisection found = BisectLoad(limits, *b.meets, *b.misses,
                                 [&](const LoadPoint& load) { return predict(g.candidate, load); });
    probes += static_cast<int>(found.probed.size());
    for (PointFigures& f : found.probed) e.probed.push_back(std::move(f));
    e.at = BestMeeting(e, limits, objective);
    if (e.at && (!best || objective.Beats(ObjectiveAt(*e.at, objective), *best)))
      best = ObjectiveAt(*e.at, objective);
  }
  for (Evaluated& e : candidates) {
    if (e.at) {
      e.meets_sla = true;
      e.binds_next = BindsNext(e, *e.at, limits);
    } else {
      SayMiss(e, limits);
    }
  }
  return probes;
}

}  // namespace ppsearch::search

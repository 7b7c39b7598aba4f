#include "search/measure.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <optional>

namespace ppsearch::search {
namespace {

// The sweep's concurrencies in order, once each; an open loop's one rate
// (a spec holds one) with its cap.
void SortLoads(const SearchResult& r, spec::DerivedSweep* sweep) {
  std::sort(sweep->concurrency.begin(), sweep->concurrency.end());
  sweep->concurrency.erase(std::unique(sweep->concurrency.begin(), sweep->concurrency.end()),
                           sweep->concurrency.end());
  if (!r.load_points.empty() && r.load_points.front().open()) {
    sweep->concurrency.resize(1);
    sweep->request_rate = r.load_points.front().request_rate;
  }
}

// The spec of the best candidate when it is disaggregated: its two pools on
// the cluster's hosts, the prefill servers first, as the search predicted it.
Measurement BestDisaggregated(const SearchResult& r, const std::string& search_args, int requests,
                              const std::vector<std::string>& hosts) {
  Measurement m;
  const Evaluated& best = r.evaluated.front();
  const PdPools& pd = *best.candidate.pd;
  m.measured.push_back(best.candidate);
  spec::DerivedSweep::Pool prefill{{}, pd.prefill}, decode{{}, pd.decode};
  for (int h = 0; h < pd.prefill_nodes + pd.decode_nodes && h < static_cast<int>(hosts.size()); ++h)
    (h < pd.prefill_nodes ? prefill : decode).hosts.push_back(hosts[static_cast<size_t>(h)]);
  m.sweep.prefill = prefill;
  m.sweep.decode = decode;
  m.sweep.concurrency.clear();
  for (const LoadPoint& l : r.load_points)
    m.sweep.concurrency.push_back(l.open() && l.concurrency == 0 ? requests : l.concurrency);
  if (best.at && best.at->probed && !best.at->load.open())
    m.sweep.concurrency.push_back(best.at->load.concurrency);
  SortLoads(r, &m.sweep);
  m.header = fmt::format(
      "# Written by `ppsearch search {}`: its best candidate is disaggregated,\n"
      "# {}. `ppsearch plan`, `validate`, `simulate` and `run --engine sim`\n"
      "# take this file; `run` on real servers does not run one yet.\n",
      search_args, best.candidate.Label());
  for (int k = 1; k < r.qualifying; ++k) {
    const Evaluated& e = r.evaluated[static_cast<size_t>(k)];
    if (e.could_be_best) m.header += "# Also could be the best: " + e.candidate.Label() + "\n";
  }
  return m;
}

// The load of the prediction at which the search predicts `e` misses the
// SLA at closed-loop load `c`: its prediction there, listed or probed, or,
// where it predicted none, its nearest prediction below `c` when that one
// misses (the limits' figures grow with the load). Nullopt when it predicts
// no miss at `c`: it met the SLA there or at that nearest load below, or has
// no prediction at or below `c`. A load above `c` that misses says nothing
// of `c`: another candidate's best found by bisection often lies between
// two listed loads where this one meets the SLA below and misses above.
std::optional<int> PredictedMissAt(const Evaluated& e, int c) {
  const PointFigures* nearest = nullptr;  // at or below c
  for (const std::vector<PointFigures>* list : {&e.points, &e.probed})
    for (const PointFigures& f : *list)
      if (!f.load.open() && f.load.concurrency <= c &&
          (nearest == nullptr || f.load.concurrency > nearest->load.concurrency))
        nearest = &f;
  if (nearest == nullptr || nearest->meets_sla) return std::nullopt;
  return nearest->load.concurrency;
}

// A run excludes a layout that misses an SLA limit at any of its levels
// (docs/spec.md, SLAs), where the search judged each candidate at its best
// load: the levels at which the search predicts a measured candidate misses
// a limit (PredictedMissAt) are left out of the sweep, so that the run
// judges them where the search did. A level the search predicted no miss at
// stays. Returns the header's line saying so, each miss cited with the
// prediction it rests on; empty when none is left out. When every level is
// predicted to miss for some candidate, the levels stay and the line says so.
std::string KeepLevelsMeetingTheSla(const std::vector<const Evaluated*>& measured,
                                    spec::DerivedSweep* sweep) {
  std::vector<int> kept, dropped;
  std::vector<std::string> missing;  // "PP8/TP4/EP4 at C=256"
  for (int c : sweep->concurrency) {
    bool all = true;
    for (const Evaluated* e : measured) {
      const std::optional<int> at = PredictedMissAt(*e, c);
      if (!at) continue;
      all = false;
      missing.push_back(
          *at == c ? fmt::format("{} at C={}", e->candidate.Label(), c)
                   : fmt::format("{} at C={}, as it misses at C={}", e->candidate.Label(), c, *at));
    }
    (all ? kept : dropped).push_back(c);
  }
  if (dropped.empty()) return "";
  if (kept.empty())
    return fmt::format(
        "# No level is predicted to meet the SLA for every layout here ({}): a run excludes\n"
        "# a layout that misses a limit at any level.\n",
        fmt::join(missing, "; "));
  sweep->concurrency = kept;
  return fmt::format(
      "# Left out of the sweep: C={}, where the search predicts a miss of the SLA\n"
      "# ({}); a run excludes a layout that misses a limit at any level.\n",
      fmt::join(dropped, ", C="), fmt::join(missing, "; "));
}

}  // namespace

Measurement WorthMeasuring(const SearchResult& r, const std::string& search_args, int requests,
                           const std::vector<std::string>& hosts) {
  Measurement m;
  if (r.qualifying == 0) return m;
  const Evaluated& best = r.evaluated.front();
  if (best.candidate.pd && !hosts.empty())
    return BestDisaggregated(r, search_args, requests, hosts);
  // `run` measures aggregated layouts: a disaggregated candidate that could
  // be the best is named in the header instead, and the best aggregated one
  // leads the sweep.
  int first = -1;
  for (int k = 0; k < r.qualifying && first < 0; ++k)
    if (!r.evaluated[static_cast<size_t>(k)].candidate.pd) first = k;
  if (first < 0) return m;
  m.knobs = r.evaluated[static_cast<size_t>(first)].candidate.knobs;
  // A spec holds one layer split per pipeline size: the first measured
  // candidate of a size sets it (empty: the source spec's), and a candidate
  // of that size with another split needs a spec of its own.
  std::map<int, std::vector<int>> split_of;
  std::vector<const Evaluated*> measured;  // m.measured's evaluations
  for (int k = 0; k < r.qualifying; ++k) {
    const Evaluated& e = r.evaluated[static_cast<size_t>(k)];
    if (e.candidate.pd) {
      if (e.could_be_best || k == 0) m.disaggregated.push_back(e.candidate);
      continue;
    }
    // The best aggregated one is measured even when no interval was drawn.
    if (!e.could_be_best && k > first) continue;
    const auto [split, added] = split_of.emplace(e.candidate.layout.pp, e.candidate.layer_split);
    const bool fits = e.candidate.knobs == m.knobs && split->second == e.candidate.layer_split;
    if (added && !fits) split_of.erase(split);
    (fits ? m.measured : m.other_knobs).push_back(e.candidate);
    if (fits) measured.push_back(&e);
  }
  for (const Candidate& c : m.measured) {
    m.sweep.layouts.push_back(c.layout);
    if (!c.layer_split.empty()) m.sweep.pp_layer_partitions[c.layout.pp] = c.layer_split;
  }
  // An open loop: the one rate a spec holds, the cap as its concurrency (a
  // cap of every request when the search had none).
  for (const LoadPoint& l : r.load_points)
    m.sweep.concurrency.push_back(l.open() && l.concurrency == 0 ? requests : l.concurrency);
  // A closed loop measures each candidate's best load point too, where the
  // search judged it: the load bisection found is no listed one.
  const bool open = !r.load_points.empty() && r.load_points.front().open();
  for (int k = 0; k < r.qualifying && !open; ++k) {
    const Evaluated& e = r.evaluated[static_cast<size_t>(k)];
    if (e.candidate.pd) continue;
    if (e.at && e.at->probed && std::find(measured.begin(), measured.end(), &e) != measured.end())
      m.sweep.concurrency.push_back(e.at->load.concurrency);
  }
  SortLoads(r, &m.sweep);
  const std::string levels =
      r.sla.any() && !open ? KeepLevelsMeetingTheSla(measured, &m.sweep) : "";
  if (m.knobs.chunked_prefill_size != 0)
    m.sweep.engine_args.push_back({"chunked-prefill-size", m.knobs.chunked_prefill_size});
  if (m.knobs.max_running_requests != 0)
    m.sweep.engine_args.push_back({"max-running-requests", m.knobs.max_running_requests});
  if (!m.knobs.moe_a2a_backend.empty())
    m.sweep.engine_args.push_back({"moe-a2a-backend", m.knobs.moe_a2a_backend});
  m.header = fmt::format(
      "# Written by `ppsearch search {}`: the {} candidate(s) that could still be the best\n"
      "# given the predictions' intervals, with the best one's knobs ({}), at the search's\n"
      "# load points and their best. Measure them with `ppsearch run` on this file.\n",
      search_args, m.measured.size(), m.knobs.Label());
  m.header += levels;
  for (const auto& [pp, split] : m.sweep.pp_layer_partitions)
    m.header += fmt::format(
        "# Its PP{} layouts run with the layer split the search found for them\n"
        "# ([engine.pp_layer_partition] {} = [{}]): as the search predicted them, SGLang's\n"
        "# even split leaves them less than decision.min_headroom_mib.\n",
        pp, pp, fmt::join(split, ", "));
  for (const Candidate& c : m.other_knobs) {
    std::string why = "other knobs";
    if (c.knobs == m.knobs)
      why = c.layer_split.empty()
                ? fmt::format("SGLang's even layer split, where this spec splits PP{}", c.layout.pp)
                : fmt::format("another layer split for PP{}", c.layout.pp);
    m.header +=
        fmt::format("# Also tied with the best, with {} (a spec of its own): {}\n", why, c.Label());
  }
  for (const Candidate& c : m.disaggregated)
    m.header +=
        "# Also could be the best, disaggregated (`ppsearch simulate` predicts such a\n"
        "# deployment and `run --engine sim` runs one, from a spec of its own): " +
        c.Label() + "\n";
  return m;
}

}  // namespace ppsearch::search

#include "search/measure.h"

#include <fmt/format.h>

#include <algorithm>

namespace ppsearch::search {

Measurement WorthMeasuring(const SearchResult& r, const std::string& source_spec, int requests) {
  Measurement m;
  if (r.qualifying == 0) return m;
  m.knobs = r.evaluated.front().candidate.knobs;
  for (int k = 0; k < r.qualifying; ++k) {
    const Evaluated& e = r.evaluated[static_cast<size_t>(k)];
    // The best is measured even when no interval was drawn.
    if (!e.could_be_best && k > 0) continue;
    (e.candidate.knobs == m.knobs ? m.measured : m.other_knobs).push_back(e.candidate);
  }
  for (const Candidate& c : m.measured) m.sweep.layouts.push_back(c.layout);
  // An open loop: the one rate a spec holds, the cap as its concurrency (a
  // cap of every request when the search had none).
  for (const LoadPoint& l : r.load_points)
    m.sweep.concurrency.push_back(l.open() && l.concurrency == 0 ? requests : l.concurrency);
  // A closed loop measures each candidate's best load point too, where the
  // search judged it: the load bisection found is no listed one.
  const bool open = !r.load_points.empty() && r.load_points.front().open();
  for (int k = 0; k < r.qualifying && !open; ++k) {
    const Evaluated& e = r.evaluated[static_cast<size_t>(k)];
    if (e.at && e.at->probed && e.candidate.knobs == m.knobs && (e.could_be_best || k == 0))
      m.sweep.concurrency.push_back(e.at->load.concurrency);
  }
  std::sort(m.sweep.concurrency.begin(), m.sweep.concurrency.end());
  m.sweep.concurrency.erase(std::unique(m.sweep.concurrency.begin(), m.sweep.concurrency.end()),
                            m.sweep.concurrency.end());
  if (!r.load_points.empty() && r.load_points.front().open()) {
    m.sweep.concurrency.resize(1);
    m.sweep.request_rate = r.load_points.front().request_rate;
  }
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
      source_spec, m.measured.size(), m.knobs.Label());
  for (const Candidate& c : m.other_knobs)
    m.header +=
        "# Also tied with the best, with other knobs (a spec of its own): " + c.Label() + "\n";
  return m;
}

}  // namespace ppsearch::search

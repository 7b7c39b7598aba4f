#pragma once
// A candidate's best load point under the decision's SLA limits: of the
// loads at which every limit holds on the predicted p99s, the one where the
// objective is best. For a throughput or goodput objective that is the
// highest such load: between the highest listed load that meets the limits
// and the next listed one that misses one, the break is found by bisection
// (SLA figures rise with load; one crossing between the two is assumed).
// Pure: the predictions come through the `predict` callback.

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "decide/objective.h"
#include "decide/sla.h"
#include "search/search.h"

namespace ppsearch::search {

// A request rate is resolved to this share of the lower end; a concurrency
// to one request.
inline constexpr double kRateResolution = 1.0 / 32;

// The load halfway between `meets` and `misses` (a concurrency rounded
// down, a rate the mean); none when the two are as close as the resolution
// allows.
std::optional<LoadPoint> Between(const LoadPoint& meets, const LoadPoint& misses);

// Orders loads: by request rate, then concurrency (an open loop's cap is
// the same at every rate).
bool LighterThan(const LoadPoint& a, const LoadPoint& b);

// Whether an open loop's point kept up with its offered rate
// (decide::KeepsUp on what it completed and its first-token pace); a
// closed loop's always does, and so does a point that sent no request.
bool KeepsUpAt(const PointFigures& f);
// How an open loop's point fell behind: "fell behind: 64 requests in
// flight at an end-to-end p50 of 18.20 s complete at most 3.52 of the
// offered 4.25 requests/s", "fell behind: it completed 3.19 of the
// offered 8.00 requests/s, where keeping up completes about 6.12", or
// "fell behind: requests queued in the server, its first tokens coming at
// about 14.0 of the offered 25.0 requests/s (a first-token pace of 0.56,
// where keeping up is at least 0.95)".
std::string FellBehindText(const PointFigures& f);

// Whether the point serves its load: every set limit holds on its predicted
// figures (a limit without a figure, one the workload cannot give, does not
// fail it) and, in an open loop, it kept up with the offered rate. One that
// fell behind served its requests after they waited for a free slot under
// the cap on requests in flight, a wait its latencies do not count, so no
// limit on them says its users were served in time (a run's decision
// excludes it too: analysis::FellBehind).
bool MeetsSlaAt(const decide::SlaLimits& limits, const PointFigures& f);

// The objective's value at a point: a predicted point's figures as the
// objective reads them.
double ObjectiveAt(const PointFigures& f, const decide::Objective& objective);

// Why a point's prediction is no result: no request completed, or a figure
// an SLA limit or the objective needs is missing (TPOT and ITL are needed
// only when the workload's answers have a second token, `decode`; goodput
// may be 0). Empty when it is a result.
std::string NoPredictionReason(const PointFigures& f, const decide::SlaLimits& limits,
                               const decide::Objective& objective, bool decode);

struct Bisection {
  LoadPoint meets;                   // the highest load found to meet the limits
  LoadPoint misses;                  // the lowest load found to miss one
  std::vector<PointFigures> probed;  // every prediction made, in order
};

// Bisects between `meets` and `misses` until they are as close as the
// resolution allows, predicting each midpoint with `predict`.
Bisection BisectLoad(const decide::SlaLimits& limits, const PointFigures& meets,
                     const PointFigures& misses,
                     const std::function<PointFigures(const LoadPoint&)>& predict);

// Sets each candidate's best load point (`at`), its probes and the limit
// that binds next. With SLA limits, or in an open loop (where keeping up
// is a limit of its own), candidates are refined by bisection in the order of the
// most their objective could reach (its value at the listed point that
// misses), and only while that could beat the best value found so far
// (`screen`; false: every candidate with a gap). A candidate outside the
// headroom rule is not refined and sets no bar. `predict(i, load)`
// predicts candidate i at a load. Returns the number of probes.
int FindBestLoads(std::vector<Evaluated>& candidates, const decide::SlaLimits& limits,
                  const decide::Objective& objective, bool screen,
                  const std::function<PointFigures(size_t, const LoadPoint&)>& predict);

}  // namespace ppsearch::search

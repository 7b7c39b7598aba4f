#pragma once
// The decision's rules on plain numbers, shared by the decision on measured
// evidence (analysis/) and the ranking of predictions (uncertainty/,
// predict/): one definition of the score and of the headroom test, whoever
// holds the numbers.

#include <utility>
#include <vector>

namespace ppsearch::decide {

// Each layout's score from its objective value per concurrency level
// (values[layout][level], every layout with the same levels): the geometric
// mean over the levels of value / best (lower_is_better: best / value),
// where best is the best value of any layout at that level; a level where
// the value is not positive is left out of that layout's mean. 1.0 means
// best everywhere; a layout that wins one level by 10% and loses the other
// by 10% scores about 0.995 against one that is second at both.
std::vector<double> RelativeScores(const std::vector<std::vector<double>>& values,
                                   bool lower_is_better);

// The Pareto rule for (more is better, less is better) pairs, such as
// throughput against TTFT: a point is optimal when no other point has at
// least its first value and at most its second and is better in one of
// them. Equal points are all optimal. One flag per point, in order.
std::vector<bool> ParetoOptimal(const std::vector<std::pair<double, double>>& more_less);

// The decision's headroom rule: a layout keeps enough memory when its
// worst rank leaves at least `min_headroom_mib` of the GPU's total.
inline double HeadroomMib(double gpu_total_mib, double peak_mib) {
  return gpu_total_mib - peak_mib;
}
inline bool MeetsHeadroom(double headroom_mib, double min_headroom_mib) {
  return headroom_mib >= min_headroom_mib;
}

// An open loop's rules for keeping up, each judging what a sample of N
// requests sent at `rate` requests/s shows:
//
// Completions. They complete at N / (N / rate + their end-to-end p50)
// requests/s when the server keeps up with them (the sends' span, then the
// last one's answer). A sample that completed less than that by more than
// the spread of its Poisson sends (whose span over N varies by 1 / sqrt(N)
// of itself: three of those, at most half) fell behind: its requests
// waited for a free slot under the cap on requests in flight, and its
// latencies, measured from each request's send, do not count that wait.
//
// The cap. Under a cap of `cap` requests in flight (0: none), Little's law
// says more: cap requests, each in flight for its end-to-end time, complete
// at most cap / e2e requests/s (CapRps), and an offered rate above that
// keeps the cap full and its requests waiting, however many the sample
// completed (the rule above credits a queue's growing end-to-end time as
// the last answers' wait).
//
// The pace. Without a cap, or with a sample no larger than it, nothing
// waits for a slot and the queue forms in the server instead, where both
// rules above credit it as long answers. The records tell it: a server
// that keeps up answers first tokens as fast as requests are sent, one that
// queues them only as fast as it serves them (stats.h, first-token pace).
// A pace below 1 by more than the same share (3 / sqrt(N), at most half)
// fell behind. (Under a full cap the sends wait for slots and follow the
// answers, so the pace stays near 1 there: the cap's rule judges that.)
struct OpenLoopSample {
  double rate = 0;  // offered requests/s
  int cap = 0;      // requests in flight at most; 0: none
  double requests = 0;
  double request_rps = 0;  // completed requests over the sample's duration
  double e2e_p50_s = 0;
  double first_token_pace = 0;  // 0: unknown, not judged
};
enum class Behind { kNo, kFillsTheCap, kCompletedTooFew, kQueuedInTheServer };
// Which rule a sample breaks first (kNo: none): the cap, the completions,
// the pace.
Behind HowBehind(const OpenLoopSample& s);
// HowBehind is kNo, for a sample that sent requests at a rate.
bool KeepsUp(const OpenLoopSample& s);

double KeepingUpRps(double rate, double requests, double e2e_p50_s);
// What a sample that kept up completes at least: KeepingUpRps less the
// sends' spread.
double KeepingUpFloorRps(double rate, double requests, double e2e_p50_s);
// The least first-token pace of a sample of `requests` that kept up: 1 less
// the same spread.
double KeepingUpPace(double requests);
// Little's law's most requests/s under the cap; infinity without one.
double CapRps(int cap, double e2e_p50_s);
// Whether the offered rate keeps the cap full: a sample of more requests
// than the cap, sent faster than CapRps. (A sample no larger than the cap
// never waits for a slot.)
bool FillsTheCap(double rate, int cap, double requests, double e2e_p50_s);
// How far a sample is from keeping up by the rule HowBehind names, as a
// share: the rate over what the cap lets complete, what the completions
// rule asks over what it completed, or the least pace over its pace, less
// 1; 0 for one that kept up.
double BehindBy(const OpenLoopSample& s);

}  // namespace ppsearch::decide

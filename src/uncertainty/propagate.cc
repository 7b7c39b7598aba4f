#include "uncertainty/propagate.h"

#include <algorithm>
#include <utility>

#include "stats/stats.h"
#include "util/parallel.h"

namespace ppsearch::uncertainty {

namespace {

// Each member value and the interval drawn from it.
const std::pair<double MemberValues::*, Interval PointUncertainty::*> kIntervalFields[] = {
    {&MemberValues::input_tps, &PointUncertainty::input_tps},
    {&MemberValues::ttft_p50_s, &PointUncertainty::ttft_p50_s},
    {&MemberValues::ttft_p95_s, &PointUncertainty::ttft_p95_s},
    {&MemberValues::peak_gpu_mib, &PointUncertainty::peak_gpu_mib},
    {&MemberValues::tpot_p50_s, &PointUncertainty::tpot_p50_s},
    {&MemberValues::itl_p99_s, &PointUncertainty::itl_p99_s},
    {&MemberValues::output_tps, &PointUncertainty::output_tps},
    {&MemberValues::e2e_p50_s, &PointUncertainty::e2e_p50_s},
};

}  // namespace

Interval IntervalOf(const std::vector<double>& values) {
  if (values.empty()) return {};
  return {stats::Percentile(values, kIntervalLowPercentile),
          stats::Percentile(values, kIntervalHighPercentile)};
}

std::vector<PointUncertainty> Propagate(const std::vector<PointJob>& jobs, const Ensemble& ensemble,
                                        const EvaluateFn& evaluate, int threads) {
  const size_t members = ensemble.members.size();
  const size_t tasks = jobs.size() * members;
  std::vector<MemberValues> values(tasks);
  ParallelFor(tasks, threads,
              [&](size_t t) { values[t] = evaluate(t / members, ensemble.members[t % members]); });

  std::vector<PointUncertainty> out;
  for (size_t j = 0; j < jobs.size(); ++j) {
    PointUncertainty u;
    u.layout = jobs[j].layout;
    u.concurrency = jobs[j].concurrency;
    u.central = jobs[j].central;
    u.members.assign(values.begin() + j * members, values.begin() + (j + 1) * members);
    for (const auto& [value, interval] : kIntervalFields) {
      std::vector<double> values;
      for (const MemberValues& m : u.members) values.push_back(m.*value);
      u.*interval = IntervalOf(values);
    }
    u.parameter = {u.input_tps, u.ttft_p50_s, u.ttft_p95_s, u.tpot_p50_s,
                   u.itl_p99_s, u.output_tps, u.e2e_p50_s};
    u.compared_input_tps = u.input_tps;
    u.compared_ttft_p50_s = u.ttft_p50_s;
    u.compared_output_tps = u.output_tps;
    out.push_back(std::move(u));
  }
  return out;
}

}  // namespace ppsearch::uncertainty

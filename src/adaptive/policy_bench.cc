// Speed of one adaptive step's decision (reported in docs/adaptive.md): the
// belief, the assessment and the value of information of every unmeasured
// point, for a candidate set the size of a search's output (16 layouts x 7
// load points, 32-member ensembles, 512 draws), half of the layouts
// measured at one point. The refit and the predictions around it are
// `calibrate` and `search`'s own costs.

#include <benchmark/benchmark.h>

#include <cmath>

#include "adaptive/policy.h"

namespace ppsearch::adaptive {
namespace {

Problem SearchSized(int layouts, int points) {
  Problem pr;
  for (int p = 0; p < points; ++p) pr.load_points.push_back(1 << p);
  pr.repeats = 3;
  for (int l = 0; l < layouts; ++l) {
    CandidateState c;
    // append, not "l" + std::string: GCC 12 warns falsely (-Wrestrict) on the latter.
    c.id = std::string(1, 'l').append(std::to_string(l));
    c.label = c.id;
    c.gpus = 32;
    for (int p = 0; p < points; ++p) {
      PointState s;
      s.central = 1000 * (1 - 0.01 * l) * (1 + 0.1 * p);
      for (int m = 0; m < 32; ++m) s.members.push_back(s.central * (1 + 0.002 * (m - 16)));
      s.sigma = 0.08;
      s.sample_s = 200;
      if (l % 2 == 0 && p == 0) s.measured = s.central * 1.05;
      c.points.push_back(s);
    }
    pr.candidates.push_back(c);
  }
  return pr;
}

void BM_AdaptiveStep(benchmark::State& state) {
  const Problem pr = SearchSized(static_cast<int>(state.range(0)), 7);
  for (auto _ : state) {
    const Assessment a = Assess(pr);
    const std::optional<Choice> next = ChooseNext(pr, a);
    benchmark::DoNotOptimize(next);
  }
  state.counters["points"] = static_cast<double>(state.range(0) * 7);
}
BENCHMARK(BM_AdaptiveStep)->Arg(4)->Arg(16)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace ppsearch::adaptive

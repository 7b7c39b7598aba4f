#include "search/capacity.h"

#include <algorithm>
#include <cmath>

#include "search/best_load.h"

namespace ppsearch::search {

CapacityPlan PlanCapacity(const SearchResult& r, double target_rps, int cluster_gpus) {
  CapacityPlan plan;
  plan.target_rps = target_rps;
  plan.cluster_gpus = cluster_gpus;
  int heaviest = 0;
  for (const LoadPoint& l : r.load_points)
    if (!l.open()) heaviest = std::max(heaviest, l.concurrency);
  for (int k = 0; k < r.qualifying; ++k) {
    const Evaluated& e = r.evaluated[static_cast<size_t>(k)];
    const int copies = std::max(e.candidate.layout.instances, 1);
    if (!e.at || !(e.at->request_rps > 0)) continue;
    CapacityRow row;
    row.evaluated = static_cast<size_t>(k);
    row.instance = e.candidate;
    row.instance.layout.instances = 1;
    row.gpus_per_instance = e.gpus / copies;
    // The busiest instance's share of the load: C / instances rounded up;
    // in an open loop the rate over the instances, and its cap on requests
    // in flight as C is shared. An open loop's instance that keeps up serves
    // the rate it is offered (docs/search.md), not the sample's requests/s,
    // which the sample's ramp and drain keep below the rate; one that does
    // not serves what it completed.
    row.instance_load = e.at->load;
    row.at_heaviest_load = heaviest > 0 && !e.at->load.open() && e.at->load.concurrency >= heaviest;
    LoadPoint& load = row.instance_load;
    row.instance_rps = e.at->request_rps / copies;
    if (load.open()) {
      load.request_rate /= copies;
      if (KeepsUpAt(*e.at)) row.instance_rps = load.request_rate;
    }
    load.concurrency = (load.concurrency + copies - 1) / copies;
    // A hair of floating-point slack: 10 / (10 / 3) is 3 instances, not 4.
    row.instances = std::max(1, static_cast<int>(std::ceil(target_rps / row.instance_rps - 1e-9)));
    row.gpus = row.instances * row.gpus_per_instance;
    plan.rows.push_back(row);
  }
  std::stable_sort(plan.rows.begin(), plan.rows.end(),
                   [](const CapacityRow& a, const CapacityRow& b) { return a.gpus < b.gpus; });
  return plan;
}

}  // namespace ppsearch::search

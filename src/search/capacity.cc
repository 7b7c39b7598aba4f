#include "search/capacity.h"

#include <algorithm>
#include <cmath>

namespace ppsearch::search {

CapacityPlan PlanCapacity(const SearchResult& r, double target_rps, int cluster_gpus) {
  CapacityPlan plan;
  plan.target_rps = target_rps;
  plan.cluster_gpus = cluster_gpus;
  for (int k = 0; k < r.qualifying; ++k) {
    const Evaluated& e = r.evaluated[static_cast<size_t>(k)];
    const int copies = std::max(e.candidate.layout.instances, 1);
    if (!e.at || !(e.at->request_rps > 0)) continue;
    CapacityRow row;
    row.evaluated = static_cast<size_t>(k);
    row.instance = e.candidate;
    row.instance.layout.instances = 1;
    row.gpus_per_instance = e.gpus / copies;
    row.instance_rps = e.at->request_rps / copies;
    // The busiest instance's share of the load: C / instances rounded up, a
    // rate over the instances.
    row.instance_load = e.at->load;
    if (row.instance_load.open()) {
      row.instance_load.request_rate /= copies;
    } else {
      row.instance_load.concurrency = (row.instance_load.concurrency + copies - 1) / copies;
    }
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

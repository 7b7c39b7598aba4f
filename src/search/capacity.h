#pragma once
// Capacity planning (`ppsearch search --target-rate R`): how many GPUs, in
// which layout and how many instances, serve R requests/s under the
// decision's SLA. Each qualifying candidate's instance serves, at its best
// load point, the predicted requests/s of the candidate over its instance
// count (an open loop's: its request rate over the instance count); R needs
// ceil(R / that) instances of it. The fewest GPUs first,
// then the objective. Pure: a search's result in, the plan out.

#include <vector>

#include "search/search.h"

namespace ppsearch::search {

struct CapacityRow {
  size_t evaluated = 0;  // index into SearchResult::evaluated: a qualifying candidate
  Candidate instance;    // one instance of it (its layout with instances 1)
  int gpus_per_instance = 0;
  double instance_rps = 0;  // requests/s one instance serves at the best load point
  LoadPoint instance_load;  // that load point, per instance (C, or rate and cap)
  int instances = 0;        // needed for the target
  int gpus = 0;             // instances x gpus_per_instance
  // Its best load is the heaviest closed-loop load listed: an instance that
  // still meets the SLA there may serve more at a load the list does not
  // reach, so its requests/s is a floor and its instance count a ceiling.
  bool at_heaviest_load = false;
};

struct CapacityPlan {
  double target_rps = 0;
  int cluster_gpus = 0;           // the spec's cluster, for comparison
  std::vector<CapacityRow> rows;  // fewest GPUs first, then by rank
};

// The rows of every qualifying candidate whose instance serves a request
// per second or more than none.
CapacityPlan PlanCapacity(const SearchResult& result, double target_rps, int cluster_gpus);

}  // namespace ppsearch::search

#pragma once
// What a sample's evidence says of a layout's instances (several copies of
// one deployment on disjoint hosts, spec::LayoutSpec::instances): which
// hosts each ran on and which requests each served, from the records'
// `instance`. Both engines write it into the sample's bench summary, so a
// reader of bench/<sample>.json finds each instance's share beside its
// hosts' logs (service/<sample>/<host>.log) and snapshots.

#include <vector>

#include "evidence/bench_summary.h"
#include "plan/plan.h"
#include "spec/spec.h"
#include "workload/request_record.h"

namespace ppsearch::run {

// Per instance: its index, hosts, the requests it was sent and those ok.
std::vector<evidence::BenchInstance> InstancesEvidence(
    const spec::Spec& spec, const plan::LayoutPlan& plan,
    const std::vector<workload::RequestRecord>& records);

}  // namespace ppsearch::run

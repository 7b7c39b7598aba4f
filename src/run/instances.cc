#include "run/instances.h"

#include "loadgen/bench_report.h"

namespace ppsearch::run {

std::vector<evidence::BenchInstance> InstancesEvidence(
    const spec::Spec& spec, const plan::LayoutPlan& plan,
    const std::vector<workload::RequestRecord>& records) {
  std::vector<evidence::BenchInstance> out =
      loadgen::ServedByInstance(records, plan.instance_nodes.size());
  for (size_t i = 0; i < plan.instance_nodes.size(); ++i) {
    std::vector<std::string>& hosts = out[i].hosts.emplace();
    for (int n : plan.instance_nodes[i])
      if (n >= 0 && n < static_cast<int>(spec.cluster.hosts.size()))
        hosts.push_back(spec.cluster.hosts[static_cast<size_t>(n)].name);
  }
  return out;
}

}  // namespace ppsearch::run

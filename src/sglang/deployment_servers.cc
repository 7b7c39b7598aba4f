// The processes of a disaggregated deployment's sample: its pools' servers
// and SGLang's router in PD mode (server_group.h).

#include <fmt/format.h>

#include "sglang/server_group.h"

namespace ppsearch::sglang {

Status ServerGroup::StartDeployment(const evidence::SampleId& sample, const std::string& run_id) {
  const spec::Disaggregation& d = *spec_.disaggregation;
  std::vector<ServerSlot> slots;
  for (PoolServer& server : DeploymentServers(spec_, sample)) {
    ServerSlot slot;
    slot.node = server.node;
    slot.host = spec_.cluster.hosts[slot.node].name;
    slot.name = fmt::format("node {} ({}, {})", slot.node, slot.host, server.role);
    slot.command = std::move(server.command);
    slot.log_path = paths_.live_log(sample, slot.host);
    slot.kept_log_path = paths_.service(sample, slot.host);
    slots.push_back(std::move(slot));
  }
  std::vector<ReadyProbe> probes;
  for (const spec::PoolSpec* pool : {&d.prefill, &d.decode})
    for (const std::string& url : PoolServerUrls(spec_, *pool)) probes.push_back({url, false});
  ServerSlot router;
  router.node = d.prefill.hosts.front();
  router.host = spec_.cluster.hosts[router.node].name;
  router.name = "the router on " + router.host;
  router.router = true;
  router.command = RouterCommand(spec_, sample);
  router.log_path = paths_.router_live_log(sample, router.host);
  router.kept_log_path = paths_.router_service(sample, router.host);
  slots.push_back(std::move(router));
  probes.push_back({RouterUrl(spec_), true});
  return StartSlots(sample.layout, sample, run_id, std::move(slots), std::move(probes));
}

}  // namespace ppsearch::sglang

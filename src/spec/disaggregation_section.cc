// A disaggregated deployment: [engine.disaggregation] (how the pools talk)
// and [sweep.prefill] / [sweep.decode] (each pool's layout, hosts and args),
// read and checked (spec/disaggregation_section.h). SGLang's choices come from its
// server_args.py DISAGG_TRANSFER_BACKEND_CHOICES and the router's
// router_args.py _POLICY_CHOICES.

#include <algorithm>
#include <string>
#include <vector>

#include "spec/sections.h"
#include "util/excerpt.h"

namespace ppsearch::spec {
namespace {

// server_args.py DISAGG_TRANSFER_BACKEND_CHOICES.
const std::vector<std::string> kSglangTransferBackends = {"mooncake", "nixl", "ascend",
                                                          "fake",     "mori", "mooncake_tcp"};
// The ones that move KV over RDMA between NVIDIA GPU nodes; the rest are
// for Ascend NPUs (ascend), AMD GPUs (mori), TCP (mooncake_tcp) or tests
// (fake, which handle_pd_disaggregation refuses on a prefill server).
const std::vector<std::string> kPlannedTransferBackends = {"mooncake", "nixl"};
// router_args.py _POLICY_CHOICES.
const std::vector<std::string> kRouterPolicies = {
    "random", "round_robin", "cache_aware",        "power_of_two",
    "bucket", "manual",      "consistent_hashing", "prefix_hash"};

bool Contains(const std::vector<std::string>& list, const std::string& value) {
  return std::find(list.begin(), list.end(), value) != list.end();
}

std::string Quoted(const std::vector<std::string>& list) {
  std::string out;
  for (const std::string& v : list) out += (out.empty() ? "'" : ", '") + v + "'";
  return out;
}

Status ReadTransferBackend(const TableReader& section, std::string* out) {
  PPS_RETURN_IF_ERROR(section.String("transfer_backend", out, Need::kOptional));
  if (Contains(kPlannedTransferBackends, *out)) return Status::Ok();
  const SourceLoc loc = section.KeyLoc("transfer_backend");
  if (Contains(kSglangTransferBackends, *out))
    return KeyError(loc, "'" + *out +
                             "' is an SGLang transfer backend ppsearch does not plan (it plans "
                             "KV transfer over RDMA between NVIDIA GPU nodes); expected 'mooncake' "
                             "or 'nixl'");
  return KeyError(loc, "SGLang has no transfer backend '" + Excerpt(*out) +
                           "' (its --disaggregation-transfer-backend takes " +
                           Quoted(kSglangTransferBackends) + "); expected 'mooncake' or 'nixl'");
}

// Hosts by name, each in [cluster], none twice.
Status ReadPoolHosts(const TableReader& pool, const ClusterSpec& cluster, std::vector<int>* out) {
  std::vector<std::string> names;
  PPS_RETURN_IF_ERROR(pool.StringList("hosts", &names, true));
  const toml::array& array = *pool.Find("hosts")->as_array();
  for (size_t i = 0; i < names.size(); ++i) {
    const SourceLoc loc = pool.source().Locate(
        array.get(i)->source(), JoinKey(pool.key_path(), "hosts") + "[" + std::to_string(i) + "]");
    int index = -1;
    for (size_t h = 0; h < cluster.hosts.size(); ++h)
      if (cluster.hosts[h].name == names[i]) index = static_cast<int>(h);
    if (index < 0) {
      std::vector<std::string> known;
      for (const HostSpec& host : cluster.hosts) known.push_back(host.name);
      return KeyError(
          loc, "host '" + Excerpt(names[i]) + "' is not in cluster.hosts (" + Quoted(known) + ")");
    }
    if (std::find(out->begin(), out->end(), index) != out->end())
      return KeyError(loc, "host '" + names[i] + "' is listed twice");
    out->push_back(index);
  }
  return Status::Ok();
}

Status ReadPool(const TableReader& sweep, const std::string& role, const ClusterSpec& cluster,
                PoolSpec* out) {
  PPS_ASSIGN_OR_RETURN(const toml::table* table,
                       sweep.Table(role, Need::kRequired,
                                   "a table such as {hosts = [\"n0\"], pp = 1, tp = 8, ep = 8}"));
  const TableReader pool(sweep.source(), *table, JoinKey(sweep.key_path(), role));
  PPS_RETURN_IF_ERROR(pool.CheckKeys(kPoolKeys));
  out->role = role;
  out->origin = pool.origin();
  if (pool.Find("hosts") == nullptr) return pool.Missing("hosts");
  PPS_RETURN_IF_ERROR(ReadPoolHosts(pool, cluster, &out->hosts));
  LayoutSpec& layout = out->layout;
  PPS_RETURN_IF_ERROR(ReadLayoutSizes(pool, Need::kOptional, &layout));
  layout.origin = out->origin;
  PPS_ASSIGN_OR_RETURN(const toml::table* args, pool.Table("args", Need::kOptional));
  if (args != nullptr) {
    EngineSpec engine;
    PPS_RETURN_IF_ERROR(ReadEngineArgs(
        TableReader(pool.source(), *args, JoinKey(pool.key_path(), "args")), &engine));
    out->args = std::move(engine.args);
  }
  return Status::Ok();
}

Status ReadTransfer(const TableReader& section, DisaggregationEngineSpec* out) {
  PPS_RETURN_IF_ERROR(section.CheckKeys(kEngineDisaggregationKeys));
  out->origin = section.origin();
  PPS_RETURN_IF_ERROR(ReadTransferBackend(section, &out->transfer_backend));
  PPS_RETURN_IF_ERROR(section.String("ib_device", &out->ib_device, Need::kOptional));
  PPS_RETURN_IF_ERROR(
      section.Int("bootstrap_port", &out->bootstrap_port, Need::kOptional, 1, 65535));
  PPS_RETURN_IF_ERROR(section.Enum("router_policy", &out->router_policy, kRouterPolicies));
  if (section.Find("router_command") != nullptr) {
    PPS_RETURN_IF_ERROR(section.StringList("router_command", &out->router_command, true));
    PPS_RETURN_IF_ERROR(CheckPlaceholders(out->router_command, section.KeyLoc("router_command")));
  }
  return section.Int("router_port", &out->router_port, Need::kOptional, 1, 65535);
}

// SGLang's prefill and decode servers are separate deployments on nodes of
// their own; a node in both would run two servers on the same GPUs.
Status CheckDisjoint(const TableReader& sweep, const Disaggregation& d,
                     const ClusterSpec& cluster) {
  const toml::array& decode_hosts =
      *sweep.table().at_path("decode").as_table()->get("hosts")->as_array();
  for (size_t i = 0; i < d.decode.hosts.size(); ++i) {
    const int host = d.decode.hosts[i];
    if (std::find(d.prefill.hosts.begin(), d.prefill.hosts.end(), host) == d.prefill.hosts.end())
      continue;
    const SourceLoc loc = sweep.source().Locate(decode_hosts.get(i)->source(),
                                                "sweep.decode.hosts[" + std::to_string(i) + "]");
    return KeyError(loc, "host '" + cluster.hosts[host].name +
                             "' is in the prefill pool too; the pools run on disjoint nodes");
  }
  return Status::Ok();
}

Status CheckPorts(const DisaggregationEngineSpec& d, const Spec& spec) {
  const int http_port = spec.cluster.server_port;
  if (d.bootstrap_port == http_port)
    return KeyError(spec.Origin("engine.disaggregation.bootstrap_port"),
                    std::to_string(http_port) +
                        " is also cluster.server_port; a prefill server's bootstrap server and "
                        "its HTTP server would both bind it");
  if (d.router_port == http_port)
    return KeyError(spec.Origin("engine.disaggregation.router_port"),
                    std::to_string(http_port) +
                        " is also cluster.server_port; the router and a server on its node "
                        "would both bind it");
  return Status::Ok();
}

}  // namespace

bool IsDisaggregated(const Spec& spec) {
  return spec.origins.count("sweep.prefill") > 0 || spec.origins.count("sweep.decode") > 0;
}

Result<std::optional<Disaggregation>> ReadDisaggregation(const TableReader& root,
                                                         const Spec& spec) {
  const toml::table* engine = root.table().get_as<toml::table>("engine");
  const toml::table* transfer =
      engine != nullptr ? engine->get_as<toml::table>("disaggregation") : nullptr;
  if (!IsDisaggregated(spec)) {
    if (transfer != nullptr)
      return KeyError(spec.Origin("engine.disaggregation"),
                      "[engine.disaggregation] configures a disaggregated deployment, but the "
                      "sweep has no [sweep.prefill] and [sweep.decode]");
    return std::optional<Disaggregation>();
  }
  Disaggregation d;
  if (transfer != nullptr)
    PPS_RETURN_IF_ERROR(
        ReadTransfer(TableReader(root.source(), *transfer, "engine.disaggregation"), &d.transfer));
  const TableReader sweep(root.source(), *root.table().get_as<toml::table>("sweep"), "sweep");
  PPS_RETURN_IF_ERROR(ReadPool(sweep, "prefill", spec.cluster, &d.prefill));
  PPS_RETURN_IF_ERROR(ReadPool(sweep, "decode", spec.cluster, &d.decode));
  PPS_RETURN_IF_ERROR(CheckDisjoint(sweep, d, spec.cluster));
  PPS_RETURN_IF_ERROR(CheckPorts(d.transfer, spec));
  return std::optional<Disaggregation>(std::move(d));
}

EngineSpec PoolEngineSpec(const Spec& spec, const Disaggregation& deployment,
                          const PoolSpec& pool) {
  EngineSpec engine = spec.engine;
  for (const auto& pool_arg : pool.args) {
    auto it = std::find_if(engine.args.begin(), engine.args.end(),
                           [&](const auto& arg) { return arg.first == pool_arg.first; });
    if (it != engine.args.end()) {
      it->second = pool_arg.second;
    } else {
      engine.args.push_back(pool_arg);
    }
  }
  const DisaggregationEngineSpec& d = deployment.transfer;
  auto add = [&](const std::string& name, const std::string& text, const SourceLoc& origin) {
    ArgValue arg;
    arg.text = text;
    arg.origin = origin;
    engine.args.emplace_back(name, std::move(arg));
  };
  add("disaggregation-mode", pool.role, pool.origin);
  add("disaggregation-transfer-backend", d.transfer_backend,
      spec.Origin("engine.disaggregation.transfer_backend"));
  ArgValue port;
  port.kind = ArgValue::Kind::kInt;
  port.int_value = d.bootstrap_port;
  port.text = std::to_string(d.bootstrap_port);
  port.origin = spec.Origin("engine.disaggregation.bootstrap_port");
  engine.args.emplace_back("disaggregation-bootstrap-port", std::move(port));
  if (!d.ib_device.empty())
    add("disaggregation-ib-device", d.ib_device, spec.Origin("engine.disaggregation.ib_device"));
  return engine;
}

}  // namespace ppsearch::spec

// [cluster]: the hosts, their GPUs, and how to reach them.
//
// Per-host SSH settings live under [cluster.ssh]: its user/port/key keys are
// defaults for every host, and a sub-table per host name overrides them and
// may set the address:
//   [cluster.ssh]
//   user = "serving"
//   [cluster.ssh.601]
//   address = "10.0.6.1"

#include <algorithm>

#include "spec/sections.h"
#include "util/files.h"

namespace ppsearch::spec {
namespace {

struct SshSettings {
  std::string user;
  int port = 22;
  std::string key;
};

Status ReadSshSettings(const TableReader& table, SshSettings* out) {
  PPS_RETURN_IF_ERROR(table.String("user", &out->user, Need::kOptional));
  PPS_RETURN_IF_ERROR(table.Int("port", &out->port, Need::kOptional, 1, 65535));
  PPS_RETURN_IF_ERROR(table.String("key", &out->key, Need::kOptional));
  return Status::Ok();
}

Status ReadHosts(const TableReader& section, std::vector<HostSpec>* hosts) {
  const toml::node* node = section.Find("hosts");
  if (node == nullptr) return section.Missing("hosts");
  PPS_ASSIGN_OR_RETURN(const toml::array* list,
                       ToArray(*node, section.KeyLoc("hosts"), "host names"));
  for (size_t i = 0; i < list->size(); ++i) {
    const toml::node& entry = *list->get(i);
    SourceLoc loc = section.source().Locate(
        entry.source(), section.KeyLoc("hosts").key + "[" + std::to_string(i) + "]");
    PPS_ASSIGN_OR_RETURN(std::string name, ToString(entry, loc));
    if (name.empty()) return KeyError(loc, "expected a non-empty host name");
    auto same = [&](const HostSpec& h) { return h.name == name; };
    if (std::any_of(hosts->begin(), hosts->end(), same)) {
      return KeyError(loc, "host '" + name + "' is listed twice");
    }
    HostSpec host;
    host.name = name;
    host.address = name;
    host.origin = loc;
    hosts->push_back(std::move(host));
  }
  return Status::Ok();
}

// Host names are keys of [cluster.ssh] next to the defaults, so the set of
// known keys depends on cluster.hosts.
Status ReadSsh(const TableReader& section, std::vector<HostSpec>* hosts) {
  PPS_ASSIGN_OR_RETURN(const toml::table* ssh, section.Table("ssh", Need::kOptional));
  if (ssh == nullptr) return Status::Ok();
  TableReader ssh_table(section.source(), *ssh, JoinKey(section.key_path(), "ssh"));
  std::vector<std::string> known = {"user", "port", "key"};
  for (const auto& host : *hosts) known.push_back(host.name);
  // A per-host table for a host the cluster does not list is a stale or
  // misspelt name; say so rather than just "unknown key".
  for (const auto& [key, node] : *ssh) {
    if (node.is_table() && std::find(known.begin(), known.end(), key.str()) == known.end()) {
      return PositionError(
          section.source().Locate(key.source(), ""),
          "unknown key '" + JoinKey(ssh_table.key_path(), key.str()) + "' (not in cluster.hosts)");
    }
  }
  PPS_RETURN_IF_ERROR(ssh_table.CheckKeys(known));

  SshSettings defaults;
  PPS_RETURN_IF_ERROR(ReadSshSettings(ssh_table, &defaults));
  for (auto& host : *hosts) {
    SshSettings settings = defaults;
    PPS_ASSIGN_OR_RETURN(const toml::table* per_host,
                         ssh_table.Table(host.name, Need::kOptional, "{address = \"10.0.0.1\"}"));
    if (per_host != nullptr) {
      TableReader host_table(section.source(), *per_host, JoinKey(ssh_table.key_path(), host.name));
      PPS_RETURN_IF_ERROR(host_table.CheckKeys({"address", "user", "port", "key"}));
      PPS_RETURN_IF_ERROR(host_table.String("address", &host.address, Need::kOptional));
      PPS_RETURN_IF_ERROR(ReadSshSettings(host_table, &settings));
      if (host.address.empty()) {
        return KeyError(host_table.KeyLoc("address"), "expected a non-empty address");
      }
    }
    host.ssh_user = settings.user;
    host.ssh_port = settings.port;
    host.ssh_key = settings.key;
  }
  return Status::Ok();
}

}  // namespace

Status ReadCluster(const TableReader& section, const std::string& base_dir, ClusterSpec* out) {
  PPS_RETURN_IF_ERROR(section.CheckKeys({"hosts", "gpus_per_node", "hardware", "launcher", "ssh"}));
  out->origin = section.origin();
  PPS_RETURN_IF_ERROR(ReadHosts(section, &out->hosts));
  PPS_RETURN_IF_ERROR(section.Int("gpus_per_node", &out->gpus_per_node, Need::kOptional, 1));
  PPS_RETURN_IF_ERROR(section.String("hardware", &out->hardware, Need::kOptional));
  if (out->hardware.empty()) {
    return KeyError(section.KeyLoc("hardware"), "expected a profile name or a path");
  }
  // A bare name ("rtx-6000d") picks a shipped profile; anything with a slash
  // is a file the user wrote, found relative to the spec like other paths.
  if (out->hardware.find('/') != std::string::npos) {
    out->hardware = ResolvePath(base_dir, out->hardware);
  }
  PPS_RETURN_IF_ERROR(section.Enum("launcher", &out->launcher, {"local", "ssh", "slurm"}));
  return ReadSsh(section, &out->hosts);
}

}  // namespace ppsearch::spec

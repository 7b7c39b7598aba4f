// [cluster]: the hosts, their GPUs, and how to reach them.
//
// A host is a name, or an inline table that also gives its address and HTTP
// port (several "nodes" on one machine for a rehearsal):
//   hosts = ["601", "602"]
//   hosts = [{name = "n0", address = "127.0.0.1"}, {name = "n1", address = "127.0.0.2"}]
// Per-host SSH settings live under [cluster.ssh]: its user/port/key keys are
// defaults for every host, and a sub-table per host name overrides them and
// may set the address:
//   [cluster.ssh]
//   user = "serving"
//   options = ["StrictHostKeyChecking=yes"]
//   [cluster.ssh.601]
//   address = "10.0.6.1"

#include <algorithm>
#include <set>

#include "spec/sections.h"
#include "util/excerpt.h"
#include "util/files.h"
#include "util/host_name.h"

namespace ppsearch::spec {
namespace {

struct SshSettings {
  std::string user;
  int port = 22;
  std::string key;
};

// The user name reaches ssh's command line as `-l USER`; keep it to what
// POSIX allows in a login name.
bool IsSafeUser(const std::string& user) {
  if (user.empty() || user.front() == '-') return false;
  for (char c : user)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '-')
      return false;
  return true;
}

Status ReadSshSettings(const TableReader& table, SshSettings* out) {
  PPS_RETURN_IF_ERROR(table.String("user", &out->user, Need::kOptional));
  if (table.Find("user") != nullptr && !IsSafeUser(out->user))
    return KeyError(
        table.KeyLoc("user"),
        "expected a login name (letters, digits, '.', '_', '-'), got '" + Excerpt(out->user) + "'");
  PPS_RETURN_IF_ERROR(table.Int("port", &out->port, Need::kOptional, 1, 65535));
  PPS_RETURN_IF_ERROR(table.String("key", &out->key, Need::kOptional));
  return Status::Ok();
}

Status CheckAddress(const std::string& address, const SourceLoc& loc) {
  if (!IsValidHostAddress(address))
    return KeyError(loc, "expected " + HostAddressRule() + ", got '" + Excerpt(address) + "'");
  return Status::Ok();
}

Result<HostSpec> ReadHostEntry(const TableReader& section, const toml::node& entry,
                               const SourceLoc& loc) {
  HostSpec host;
  host.origin = loc;
  if (const toml::table* t = entry.as_table()) {
    TableReader table(section.source(), *t, loc.key);
    PPS_RETURN_IF_ERROR(table.CheckKeys(kHostTableKeys));
    PPS_RETURN_IF_ERROR(table.String("name", &host.name, Need::kRequired));
    PPS_RETURN_IF_ERROR(table.String("address", &host.address, Need::kOptional));
    PPS_RETURN_IF_ERROR(table.Int("server_port", &host.server_port, Need::kOptional, 1, 65535));
    if (table.Find("address") != nullptr)
      PPS_RETURN_IF_ERROR(CheckAddress(host.address, table.KeyLoc("address")));
    host.origin = table.KeyLoc("name");
  } else if (entry.is_string()) {
    host.name = entry.as_string()->get();
  } else {
    return KeyError(loc, "expected a host name or {name = \"...\", address = \"...\"}, got " +
                             DescribeType(entry));
  }
  // Host names become evidence file names and command words.
  if (!IsValidHostName(host.name))
    return KeyError(host.origin,
                    "expected " + HostNameRule() + ", got '" + Excerpt(host.name) + "'");
  if (host.address.empty()) {
    host.address = host.name;
    if (!IsValidHostAddress(host.address))
      return KeyError(host.origin, "'" + host.name +
                                       "' is not a reachable address; give "
                                       "{name = \"" +
                                       host.name + "\", address = \"...\"}");
  }
  return host;
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
    PPS_ASSIGN_OR_RETURN(HostSpec host, ReadHostEntry(section, entry, loc));
    auto same = [&](const HostSpec& h) { return h.name == host.name; };
    if (std::any_of(hosts->begin(), hosts->end(), same)) {
      return KeyError(host.origin, "host '" + Excerpt(host.name) + "' is listed twice");
    }
    hosts->push_back(std::move(host));
  }
  return Status::Ok();
}

// Host names are keys of [cluster.ssh] next to the defaults, so the set of
// known keys depends on cluster.hosts.
Status ReadSsh(const TableReader& section, const std::string& base_dir, ClusterSpec* cluster) {
  std::vector<HostSpec>* hosts = &cluster->hosts;
  PPS_ASSIGN_OR_RETURN(const toml::table* ssh, section.Table("ssh", Need::kOptional));
  if (ssh == nullptr) return Status::Ok();
  TableReader ssh_table(section.source(), *ssh, JoinKey(section.key_path(), "ssh"));
  std::vector<std::string> known = kSshKeys;
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
  PPS_RETURN_IF_ERROR(ssh_table.StringList("options", &cluster->ssh_options, false));
  for (size_t i = 0; i < cluster->ssh_options.size(); ++i) {
    const std::string& o = cluster->ssh_options[i];
    if (o.find('=') == std::string::npos || o.front() == '-')
      return KeyError(ssh_table.KeyLoc("options"),
                      "expected ssh options as Name=value (e.g. \"StrictHostKeyChecking=yes\"), "
                      "got '" +
                          Excerpt(o) + "'");
  }
  PPS_RETURN_IF_ERROR(ssh_table.String("config", &cluster->ssh_config, Need::kOptional));
  if (!cluster->ssh_config.empty())
    cluster->ssh_config = ResolvePath(base_dir, cluster->ssh_config);

  SshSettings defaults;
  PPS_RETURN_IF_ERROR(ReadSshSettings(ssh_table, &defaults));
  if (!defaults.key.empty()) defaults.key = ResolvePath(base_dir, defaults.key);
  for (auto& host : *hosts) {
    SshSettings settings = defaults;
    PPS_ASSIGN_OR_RETURN(const toml::table* per_host,
                         ssh_table.Table(host.name, Need::kOptional, "{address = \"10.0.0.1\"}"));
    if (per_host != nullptr) {
      TableReader host_table(section.source(), *per_host, JoinKey(ssh_table.key_path(), host.name));
      PPS_RETURN_IF_ERROR(host_table.CheckKeys(kSshHostKeys));
      if (host_table.Find("address") != nullptr) {
        PPS_RETURN_IF_ERROR(host_table.String("address", &host.address, Need::kRequired));
        PPS_RETURN_IF_ERROR(CheckAddress(host.address, host_table.KeyLoc("address")));
      }
      PPS_RETURN_IF_ERROR(ReadSshSettings(host_table, &settings));
      if (host_table.Find("key") != nullptr) settings.key = ResolvePath(base_dir, settings.key);
    }
    host.ssh_user = settings.user;
    host.ssh_port = settings.port;
    host.ssh_key = settings.key;
  }
  return Status::Ok();
}

Status ReadSlurm(const TableReader& section, SlurmSpec* out) {
  PPS_ASSIGN_OR_RETURN(const toml::table* t, section.Table("slurm", Need::kOptional));
  if (t == nullptr) return Status::Ok();
  TableReader slurm(section.source(), *t, JoinKey(section.key_path(), "slurm"));
  PPS_RETURN_IF_ERROR(slurm.CheckKeys(kSlurmKeys));
  out->origin = slurm.origin();
  PPS_RETURN_IF_ERROR(slurm.StringList("srun_args", &out->srun_args, false));
  PPS_RETURN_IF_ERROR(slurm.StringList("sbatch_args", &out->sbatch_args, false));
  PPS_RETURN_IF_ERROR(slurm.String("partition", &out->partition, Need::kOptional));
  PPS_RETURN_IF_ERROR(slurm.String("account", &out->account, Need::kOptional));
  PPS_RETURN_IF_ERROR(slurm.String("time_limit", &out->time_limit, Need::kOptional));
  for (const std::string* v : {&out->partition, &out->account, &out->time_limit})
    if (v->find('\n') != std::string::npos)
      return KeyError(slurm.origin(), "values must be one line (they become #SBATCH lines)");
  for (const auto& a : out->sbatch_args)
    if (a.find('\n') != std::string::npos)
      return KeyError(slurm.KeyLoc("sbatch_args"),
                      "values must be one line (they become #SBATCH lines)");
  return Status::Ok();
}

struct PortUse {
  std::string address;
  int port = 0;
  std::string what;  // "the HTTP port of host 'n1'"
  SourceLoc loc;     // where it was written, or the table that leaves it at its default
  bool written = false;
};

// The ssh port's table for `host`: its own [cluster.ssh.<host>] when that
// sets one, else [cluster.ssh]; nullptr without [cluster.ssh].
const toml::table* SshPortTable(const TableReader& section, const std::string& host,
                                std::string* key_path) {
  const toml::node* ssh_node = section.Find("ssh");
  const toml::table* ssh = ssh_node != nullptr ? ssh_node->as_table() : nullptr;
  if (ssh == nullptr) return nullptr;
  *key_path = JoinKey(section.key_path(), "ssh");
  const toml::node* per_host = ssh->get(host);
  if (per_host != nullptr && per_host->is_table() && per_host->as_table()->get("port") != nullptr) {
    *key_path = JoinKey(*key_path, host);
    return per_host->as_table();
  }
  return ssh;
}

PortUse Use(const TableReader& table, std::string_view key, std::string address, int port,
            std::string what) {
  return {std::move(address), port, std::move(what), table.KeyLoc(key), table.Find(key) != nullptr};
}

// A host listens on its nodes' HTTP ports, node 0's --dist-init-addr port
// and, with the ssh launcher, sshd's port: two of them equal on one address
// is a server that cannot bind, found only when a sample starts.
std::vector<PortUse> PortUses(const TableReader& section, const ClusterSpec& cluster) {
  std::vector<PortUse> uses;
  const toml::array& hosts = *section.Find("hosts")->as_array();
  std::set<std::string> sshd_listed;  // nodes on one machine share its sshd
  for (size_t n = 0; n < cluster.hosts.size(); ++n) {
    const HostSpec& host = cluster.hosts[n];
    const std::string& address = cluster.Address(static_cast<int>(n));
    const std::string http = "the HTTP port of host '" + host.name + "'";
    const toml::table* entry = hosts.get(n)->as_table();
    if (entry != nullptr && entry->get("server_port") != nullptr) {
      const TableReader t(section.source(), *entry,
                          JoinKey(section.key_path(), "hosts") + "[" + std::to_string(n) + "]");
      uses.push_back(Use(t, "server_port", address, host.server_port, http));
    } else {
      uses.push_back(Use(section, "server_port", address, cluster.server_port, http));
    }
    if (n == 0)
      uses.push_back(Use(section, "dist_init_port", address, cluster.dist_init_port,
                         "node 0's --dist-init-addr port"));
    if (cluster.launcher != "ssh" || !sshd_listed.insert(address).second) continue;
    std::string key_path;
    const std::string sshd = "the ssh port of host '" + host.name + "'";
    if (const toml::table* t = SshPortTable(section, host.name, &key_path))
      uses.push_back(
          Use(TableReader(section.source(), *t, key_path), "port", address, host.ssh_port, sshd));
    else
      uses.push_back({address, host.ssh_port, sshd,
                      section.source().Locate(section.table().source(),
                                              JoinKey(section.key_path(), "ssh.port")),
                      false});
  }
  return uses;
}

Status CheckPorts(const TableReader& section, const ClusterSpec& cluster) {
  const std::vector<PortUse> uses = PortUses(section, cluster);
  for (size_t i = 0; i < uses.size(); ++i)
    for (size_t j = 0; j < i; ++j) {
      if (uses[i].address != uses[j].address || uses[i].port != uses[j].port) continue;
      // Point at a value the user wrote: a default is not where to fix it.
      const PortUse& at = uses[i].written || !uses[j].written ? uses[i] : uses[j];
      const PortUse& other = &at == &uses[i] ? uses[j] : uses[i];
      return KeyError(
          at.loc, "port " + std::to_string(at.port) + " is " + at.what + " and also " + other.what +
                      " (" + (other.written ? other.loc.Where() : other.loc.key + ", by default") +
                      "), both on " + at.address + "; the ports one host listens on must differ");
    }
  return Status::Ok();
}

// Step names are checked here, so a misspelt one ("containers") is a config
// error instead of a step that silently runs without sudo.
Status ReadSudo(const TableReader& section, const std::string& base_dir, SudoSpec* out) {
  PPS_ASSIGN_OR_RETURN(const toml::table* t, section.Table("sudo", Need::kOptional));
  if (t == nullptr) return Status::Ok();
  TableReader sudo(section.source(), *t, JoinKey(section.key_path(), "sudo"));
  PPS_RETURN_IF_ERROR(sudo.CheckKeys(kSudoKeys));
  out->origin = sudo.origin();
  PPS_RETURN_IF_ERROR(sudo.StringList("steps", &out->steps, false));
  for (size_t i = 0; i < out->steps.size(); ++i) {
    const std::string& step = out->steps[i];
    if (std::find(kSudoSteps.begin(), kSudoSteps.end(), step) == kSudoSteps.end())
      return KeyError(sudo.KeyLoc("steps"),
                      "expected step names out of \"container\", \"stop\", got '" + step + "'");
    if (std::find(out->steps.begin(), out->steps.begin() + i, step) != out->steps.begin() + i)
      return KeyError(sudo.KeyLoc("steps"), "step '" + step + "' is listed twice");
  }
  PPS_RETURN_IF_ERROR(sudo.String("password_file", &out->password_file, Need::kOptional));
  if (sudo.Find("password_file") != nullptr) {
    if (out->password_file.empty())
      return KeyError(sudo.KeyLoc("password_file"), "expected a file name, got an empty string");
    out->password_file = ResolvePath(base_dir, out->password_file);
  }
  return Status::Ok();
}

}  // namespace

Status ReadCluster(const TableReader& section, const std::string& base_dir, ClusterSpec* out) {
  PPS_RETURN_IF_ERROR(section.CheckKeys(kClusterKeys));
  out->origin = section.origin();
  PPS_RETURN_IF_ERROR(ReadHosts(section, &out->hosts));
  PPS_RETURN_IF_ERROR(
      section.Int("gpus_per_node", &out->gpus_per_node, Need::kOptional, 1, kMaxGpusPerNode));
  PPS_RETURN_IF_ERROR(section.String("hardware", &out->hardware, Need::kOptional));
  if (out->hardware.empty()) {
    return KeyError(section.KeyLoc("hardware"), "expected a profile name or a path");
  }
  if (HardwareNamesAFile(out->hardware)) out->hardware = ResolvePath(base_dir, out->hardware);
  PPS_RETURN_IF_ERROR(section.Enum("launcher", &out->launcher, {"local", "ssh", "slurm"}));
  PPS_RETURN_IF_ERROR(section.Int("server_port", &out->server_port, Need::kOptional, 1, 65535));
  PPS_RETURN_IF_ERROR(
      section.Int("dist_init_port", &out->dist_init_port, Need::kOptional, 1, 65535));
  PPS_RETURN_IF_ERROR(section.StringList("nvidia_smi", &out->nvidia_smi, true));
  PPS_RETURN_IF_ERROR(ReadSlurm(section, &out->slurm));
  PPS_RETURN_IF_ERROR(ReadSudo(section, base_dir, &out->sudo));
  PPS_RETURN_IF_ERROR(ReadSsh(section, base_dir, out));
  return CheckPorts(section, *out);
}

}  // namespace ppsearch::spec

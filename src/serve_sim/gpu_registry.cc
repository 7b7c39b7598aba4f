#include "serve_sim/gpu_registry.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "launch/process.h"
#include "util/files.h"

namespace ppsearch::serve_sim {
namespace {

uint64_t Fnv1a(const std::string& s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

std::string Mib(double v, bool units) {
  const std::string n = fmt::format("{}", static_cast<int64_t>(std::llround(v)));
  return units ? n + " MiB" : n;
}

const std::vector<std::string>& GpuFields() {
  static const std::vector<std::string> f = {"index",       "uuid",          "name",
                                             "count",       "memory.used",   "memory.total",
                                             "memory.free", "driver_version"};
  return f;
}

const std::vector<std::string>& AppFields() {
  static const std::vector<std::string> f = {
      "pid", "process_name", "used_memory", "used_gpu_memory", "gpu_uuid", "gpu_name"};
  return f;
}

std::string HeaderName(const std::string& field, bool units) {
  std::string name = field == "used_memory" ? "used_gpu_memory" : field;
  if (units &&
      (field.rfind("memory.", 0) == 0 || field == "used_memory" || field == "used_gpu_memory"))
    name += " [MiB]";
  return name;
}

std::string JoinCsv(const std::vector<std::string>& cells) {
  std::string line;
  for (size_t i = 0; i < cells.size(); ++i) line += (i ? ", " : "") + cells[i];
  return line + "\n";
}

}  // namespace

std::string FormatRegistration(const GpuRegistration& r) {
  nlohmann::json gpus = nlohmann::json::array();
  for (const auto& g : r.gpus)
    gpus.push_back({{"index", g.index},
                    {"uuid", g.uuid},
                    {"name", g.name},
                    {"used_mib", g.used_mib.value_or(0)},
                    {"total_mib", g.total_mib.value_or(0)}});
  nlohmann::json j = {
      {"pid", r.pid},
      {"start_ticks", r.start_ticks},
      {"process_name", r.process_name},
      {"node_rank", r.node_rank},
      {"held_until_unix_s",
       r.held_until_unix_s > 0 ? nlohmann::json(r.held_until_unix_s) : nlohmann::json(nullptr)},
      {"gpus", gpus}};
  return j.dump(2) + "\n";
}

Result<GpuRegistration> ParseRegistration(const std::string& text, const std::string& source) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return MakeError(source + ": not a JSON object");
  auto bad = [&](const std::string& what) { return MakeError(source + ": " + what); };
  if (!j.contains("pid") || !j["pid"].is_number_integer()) return bad("\"pid\" must be an integer");
  if (!j.contains("gpus") || !j["gpus"].is_array()) return bad("\"gpus\" must be a list");
  GpuRegistration r;
  r.pid = j["pid"].get<int>();
  if (j.contains("start_ticks")) {
    if (!j["start_ticks"].is_number_unsigned())
      return bad("\"start_ticks\" must be a non-negative integer");
    r.start_ticks = j["start_ticks"].get<uint64_t>();
  }
  r.process_name = j.value("process_name", std::string());
  r.node_rank = j.value("node_rank", 0);
  if (j.contains("held_until_unix_s") && j["held_until_unix_s"].is_number())
    r.held_until_unix_s = j["held_until_unix_s"].get<double>();
  for (const auto& g : j["gpus"]) {
    if (!g.is_object() || !g.contains("index") || !g["index"].is_number_integer() ||
        !g.contains("used_mib") || !g["used_mib"].is_number())
      return bad("each of \"gpus\" needs an integer \"index\" and a number \"used_mib\"");
    nvidia_smi::GpuMemory m;
    m.index = g["index"].get<int>();
    if (m.index < 0 || m.index >= kMaxSmiGpus)
      return bad(fmt::format("GPU index {} is not between 0 and {}", m.index, kMaxSmiGpus - 1));
    m.uuid = g.value("uuid", std::string());
    m.name = g.value("name", std::string());
    m.used_mib = g["used_mib"].get<double>();
    if (g.contains("total_mib") && g["total_mib"].is_number())
      m.total_mib = g["total_mib"].get<double>();
    r.gpus.push_back(m);
  }
  return r;
}

bool IsLive(const GpuRegistration& r, double now_unix_s,
            const std::function<bool(int, uint64_t)>& pid_alive) {
  return pid_alive(r.pid, r.start_ticks) || r.held_until_unix_s > now_unix_s;
}

Result<SmiQuery> ParseSmiArgs(const std::vector<std::string>& args) {
  SmiQuery q;
  bool have_query = false, have_format = false;
  for (const std::string& a : args) {
    const size_t eq = a.find('=');
    const std::string key = a.substr(0, eq);
    const std::string value = eq == std::string::npos ? "" : a.substr(eq + 1);
    if (key == "--query-gpu" || key == "--query-compute-apps") {
      q.compute_apps = key == "--query-compute-apps";
      have_query = true;
      const auto& allowed = q.compute_apps ? AppFields() : GpuFields();
      size_t pos = 0;
      while (pos <= value.size()) {
        size_t comma = value.find(',', pos);
        if (comma == std::string::npos) comma = value.size();
        std::string field = value.substr(pos, comma - pos);
        pos = comma + 1;
        if (field.empty()) continue;
        if (std::find(allowed.begin(), allowed.end(), field) == allowed.end())
          return MakeError(fmt::format(
              "Field \"{}\" is not a valid field to query.\n\nSee 'nvidia-smi {}' for more "
              "information.",
              field, q.compute_apps ? "--help-query-compute-apps" : "--help-query-gpu"));
        q.fields.push_back(field);
      }
      if (q.fields.empty()) return MakeError("Missing value for " + key + ".");
    } else if (key == "--format") {
      have_format = true;
      bool csv = false;
      size_t pos = 0;
      while (pos <= value.size()) {
        size_t comma = value.find(',', pos);
        if (comma == std::string::npos) comma = value.size();
        const std::string opt = value.substr(pos, comma - pos);
        pos = comma + 1;
        if (opt == "csv") {
          csv = true;
        } else if (opt == "noheader") {
          q.header = false;
        } else if (opt == "nounits") {
          q.units = false;
        } else {
          return MakeError("\"" + opt + "\" is not a valid format option.");
        }
      }
      if (!csv)
        return MakeError("Only CSV output is supported: --format=csv[,noheader][,nounits].");
    } else {
      return MakeError("Invalid combination of input arguments: '" + a +
                       "' is not supported by smi-sim (it answers --query-gpu and "
                       "--query-compute-apps with --format=csv).");
    }
  }
  if (!have_query) return MakeError("smi-sim needs --query-gpu=... or --query-compute-apps=...");
  if (!have_format) return MakeError("'--format' option is required with a query option.");
  return q;
}

std::string SimGpuUuid(const std::string& seed, int index) {
  const uint64_t h = Fnv1a(seed);
  return fmt::format("GPU-{:08x}-{:04x}-4{:03x}-8{:03x}-{:012x}", h >> 32, (h >> 16) & 0xffff,
                     h & 0xfff, (h >> 4) & 0xfff, static_cast<uint64_t>(index));
}

std::string GpuUuidSeed(const std::string& state_dir) {
  std::error_code ec;
  std::filesystem::path p = std::filesystem::absolute(state_dir, ec);
  if (ec) p = state_dir;
  std::string seed = p.lexically_normal().string();
  while (seed.size() > 1 && seed.back() == '/') seed.pop_back();
  return seed;
}

namespace {

// One GPU as smi-sim lists it.
struct ListedGpu {
  std::string uuid, name;
  double total_mib = 0, used_mib = 0;
};

// GPUs 0..count-1, and any a live registration holds beyond: described by
// the first live registration (by pid) that says, else by smi-sim's options.
std::vector<ListedGpu> ListGpus(const SmiGpus& gpus, const std::vector<GpuRegistration>& live) {
  int count = gpus.count;
  for (const auto& r : live)
    for (const auto& g : r.gpus) count = std::max(count, g.index + 1);
  std::vector<ListedGpu> out(static_cast<size_t>(std::max(count, 0)));
  for (const auto& r : live) {
    for (const auto& g : r.gpus) {
      if (g.index < 0) continue;
      ListedGpu& l = out[static_cast<size_t>(g.index)];
      l.used_mib += g.used_mib.value_or(0);
      if (l.uuid.empty()) l.uuid = g.uuid;
      if (l.name.empty()) l.name = g.name;
      if (l.total_mib <= 0 && g.total_mib && *g.total_mib > 0) l.total_mib = *g.total_mib;
    }
  }
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i].uuid.empty()) out[i].uuid = SimGpuUuid(gpus.uuid_seed, static_cast<int>(i));
    if (out[i].name.empty()) out[i].name = gpus.name;
    if (out[i].total_mib <= 0) out[i].total_mib = gpus.total_mib;
  }
  return out;
}

}  // namespace

std::string AnswerSmiQuery(const SmiQuery& q, const SmiGpus& gpus,
                           const std::vector<GpuRegistration>& live) {
  std::string out;
  std::vector<std::string> header;
  for (const auto& f : q.fields) header.push_back(HeaderName(f, q.units));
  if (q.header) out += JoinCsv(header);
  const std::vector<ListedGpu> listed = ListGpus(gpus, live);
  const int count = static_cast<int>(listed.size());
  auto gpu_cell = [&](const std::string& f, int i) -> std::string {
    const ListedGpu& g = listed[static_cast<size_t>(i)];
    if (f == "index") return std::to_string(i);
    if (f == "uuid" || f == "gpu_uuid") return g.uuid;
    if (f == "name" || f == "gpu_name") return g.name;
    if (f == "count") return std::to_string(count);
    if (f == "driver_version") return gpus.driver_version;
    if (f == "memory.used") return Mib(g.used_mib, q.units);
    if (f == "memory.total") return Mib(g.total_mib, q.units);
    // nvidia-smi's free memory is never negative; the used figure shows any excess.
    if (f == "memory.free") return Mib(std::max(g.total_mib - g.used_mib, 0.0), q.units);
    return "[N/A]";
  };
  if (!q.compute_apps) {
    for (int i = 0; i < count; ++i) {
      std::vector<std::string> cells;
      for (const auto& f : q.fields) cells.push_back(gpu_cell(f, i));
      out += JoinCsv(cells);
    }
    return out;
  }
  for (int i = 0; i < count; ++i) {
    for (const auto& r : live) {
      for (const auto& g : r.gpus) {
        if (g.index != i || g.used_mib.value_or(0) <= 0) continue;
        std::vector<std::string> cells;
        for (const auto& f : q.fields) {
          if (f == "pid") {
            cells.push_back(std::to_string(r.pid));
          } else if (f == "process_name") {
            cells.push_back(r.process_name);
          } else if (f == "used_memory" || f == "used_gpu_memory") {
            cells.push_back(Mib(*g.used_mib, q.units));
          } else {
            cells.push_back(gpu_cell(f, i));
          }
        }
        out += JoinCsv(cells);
      }
    }
  }
  return out;
}

GpuRegistry::GpuRegistry(std::string dir, int pid) : dir_(std::move(dir)) {
  if (!dir_.empty()) path_ = dir_ + "/serve-sim-" + std::to_string(pid) + ".json";
}

Status GpuRegistry::Register(const GpuRegistration& r) {
  if (dir_.empty()) return Status::Ok();
  last_ = r;
  registered_ = true;
  return WriteFileAtomic(path_, FormatRegistration(r));
}

Status GpuRegistry::Release(double until_unix_s) {
  if (dir_.empty() || !registered_) return Status::Ok();
  if (until_unix_s > 0) {
    last_.held_until_unix_s = until_unix_s;
    return WriteFileAtomic(path_, FormatRegistration(last_));
  }
  registered_ = false;
  std::error_code ec;
  std::filesystem::remove(path_, ec);
  if (ec) return MakeError("cannot remove " + path_ + ": " + ec.message());
  return Status::Ok();
}

bool PidAlive(int pid, uint64_t start_ticks) {
  if (pid <= 0) return false;
  if (!launch::ProcessExists(pid)) return false;
  const std::optional<launch::ProcStat> stat = launch::ReadProcStat(pid);
  // Gone between the two looks.
  if (!stat) return false;
  // A zombie has exited (and freed its GPU memory); only its parent has not reaped it.
  if (stat->state == 'Z') return false;
  return start_ticks == 0 || stat->start_ticks == start_ticks;
}

std::vector<GpuRegistration> ReadLiveRegistrations(const std::string& dir, double now_unix_s) {
  std::vector<GpuRegistration> live;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("serve-sim-", 0) != 0 || entry.path().extension() != ".json") continue;
    auto text = ReadFile(entry.path().string());
    if (!text.ok()) continue;
    auto r = ParseRegistration(*text, entry.path().string());
    if (r.ok() && IsLive(*r, now_unix_s, PidAlive)) live.push_back(std::move(*r));
  }
  std::sort(live.begin(), live.end(), [](const auto& a, const auto& b) { return a.pid < b.pid; });
  return live;
}

}  // namespace ppsearch::serve_sim

#include "hardware/hardware.h"

#include <fmt/format.h>
#include <toml++/toml.h>

#include <algorithm>
#include <charconv>
#include <climits>
#include <cmath>
#include <filesystem>
#include <optional>
#include <string_view>
#include <utility>

#include "util/did_you_mean.h"
#include "util/files.h"
#include "util/source_loc.h"

namespace ppsearch::hardware {
namespace {

constexpr std::string_view kTomlSuffix = ".toml";

const std::vector<std::string> kProfileKeys = {"name",
                                               "gpu_name",
                                               "sm_count",
                                               "memory_mib",
                                               "memory_bw_gbps",
                                               "bf16_tflops",
                                               "fp8_tflops",
                                               "fp4_tflops",
                                               "w4a8_tflops",
                                               "attention_tflops",
                                               "attention_backend",
                                               "attention_backends",
                                               "fp4_tensor_cores",
                                               "gpus_per_node",
                                               "nvlink",
                                               "pcie_gen",
                                               "p2p_gbps",
                                               "p2p_latency_us",
                                               "nic_gbps_per_gpu",
                                               "inter_latency_us",
                                               "intra_allreduce",
                                               "intra_alltoall",
                                               "tensor_burst",
                                               "base"};
const std::vector<std::string> kCollectiveKeys = {"group_size", "busbw_gbps", "latency_us"};
const std::vector<std::string> kAllReduceKeys = {"group_size", "busbw_gbps", "latency_us",
                                                 "busbw_range_gbps"};
const std::vector<std::string> kMeasuredRateKeys = {"measured", "m", "n", "k"};
const std::vector<std::string> kBurstKeys = {"bf16_tflops", "window_ms", "payback_bf16_tflops",
                                             "payback_ms", "refill_ratio"};

std::string HardwareDir() { return DataDir() + "/hardware"; }

bool EndsWith(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

std::string Join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : ", ") + item;
  return out;
}

std::string FormatNumber(double value) {
  char buffer[64];
  auto [end, ec] = std::to_chars(buffer, buffer + sizeof(buffer), value);
  if (ec != std::errc()) return std::to_string(value);
  return std::string(buffer, end);
}

// The value as the user wrote it, for "expected X, got Y": scalars verbatim
// (strings quoted), containers by kind.
std::string ShowValue(const toml::node& node) {
  if (const auto* s = node.as_string()) return "\"" + s->get() + "\"";
  if (const auto* i = node.as_integer()) return std::to_string(i->get());
  if (const auto* f = node.as_floating_point()) return FormatNumber(f->get());
  if (const auto* b = node.as_boolean()) return b->get() ? "true" : "false";
  if (node.is_array()) return "an array";
  if (node.is_table()) return "a table";
  return "a date or time";
}

// One TOML table of a profile file: the root or one [[intra_*]] entry.
// Every message starts with the file position and names the dotted key.
class TableReader {
 public:
  TableReader(const std::string& path, const toml::table& table, std::string key_prefix)
      : path_(path), table_(table), key_prefix_(std::move(key_prefix)) {}

  // Rejects keys outside `known`, the first one written first.
  Status CheckKeys(const std::vector<std::string>& known) const {
    const toml::key* unknown = nullptr;
    for (const auto& [key, node] : table_) {
      if (std::find(known.begin(), known.end(), key.str()) != known.end()) continue;
      // toml++ iterates alphabetically; report what the user wrote first.
      if (unknown == nullptr || Before(key.source(), unknown->source())) unknown = &key;
    }
    if (unknown == nullptr) return Status::Ok();
    std::string message = "unknown key '" + Dotted(unknown->str()) + "'";
    message += DidYouMean(unknown->str(), known);
    return MakeError(Locate(unknown->source(), "").Position() + ": " + message);
  }

  Result<double> PositiveNumber(std::string_view key) const {
    PPS_ASSIGN_OR_RETURN(const toml::node* node, Require(key));
    double value = 0;
    if (const auto* i = node->as_integer()) value = static_cast<double>(i->get());
    if (const auto* f = node->as_floating_point()) value = f->get();
    // A non-number leaves value at 0; TOML's nan and inf fail here too.
    if (!(value > 0) || !std::isfinite(value)) return Expected(key, "a positive number", *node);
    return value;
  }

  // A positive number of at most `max`, `what` naming it in the message.
  Result<double> PositiveNumberUpTo(std::string_view key, double max,
                                    const std::string& what) const {
    PPS_ASSIGN_OR_RETURN(double value, PositiveNumber(key));
    if (value > max) return Expected(key, what, *table_.get(key));
    return value;
  }

  Result<double> NonNegativeNumber(std::string_view key) const {
    PPS_ASSIGN_OR_RETURN(const toml::node* node, Require(key));
    double value = -1;
    if (const auto* i = node->as_integer()) value = static_cast<double>(i->get());
    if (const auto* f = node->as_floating_point()) value = f->get();
    if (!(value >= 0) || !std::isfinite(value)) return Expected(key, "a number >= 0", *node);
    return value;
  }

  Result<int> IntAtLeast(std::string_view key, int min) const {
    PPS_ASSIGN_OR_RETURN(const toml::node* node, Require(key));
    const auto* i = node->as_integer();
    if (i == nullptr || i->get() < min || i->get() > INT_MAX) {
      std::string what = min == 1 ? "a positive integer" : "an integer >= " + std::to_string(min);
      return Expected(key, what, *node);
    }
    return static_cast<int>(i->get());
  }

  Result<std::string> NonEmptyString(std::string_view key) const {
    PPS_ASSIGN_OR_RETURN(const toml::node* node, Require(key));
    const auto* s = node->as_string();
    if (s == nullptr || s->get().empty()) return Expected(key, "a non-empty string", *node);
    return s->get();
  }

  Result<bool> Bool(std::string_view key) const {
    PPS_ASSIGN_OR_RETURN(const toml::node* node, Require(key));
    const auto* b = node->as_boolean();
    if (b == nullptr) return Expected(key, "true or false", *node);
    return b->get();
  }

  bool Has(std::string_view key) const { return table_.contains(key); }

  Result<const toml::node*> Require(std::string_view key) const {
    const toml::node* node = table_.get(key);
    if (node != nullptr) return node;
    // The root table has no useful position; an [[entry]] points at its header.
    std::string where = key_prefix_.empty() ? path_ : Locate(table_.source(), "").Position();
    return MakeError(where + ": missing required key '" + Dotted(key) + "'");
  }

  // "<file:line:col>: key '<dotted>': <what>", positioned at the key.
  Error KeyError(std::string_view key, const std::string& what) const {
    auto it = table_.find(key);
    toml::source_region region = it != table_.end() ? it->first.source() : table_.source();
    return MakeError(Locate(region, Dotted(key)).Where() + ": " + what);
  }

  Error Expected(std::string_view key, const std::string& what, const toml::node& got) const {
    return KeyError(key, "expected " + what + ", got " + ShowValue(got));
  }

  std::string Dotted(std::string_view key) const {
    return key_prefix_.empty() ? std::string(key) : key_prefix_ + "." + std::string(key);
  }

  const std::string& path() const { return path_; }

 private:
  static bool Before(const toml::source_region& a, const toml::source_region& b) {
    return std::pair(a.begin.line, a.begin.column) < std::pair(b.begin.line, b.begin.column);
  }

  SourceLoc Locate(const toml::source_region& region, std::string key) const {
    SourceLoc loc;
    // A key an overlay's base gave is located in the base's file.
    loc.file = region.path && !region.path->empty() ? *region.path : path_;
    loc.line = static_cast<int>(region.begin.line);
    loc.col = static_cast<int>(region.begin.column);
    loc.key = std::move(key);
    return loc;
  }

  const std::string& path_;
  const toml::table& table_;
  std::string key_prefix_;
};

// `busbw_range_gbps = [lo, hi]`: two positive numbers holding the entry's
// own busbw between them.
Status ReadBusBwRange(const TableReader& entry, IntraCollective& out) {
  PPS_ASSIGN_OR_RETURN(const toml::node* node, entry.Require("busbw_range_gbps"));
  const toml::array* array = node->as_array();
  std::optional<double> lo, hi;
  if (array != nullptr && array->size() == 2) {
    lo = array->at(0).value<double>();
    hi = array->at(1).value<double>();
  }
  if (!lo || !hi)
    return entry.Expected("busbw_range_gbps", "[lowest, highest], two positive GB/s figures",
                          *node);
  const std::string got = "[" + FormatNumber(*lo) + ", " + FormatNumber(*hi) + "]";
  if (!(*lo > 0) || !std::isfinite(*lo) || !std::isfinite(*hi))
    return entry.KeyError("busbw_range_gbps",
                          "expected two positive, finite GB/s figures, got " + got);
  if (*hi < *lo)
    return entry.KeyError("busbw_range_gbps", "expected the lowest figure first, got " + got);
  if (out.busbw_gbps < *lo || out.busbw_gbps > *hi) {
    return entry.KeyError("busbw_range_gbps", "expected a range holding busbw_gbps (" +
                                                  FormatNumber(out.busbw_gbps) + "), got " + got);
  }
  out.busbw_lo_gbps = *lo;
  out.busbw_hi_gbps = *hi;
  return Status::Ok();
}

Result<IntraCollective> ReadCollective(const TableReader& entry, bool allreduce) {
  PPS_RETURN_IF_ERROR(entry.CheckKeys(allreduce ? kAllReduceKeys : kCollectiveKeys));
  IntraCollective out;
  // A "group" of one GPU has no collective to cost.
  PPS_ASSIGN_OR_RETURN(out.group_size, entry.IntAtLeast("group_size", 2));
  PPS_ASSIGN_OR_RETURN(out.busbw_gbps, entry.PositiveNumber("busbw_gbps"));
  PPS_ASSIGN_OR_RETURN(out.latency_us, entry.PositiveNumber("latency_us"));
  if (allreduce && entry.Has("busbw_range_gbps")) PPS_RETURN_IF_ERROR(ReadBusBwRange(entry, out));
  return out;
}

// An [[intra_*]] array: entries ascending by group size, the largest being the
// whole node, so IntraFor() never has to guess beyond what was measured.
Result<std::vector<IntraCollective>> ReadCollectives(const TableReader& root, std::string_view key,
                                                     int gpus_per_node) {
  PPS_ASSIGN_OR_RETURN(const toml::node* node, root.Require(key));
  const toml::array* array = node->as_array();
  bool all_tables =
      array != nullptr && !array->empty() &&
      std::all_of(array->begin(), array->end(), [](const toml::node& e) { return e.is_table(); });
  if (!all_tables) {
    std::string got = array != nullptr && array->empty() ? "an empty array" : ShowValue(*node);
    return root.KeyError(key,
                         "expected one or more [[" + std::string(key) + "]] tables, got " + got);
  }
  std::vector<IntraCollective> out;
  for (size_t i = 0; i < array->size(); ++i) {
    std::string prefix = std::string(key) + "[" + std::to_string(i) + "]";
    TableReader entry(root.path(), *array->at(i).as_table(), prefix);
    PPS_ASSIGN_OR_RETURN(IntraCollective c, ReadCollective(entry, key == "intra_allreduce"));
    if (!out.empty() && c.group_size <= out.back().group_size) {
      return entry.KeyError("group_size", "expected group sizes in ascending order, got " +
                                              std::to_string(c.group_size) + " after " +
                                              std::to_string(out.back().group_size));
    }
    out.push_back(c);
  }
  if (out.back().group_size != gpus_per_node) {
    std::string prefix = std::string(key) + "[" + std::to_string(out.size() - 1) + "]";
    TableReader last(root.path(), *array->back().as_table(), prefix);
    return last.KeyError("group_size", "expected the largest group to be gpus_per_node (" +
                                           std::to_string(gpus_per_node) + "), got " +
                                           std::to_string(out.back().group_size));
  }
  return out;
}

// `bf16_tflops`: a number (the cost model's rate), or a measured rate with
// the GEMM shape it was measured at: { measured = .., m = .., n = .., k = .. }.
Status ReadBf16Rate(const std::string& path, const TableReader& root, const toml::table& root_table,
                    HardwareProfile& hw) {
  const toml::node* node = root_table.get("bf16_tflops");
  const toml::table* measured = node != nullptr ? node->as_table() : nullptr;
  if (measured == nullptr) {
    if (node != nullptr && !node->is_number())
      return root.Expected(
          "bf16_tflops", "a positive number, or a table { measured = .., m = .., n = .., k = .. }",
          *node);
    PPS_ASSIGN_OR_RETURN(hw.bf16_tflops, root.PositiveNumber("bf16_tflops"));
    return Status::Ok();
  }
  TableReader reader(path, *measured, "bf16_tflops");
  PPS_RETURN_IF_ERROR(reader.CheckKeys(kMeasuredRateKeys));
  PPS_ASSIGN_OR_RETURN(hw.bf16_tflops, reader.PositiveNumber("measured"));
  PPS_ASSIGN_OR_RETURN(hw.bf16_measured_at.m, reader.IntAtLeast("m", 1));
  PPS_ASSIGN_OR_RETURN(hw.bf16_measured_at.n, reader.IntAtLeast("n", 1));
  PPS_ASSIGN_OR_RETURN(hw.bf16_measured_at.k, reader.IntAtLeast("k", 1));
  // A shape paced by DRAM measured its bandwidth, not the tensor rate: the
  // model would turn it into a rate no GEMM reaches.
  const auto& at = hw.bf16_measured_at;
  const double per_byte =
      2.0 * at.m * static_cast<double>(at.n) * at.k / Bf16GemmMinBytes(at.m, at.n, at.k);
  const double ridge = hw.bf16_tflops * 1e12 / (hw.memory_bw_gbps * 1e9);
  if (per_byte < ridge)
    return root.KeyError(
        "bf16_tflops",
        fmt::format("a {} x {} x {} GEMM does {:.0f} FLOPs per byte it moves, below the "
                    "{:.0f} at which {} TFLOPS outruns {} GB/s of DRAM: its time measures the "
                    "memory, not the tensor rate; give a larger shape",
                    at.m, at.n, at.k, per_byte, ridge, FormatNumber(hw.bf16_tflops),
                    FormatNumber(hw.memory_bw_gbps)));
  return Status::Ok();
}

Result<HardwareProfile> ReadProfile(const std::string& path, const toml::table& root_table) {
  TableReader root(path, root_table, "");
  PPS_RETURN_IF_ERROR(root.CheckKeys(kProfileKeys));
  HardwareProfile hw;
  hw.source_path = path;
  PPS_ASSIGN_OR_RETURN(hw.name, root.NonEmptyString("name"));
  // Reports and evidence name the profile; a copied file that kept the old
  // name would be reported as the wrong hardware.
  std::string stem = std::filesystem::path(path).stem().string();
  if (hw.name != stem) {
    return root.KeyError(
        "name", "expected \"" + stem + "\" (the file name without .toml), got \"" + hw.name + "\"");
  }
  PPS_ASSIGN_OR_RETURN(hw.gpu_name, root.NonEmptyString("gpu_name"));
  PPS_ASSIGN_OR_RETURN(hw.sm_count, root.IntAtLeast("sm_count", 1));
  // Past a pebibyte no GPU has it, and the plan's MiB would overflow the
  // integers it prints (1e300 printed "-0 MiB").
  PPS_ASSIGN_OR_RETURN(hw.memory_mib, root.PositiveNumberUpTo("memory_mib", kMaxGpuMemoryMib,
                                                              "a positive number of MiB up to " +
                                                                  FormatNumber(kMaxGpuMemoryMib)));
  PPS_ASSIGN_OR_RETURN(hw.memory_bw_gbps, root.PositiveNumber("memory_bw_gbps"));
  PPS_RETURN_IF_ERROR(ReadBf16Rate(path, root, root_table, hw));
  PPS_ASSIGN_OR_RETURN(hw.fp8_tflops, root.PositiveNumber("fp8_tflops"));
  PPS_ASSIGN_OR_RETURN(hw.fp4_tflops, root.PositiveNumber("fp4_tflops"));
  PPS_ASSIGN_OR_RETURN(hw.w4a8_tflops, root.PositiveNumber("w4a8_tflops"));
  PPS_ASSIGN_OR_RETURN(hw.attention_tflops, root.PositiveNumber("attention_tflops"));
  PPS_ASSIGN_OR_RETURN(hw.attention_backend, root.NonEmptyString("attention_backend"));
  if (const toml::node* other = root_table.get("attention_backends")) {
    const toml::table* t = other->as_table();
    if (t == nullptr)
      return root.Expected("attention_backends", "a table of backend = TFLOPS", *other);
    TableReader backends(path, *t, "attention_backends");
    for (const auto& [key, value] : *t) {
      PPS_ASSIGN_OR_RETURN(double rate, backends.PositiveNumber(key.str()));
      hw.attention_backends[std::string(key.str())] = rate;
    }
  }
  PPS_ASSIGN_OR_RETURN(hw.fp4_tensor_cores, root.Bool("fp4_tensor_cores"));
  if (const toml::node* burst = root_table.get("tensor_burst")) {
    const toml::table* t = burst->as_table();
    if (t == nullptr)
      return root.Expected("tensor_burst", "a table with bf16_tflops and window_ms", *burst);
    TableReader reader(path, *t, "tensor_burst");
    PPS_RETURN_IF_ERROR(reader.CheckKeys(kBurstKeys));
    PPS_ASSIGN_OR_RETURN(hw.burst_bf16_tflops, reader.PositiveNumber("bf16_tflops"));
    PPS_ASSIGN_OR_RETURN(hw.burst_window_ms, reader.PositiveNumber("window_ms"));
    // A burst slower than the sustained rate is a typo, not a throttle.
    if (hw.burst_bf16_tflops < hw.bf16_tflops) {
      return reader.KeyError("bf16_tflops", "expected at least the sustained bf16_tflops (" +
                                                FormatNumber(hw.bf16_tflops) + "), got " +
                                                FormatNumber(hw.burst_bf16_tflops));
    }
    // The payback comes as a pair: a rate without a length (or the reverse)
    // says nothing of what spending the window costs.
    const bool rate = t->contains("payback_bf16_tflops"), length = t->contains("payback_ms");
    if (rate != length) {
      return reader.KeyError(rate ? "payback_bf16_tflops" : "payback_ms",
                             std::string("expected payback_bf16_tflops and payback_ms together, "
                                         "got no ") +
                                 (rate ? "payback_ms" : "payback_bf16_tflops"));
    }
    if (rate) {
      PPS_ASSIGN_OR_RETURN(hw.burst_payback_bf16_tflops,
                           reader.PositiveNumber("payback_bf16_tflops"));
      PPS_ASSIGN_OR_RETURN(hw.burst_payback_ms, reader.PositiveNumber("payback_ms"));
      if (hw.burst_payback_bf16_tflops > hw.bf16_tflops) {
        return reader.KeyError(
            "payback_bf16_tflops",
            "expected at most the sustained bf16_tflops (" + FormatNumber(hw.bf16_tflops) +
                "): the payback runs below it, got " + FormatNumber(hw.burst_payback_bf16_tflops));
      }
    }
    if (t->contains("refill_ratio")) {
      PPS_ASSIGN_OR_RETURN(hw.burst_refill_ratio, reader.NonNegativeNumber("refill_ratio"));
    }
  }
  PPS_ASSIGN_OR_RETURN(hw.gpus_per_node, root.IntAtLeast("gpus_per_node", 1));
  PPS_ASSIGN_OR_RETURN(hw.nvlink, root.Bool("nvlink"));
  PPS_ASSIGN_OR_RETURN(hw.pcie_gen, root.IntAtLeast("pcie_gen", 1));
  PPS_ASSIGN_OR_RETURN(hw.p2p_gbps, root.PositiveNumber("p2p_gbps"));
  PPS_ASSIGN_OR_RETURN(hw.p2p_latency_us, root.PositiveNumber("p2p_latency_us"));
  PPS_ASSIGN_OR_RETURN(hw.nic_gbps_per_gpu, root.PositiveNumber("nic_gbps_per_gpu"));
  PPS_ASSIGN_OR_RETURN(hw.inter_latency_us, root.PositiveNumber("inter_latency_us"));
  PPS_ASSIGN_OR_RETURN(hw.intra_allreduce,
                       ReadCollectives(root, "intra_allreduce", hw.gpus_per_node));
  PPS_ASSIGN_OR_RETURN(hw.intra_alltoall,
                       ReadCollectives(root, "intra_alltoall", hw.gpus_per_node));
  return hw;
}

}  // namespace

Status SelectAttentionBackend(HardwareProfile& hw, const std::string& backend) {
  if (backend.empty() || backend == hw.attention_backend) return Status::Ok();
  auto it = hw.attention_backends.find(backend);
  if (it != hw.attention_backends.end()) {
    hw.attention_backends[hw.attention_backend] = hw.attention_tflops;
    hw.attention_tflops = it->second;
    hw.attention_backend = backend;
    return Status::Ok();
  }
  std::string known = hw.attention_backend;
  for (const auto& [name, rate] : hw.attention_backends)
    if (name != hw.attention_backend) known += ", " + name;
  return MakeError("attention backend '" + backend + "': hardware profile " + hw.name + " (" +
                   hw.source_path + ") has no attention rate for it (known: " + known +
                   "); add it under [attention_backends]");
}

namespace {

std::vector<std::string> ProfilesIn(const std::string& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    if (entry.is_regular_file() && entry.path().extension() == kTomlSuffix) {
      names.push_back(entry.path().stem().string());
    }
  }
  std::sort(names.begin(), names.end());
  return names;
}

Error UnknownProfile(const std::string& name) {
  std::vector<std::string> available = ProfilesIn(HardwareDir());
  std::string message = "unknown hardware profile '" + name + "'";
  message += DidYouMean(name, available);
  message += available.empty() ? "; no profiles in " + HardwareDir()
                               : "; available in " + HardwareDir() + ": " + Join(available);
  return MakeError(message + "; or give a path to a .toml file");
}

// A profile file's table with its `base` applied: the base profile's keys
// (a shipped name, or a .toml path relative to this file), each replaced
// whole by the same key here ([[intra_*]] arrays and tables included). An
// overlay's own base is applied first, up to kMaxBaseDepth deep.
constexpr int kMaxBaseDepth = 4;

Result<std::string> BasePath(const std::string& path, const toml::node& base) {
  const auto* name = base.as_string();
  const toml::source_region& at = base.source();
  const std::string where = path + ":" + std::to_string(at.begin.line) + ":" +
                            std::to_string(at.begin.column) + ": key 'base'";
  if (name == nullptr || name->get().empty())
    return MakeError(where + ": expected a profile name or a .toml path, got " + ShowValue(base));
  const std::string& value = name->get();
  if (!EndsWith(value, kTomlSuffix)) {
    std::string shipped = HardwareDir() + "/" + value + std::string(kTomlSuffix);
    if (value.find('/') != std::string::npos || !std::filesystem::is_regular_file(shipped))
      return MakeError(where + ": " + UnknownProfile(value).message);
    return shipped;
  }
  std::filesystem::path p(value);
  if (p.is_relative()) p = std::filesystem::path(path).parent_path() / p;
  return p.lexically_normal().string();
}

Result<toml::table> ReadTable(const std::string& path, int depth, std::vector<std::string>& files) {
  PPS_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  files.push_back(path);
  toml::table root;
  try {
    root = toml::parse(text, path);
  } catch (const toml::parse_error& e) {
    const auto& begin = e.source().begin;
    return MakeError(path + ":" + std::to_string(begin.line) + ":" + std::to_string(begin.column) +
                     ": " + std::string(e.description()));
  }
  const toml::node* base = root.get("base");
  if (base == nullptr) return root;
  if (depth >= kMaxBaseDepth)
    return MakeError(path + ": key 'base': more than " + std::to_string(kMaxBaseDepth) +
                     " profiles deep (a profile that is its own base?)");
  PPS_ASSIGN_OR_RETURN(std::string base_path, BasePath(path, *base));
  PPS_ASSIGN_OR_RETURN(toml::table merged, ReadTable(base_path, depth + 1, files));
  for (const auto& [key, node] : root) {
    if (key.str() == "base") continue;
    // Erased first: insert_or_assign would keep the base's key, and with it
    // the base's file and line in every message about the overlay's value.
    merged.erase(key.str());
    merged.insert(key, node);
  }
  return merged;
}

Result<HardwareProfile> LoadFile(const std::string& path) {
  std::vector<std::string> files;
  PPS_ASSIGN_OR_RETURN(toml::table root, ReadTable(path, 0, files));
  PPS_ASSIGN_OR_RETURN(HardwareProfile hw, ReadProfile(path, root));
  hw.files = std::move(files);
  return hw;
}

// Exact match, else the nearest larger group, else the largest.
const IntraCollective& NearestGroup(const std::vector<IntraCollective>& table, int group_size) {
  static const IntraCollective kNone;
  if (table.empty()) return kNone;  // only a hand-built profile; loaded ones are never empty
  for (const auto& entry : table) {
    if (entry.group_size >= group_size) return entry;
  }
  return table.back();
}

}  // namespace

double Bf16GemmMinBytes(double m, double n, double k) { return 2.0 * (m * k + k * n + m * n); }

std::string HardwareProfile::TensorBurstText() const {
  if (TensorBurstRatio() <= 1) return "";
  std::string text = fmt::format(
      "{}: {:.0f} TFLOPS for the first {:.1f} ms of tensor work after idle, {:.0f} "
      "sustained",
      name, burst_bf16_tflops, burst_window_ms, bf16_tflops);
  if (TensorPaybackRatio() < 1)
    text += fmt::format(", {:.0f} for {:.3g} ms once spent", burst_payback_bf16_tflops,
                        burst_payback_ms);
  return text + fmt::format(", refilled {:.3g} ms per ms idle", burst_refill_ratio);
}

const IntraCollective& HardwareProfile::IntraFor(int group_size) const {
  return NearestGroup(intra_allreduce, group_size);
}

const IntraCollective& HardwareProfile::IntraAllToAllFor(int group_size) const {
  return NearestGroup(intra_alltoall, group_size);
}

Result<HardwareProfile> LoadHardwareProfile(const std::string& name_or_path) {
  if (EndsWith(name_or_path, kTomlSuffix)) return LoadFile(name_or_path);
  std::string path = HardwareDir() + "/" + name_or_path + std::string(kTomlSuffix);
  // A name is one file name; anything else would escape the data directory.
  bool plain_name = !name_or_path.empty() && name_or_path.find('/') == std::string::npos;
  if (!plain_name || !std::filesystem::is_regular_file(path)) return UnknownProfile(name_or_path);
  return LoadFile(path);
}

std::vector<std::string> ListHardwareProfiles() { return ProfilesIn(HardwareDir()); }

}  // namespace ppsearch::hardware

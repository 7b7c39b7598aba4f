#include "compare/description.h"

#include <fmt/format.h>

#include <charconv>
#include <filesystem>

#include "spec/engine_env.h"
#include "util/sha256.h"

namespace ppsearch::compare {
namespace {

std::string Bool(bool v) { return v ? "true" : "false"; }

std::string Words(const std::vector<std::string>& words) {
  std::string out;
  for (const std::string& w : words) out += (out.empty() ? "" : " ") + w;
  return out;
}

// A digest short enough for a table and long enough to tell files apart.
std::string ShortDigest(const std::string& sha256) {
  std::string out = "sha256:";
  out += sha256.substr(0, 16);
  return out;
}

std::string PatchKey(const std::string& path) {
  std::string key = kPatchPrefix;
  key += std::filesystem::path(path).filename().string();
  return key;
}

}  // namespace

std::string JoinValues(const std::set<std::string>& values) {
  std::string out;
  for (const std::string& v : values) out += (out.empty() ? "" : ", ") + v;
  return out;
}

std::optional<int> PipelineSizeOf(const std::string& key) {
  const size_t at = key.rfind(" (PP");
  if (at == std::string::npos || key.back() != ')') return std::nullopt;
  int pp = 0;
  const char* first = key.data() + at + 4;
  const char* last = key.data() + key.size() - 1;
  const auto [end, ec] = std::from_chars(first, last, pp);
  if (ec != std::errc() || end != last) return std::nullopt;
  return pp;
}

RunDescription DescribeRun(const spec::Spec& spec, const evidence::RunMetadata& run,
                           const Observed& seen, const std::string& source) {
  RunDescription d;
  d.source = source;
  d.what = "run directory";
  d.has_metadata = true;
  d.simulated = run.simulated;
  auto& s = d.settings;
  if (d.simulated) s["engine.kind"] = *d.simulated ? "simulated" : "measured";
  const spec::EngineSpec& e = spec.engine;
  s["engine.image"] = e.image.empty() ? "none (on the host)" : e.image;
  if (!e.image.empty()) s["engine.container"] = e.container;
  s["engine.version"] = e.version.empty() ? kUnset : e.version;
  if (!seen.server_versions.empty()) s["server.version"] = JoinValues(seen.server_versions);
  s["engine.command"] = Words(e.command);
  s["engine.model_path"] = e.model_path.empty() ? kUnset : e.model_path;
  if (!seen.model_config_sha256.empty()) s["model.config"] = ShortDigest(seen.model_config_sha256);
  if (!seen.model_quantization.empty()) s["model.quantization"] = seen.model_quantization;
  for (const auto& [flag, value] : e.args) s[kArgPrefix + flag] = value.text;
  for (const auto& [name, value] : e.env)
    if (name != spec::kPpLayerPartitionEnv) s[kEnvPrefix + name] = value;
  // The layer split is a setting of each pipeline size's servers, however
  // the spec wrote it ([engine.env] or [engine.pp_layer_partition]).
  for (const spec::LayoutSpec& layout : spec.sweep.layouts) {
    d.pp_sizes.insert(layout.pp);
    for (const spec::LayoutSpec& pool : layout.pools) d.pp_sizes.insert(pool.pp);
  }
  for (const int pp : d.pp_sizes)
    if (const std::vector<int> split = spec::PpLayerPartition(e, pp); pp > 1 && !split.empty())
      s[fmt::format("{}{} (PP{})", kEnvPrefix, spec::kPpLayerPartitionEnv, pp)] =
          spec::PpLayerPartitionText(split);
  // The hashes the run took at its start; the spec's list when run.json has none.
  if (run.patches) {
    for (const evidence::RunPatch& p : *run.patches) s[PatchKey(p.path)] = ShortDigest(p.sha256);
  } else {
    for (const std::string& p : e.patches) s[PatchKey(p)] = "sha256 not recorded";
  }
  const spec::WorkloadSpec& w = spec.workload;
  s["workload.input_tokens"] = std::to_string(w.input_tokens);
  s["workload.output_tokens"] = std::to_string(w.output_tokens);
  s["workload.input_distribution"] = w.input_distribution;
  if (w.input_distribution != "fixed") s["workload.range_ratio"] = fmt::format("{}", w.range_ratio);
  s["workload.requests"] = std::to_string(w.requests);
  s["workload.request_rate"] =
      w.request_rate > 0 ? fmt::format("{}", w.request_rate) : "closed loop";
  s["workload.warmup_requests"] = std::to_string(w.warmup_requests);
  s["workload.unique_prompts"] = Bool(w.unique_prompts);
  s["workload.seed"] = std::to_string(w.seed);
  s["sweep.repeats"] = std::to_string(spec.sweep.repeats);
  std::string hosts;
  for (const auto& h : spec.cluster.hosts) hosts += (hosts.empty() ? "" : ", ") + h.name;
  s["cluster.hosts"] = hosts;
  s["cluster.gpus"] = std::to_string(spec.cluster.world_size());
  s["cluster.gpus_per_node"] = std::to_string(spec.cluster.gpus_per_node);
  s["cluster.hardware"] = std::filesystem::path(spec.cluster.hardware).stem().string();
  s["cluster.launcher"] = run.launcher.empty() ? spec.cluster.launcher : run.launcher;
  if (!seen.gpu_names.empty()) s["gpu.name"] = JoinValues(seen.gpu_names);
  if (!seen.driver_versions.empty()) s["gpu.driver"] = JoinValues(seen.driver_versions);
  s["lifecycle.reuse_server"] = Bool(spec.lifecycle.reuse_server);
  s["lifecycle.flush_cache"] = Bool(spec.lifecycle.flush_cache);
  s["experiment.name"] = spec.experiment.name;
  if (d.simulated.value_or(false)) {
    s["sim.noise_cv"] = fmt::format("{}", spec.sim.noise_cv);
    s["sim.seed"] = std::to_string(spec.sim.seed);
    s["sim.calibration"] =
        run.calibration.is_null() ? "none" : ShortDigest(Sha256Hex(run.calibration.dump()));
  }
  return d;
}

RunDescription DescribeCsv(const std::vector<analysis::PointSummary>& rows,
                           std::optional<bool> simulated, const std::string& source) {
  RunDescription d;
  d.source = source;
  d.what = "CSV of medians";
  d.simulated = simulated;
  if (simulated) d.settings["engine.kind"] = *simulated ? "simulated" : "measured";
  std::set<std::string> requests, repeats;
  for (const analysis::PointSummary& r : rows) {
    if (r.requests_total > 0) requests.insert(std::to_string(r.requests_total));
    if (r.repeats > 0) repeats.insert(std::to_string(r.repeats));
  }
  if (!requests.empty()) d.settings["workload.requests"] = JoinValues(requests);
  if (!repeats.empty()) d.settings["sweep.repeats"] = JoinValues(repeats);
  return d;
}

}  // namespace ppsearch::compare

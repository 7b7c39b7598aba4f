#include "evidence/spec_json.h"

#include <optional>

#include "spec/secrets.h"
#include "util/files.h"

namespace ppsearch::evidence {
namespace {

nlohmann::json SpecLayoutJson(const spec::LayoutSpec& l) {
  // A disaggregated deployment: its two pools, each as a layout.
  if (l.disaggregated())
    return {{"prefill", SpecLayoutJson(l.prefill())}, {"decode", SpecLayoutJson(l.decode())}};
  nlohmann::json j = {{"pp", l.pp}, {"tp", l.tp}, {"ep", l.ep}};
  if (l.dp > 1) j["dp"] = l.dp;  // absent: no DP attention, as files written before it
  if (l.instances > 1) j["instances"] = l.instances;  // absent: one instance
  return j;
}

// SpecLayoutJson's object read back; nullopt when it is not one.
std::optional<spec::LayoutSpec> LayoutOfJson(const nlohmann::json& l) {
  if (!l.is_object()) return std::nullopt;
  if (l.contains("prefill") || l.contains("decode")) {
    if (!l.contains("prefill") || !l.contains("decode")) return std::nullopt;
    const std::optional<spec::LayoutSpec> prefill = LayoutOfJson(l["prefill"]);
    const std::optional<spec::LayoutSpec> decode = LayoutOfJson(l["decode"]);
    if (!prefill || !decode || prefill->disaggregated() || decode->disaggregated())
      return std::nullopt;
    return spec::DeploymentLayout(*prefill, *decode, {});
  }
  for (const char* key : {"pp", "tp", "ep"})
    if (!l.contains(key) || !l[key].is_number_integer()) return std::nullopt;
  spec::LayoutSpec layout;
  layout.pp = l["pp"].get<int>();
  layout.tp = l["tp"].get<int>();
  layout.ep = l["ep"].get<int>();
  if (l.contains("dp")) {
    if (!l["dp"].is_number_integer()) return std::nullopt;
    layout.dp = l["dp"].get<int>();
  }
  if (l.contains("instances")) {
    if (!l["instances"].is_number_integer()) return std::nullopt;
    layout.instances = l["instances"].get<int>();
  }
  return layout;
}

}  // namespace

nlohmann::json SpecToJson(const spec::Spec& spec) {
  nlohmann::json layouts = nlohmann::json::array();
  for (const auto& l : spec.sweep.layouts) layouts.push_back(SpecLayoutJson(l));
  nlohmann::json args = nlohmann::json::object();
  for (const auto& [k, v] : spec.engine.args) args[k] = v.text;
  nlohmann::json env = nlohmann::json::object();
  for (const auto& [k, v] : spec.engine.env)
    env[k] = spec::IsSecretEnvName(k, spec.engine) ? std::string(spec::kRedacted) : v;
  nlohmann::json partitions = nlohmann::json::object();
  for (const auto& [pp, split] : spec.engine.pp_layer_partitions)
    partitions[std::to_string(pp)] = split;
  nlohmann::json hosts = nlohmann::json::array();
  for (size_t n = 0; n < spec.cluster.hosts.size(); ++n) {
    const auto& h = spec.cluster.hosts[n];
    hosts.push_back({{"name", h.name},
                     {"address", spec.cluster.Address(static_cast<int>(n))},
                     {"server_port", spec.cluster.ServerPort(static_cast<int>(n))},
                     {"ssh_user", h.ssh_user},
                     {"ssh_port", h.ssh_port},
                     {"ssh_key", h.ssh_key}});
  }
  const auto& lc = spec.lifecycle;
  nlohmann::json baseline = {{"layout", nullptr},
                             {"import_csv", spec.baseline.import_csv},
                             {"import_run", spec.baseline.import_run}};
  if (spec.baseline.layout) baseline["layout"] = SpecLayoutJson(*spec.baseline.layout);
  return {{"experiment",
           {{"name", spec.experiment.name}, {"results_dir", spec.experiment.results_dir}}},
          {"cluster",
           {{"hosts", hosts},
            {"gpus_per_node", spec.cluster.gpus_per_node},
            {"hardware", spec.cluster.hardware},
            {"launcher", spec.cluster.launcher},
            {"dist_init_port", spec.cluster.dist_init_port},
            {"nvidia_smi", spec.cluster.nvidia_smi},
            {"ssh", {{"options", spec.cluster.ssh_options}, {"config", spec.cluster.ssh_config}}},
            {"slurm",
             {{"srun_args", spec.cluster.slurm.srun_args},
              {"sbatch_args", spec.cluster.slurm.sbatch_args},
              {"partition", spec.cluster.slurm.partition},
              {"account", spec.cluster.slurm.account},
              {"time_limit", spec.cluster.slurm.time_limit}}}}},
          {"engine",
           {{"kind", spec.engine.kind},
            {"command", spec.engine.command},
            {"image", spec.engine.image},
            {"container", spec.engine.container},
            {"container_args", spec.engine.container_args},
            {"model_path", spec.engine.model_path},
            {"model_config", spec.engine.model_config},
            {"version", spec.engine.version},
            {"patches", spec.engine.patches},
            {"args", args},
            {"env", env},
            {"pp_layer_partition", partitions},
            {"secret_env", spec.engine.secret_env}}},
          {"sweep",
           {{"layouts", layouts},
            {"concurrency", spec.sweep.concurrency},
            {"repeats", spec.sweep.repeats}}},
          {"workload",
           {{"input_tokens", spec.workload.input_tokens},
            {"output_tokens", spec.workload.output_tokens},
            {"requests", spec.workload.requests},
            {"seed", spec.workload.seed},
            {"input_distribution", spec.workload.input_distribution},
            {"range_ratio", spec.workload.range_ratio},
            {"unique_prompts", spec.workload.unique_prompts},
            {"warmup_requests", spec.workload.warmup_requests},
            {"request_rate", spec.workload.request_rate},
            {"routing", spec.workload.routing}}},
          {"baseline", baseline},
          {"decision",
           {{"objective", spec.decision.objective.name()},
            {"min_headroom_mib", spec.decision.min_headroom_mib},
            {"max_repeat_spread", spec.decision.max_repeat_spread},
            {"failure_policy", spec.decision.failure_policy},
            {"stop_probability", spec.decision.stop_probability}}},
          {"adaptive",
           {{"budget_gpu_hours", spec.adaptive.budget_gpu_hours},
            {"budget_samples", spec.adaptive.budget_samples},
            {"server_start_s", spec.adaptive.server_start_s}}},
          {"search",
           {{"instances", spec.search.instances},
            {"pp", spec.search.pp},
            {"ep", spec.search.ep},
            {"dp", spec.search.dp},
            {"chunked_prefill_size", spec.search.chunked_prefill_size},
            {"max_running_requests", spec.search.max_running_requests},
            {"moe_a2a_backend", spec.search.moe_a2a_backend},
            {"concurrency", spec.search.concurrency},
            {"request_rate", spec.search.request_rate},
            {"disaggregated", spec.search.disaggregated.empty()
                                  ? nlohmann::json()
                                  : nlohmann::json(spec.search.disaggregated)}}},
          {"lifecycle",
           {{"host_timeout_s", lc.host_timeout_s},
            {"check_timeout_s", lc.check_timeout_s},
            {"start_timeout_s", lc.start_timeout_s},
            {"poll_interval_s", lc.poll_interval_s},
            {"request_timeout_s", lc.request_timeout_s},
            {"bench_timeout_s", lc.bench_timeout_s},
            {"stop_grace_s", lc.stop_grace_s},
            {"memory_release_timeout_s", lc.memory_release_timeout_s},
            {"memory_release_mib", lc.memory_release_mib},
            {"preflight_gpu_mib", lc.preflight_gpu_mib},
            {"min_window_s", lc.min_window_s},
            {"reuse_server", lc.reuse_server},
            {"flush_cache", lc.flush_cache}}},
          {"sim", {{"noise_cv", spec.sim.noise_cv}, {"seed", spec.sim.seed}}}};
}

void ApplyRecordedSweep(const RunPaths& paths, spec::Spec& spec) {
  Result<std::string> text = ReadEvidenceFile(paths.spec_resolved_json());
  if (!text.ok()) return;
  const nlohmann::json j = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.contains("sweep") || !j["sweep"].is_object()) return;
  const nlohmann::json& sweep = j["sweep"];
  if (sweep.contains("layouts") && sweep["layouts"].is_array() && !sweep["layouts"].empty()) {
    std::vector<spec::LayoutSpec> layouts;
    for (const auto& l : sweep["layouts"]) {
      std::optional<spec::LayoutSpec> read = LayoutOfJson(l);
      if (!read) return;
      spec::LayoutSpec layout = std::move(*read);
      for (const spec::LayoutSpec& written : spec.sweep.layouts)
        if (written == layout) layout = written;  // keep where it was written
      layouts.push_back(layout);
    }
    spec.sweep.layouts = layouts;
  }
  if (sweep.contains("concurrency") && sweep["concurrency"].is_array() &&
      !sweep["concurrency"].empty()) {
    std::vector<int> levels;
    for (const auto& c : sweep["concurrency"])
      if (c.is_number_integer()) levels.push_back(c.get<int>());
    if (!levels.empty()) spec.sweep.concurrency = levels;
  }
  if (sweep.contains("repeats") && sweep["repeats"].is_number_integer())
    spec.sweep.repeats = sweep["repeats"].get<int>();
}

}  // namespace ppsearch::evidence

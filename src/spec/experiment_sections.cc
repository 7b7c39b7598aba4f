// The sections around the sweep: [experiment] names it, [workload] fixes the
// load every sample sends, [baseline] says what to compare against, and
// [decision] how to pick a winner.

#include <fmt/format.h>

#include <cfloat>

#include "decide/objective.h"
#include "spec/limits.h"
#include "spec/sections.h"
#include "util/excerpt.h"
#include "util/files.h"
#include "util/safe_name.h"

namespace ppsearch::spec {
Status ReadExperiment(const TableReader& section, const std::string& base_dir,
                      ExperimentSpec* out) {
  PPS_RETURN_IF_ERROR(section.CheckKeys(kExperimentKeys));
  out->origin = section.origin();
  PPS_RETURN_IF_ERROR(section.String("name", &out->name, Need::kRequired));
  // The name becomes part of run directory names: a safe, short path piece
  // (short enough for a new run's default id: spec/new_run.h).
  if (!IsSafeName(out->name)) {
    return KeyError(section.KeyLoc("name"), "expected " + SafeNameRule() +
                                                " (it names the run directory), got '" +
                                                Excerpt(out->name) + "'");
  }
  PPS_RETURN_IF_ERROR(section.String("results_dir", &out->results_dir, Need::kOptional));
  if (out->results_dir.empty()) {
    return KeyError(section.KeyLoc("results_dir"), "expected a non-empty path");
  }
  out->results_dir = ResolvePath(base_dir, out->results_dir);
  return Status::Ok();
}

namespace {

// A length distribution's ratio in (0, 1]: a length of 0 tokens cannot be
// sent, and bench's --range-ratio and --output-range-ratio take (0, 1] too.
Status LengthRatio(const TableReader& section, const char* key, const char* what,
                   const char* length_key, double* out) {
  PPS_RETURN_IF_ERROR(section.Number(key, out, 0, 1));
  if (*out > 0) return Status::Ok();
  return KeyError(section.KeyLoc(key),
                  fmt::format("expected a number in (0, 1] ({} are uniform "
                              "on [{} x {}, {}]), got {}",
                              what, length_key, key, length_key, FormatNumber(*out)));
}

}  // namespace

Status ReadWorkload(const TableReader& section, const std::string& base_dir, WorkloadSpec* out) {
  PPS_RETURN_IF_ERROR(section.CheckKeys(kWorkloadKeys));
  out->origin = section.origin();
  PPS_RETURN_IF_ERROR(
      section.Int("input_tokens", &out->input_tokens, Need::kRequired, 1, kMaxTokens));
  PPS_RETURN_IF_ERROR(
      section.Int("output_tokens", &out->output_tokens, Need::kOptional, 1, kMaxTokens));
  PPS_RETURN_IF_ERROR(section.Int("requests", &out->requests, Need::kRequired, 1, kMaxRequests));
  int64_t seed = static_cast<int64_t>(out->seed);
  PPS_RETURN_IF_ERROR(section.Int("seed", &seed, Need::kOptional, 0));
  out->seed = static_cast<uint64_t>(seed);
  PPS_RETURN_IF_ERROR(
      section.Enum("input_distribution", &out->input_distribution, {"fixed", "uniform"}));
  PPS_RETURN_IF_ERROR(
      LengthRatio(section, "range_ratio", "prompts", "input_tokens", &out->range_ratio));
  PPS_RETURN_IF_ERROR(
      section.Enum("output_distribution", &out->output_distribution, {"fixed", "uniform"}));
  PPS_RETURN_IF_ERROR(LengthRatio(section, "output_range_ratio", "outputs", "output_tokens",
                                  &out->output_range_ratio));
  PPS_RETURN_IF_ERROR(section.String("lengths_file", &out->lengths_file, Need::kOptional));
  if (!out->lengths_file.empty()) {
    out->lengths_file = ResolvePath(base_dir, out->lengths_file);
    Result<std::vector<workload::LengthPair>> lengths =
        workload::ReadLengthsFile(out->lengths_file, kMaxTokens);
    if (!lengths.ok()) return KeyError(section.KeyLoc("lengths_file"), lengths.error().message);
    out->lengths = std::move(*lengths);
  }
  PPS_RETURN_IF_ERROR(section.Bool("unique_prompts", &out->unique_prompts));
  PPS_RETURN_IF_ERROR(
      section.Int("warmup_requests", &out->warmup_requests, Need::kOptional, 0, kMaxRequests));
  PPS_RETURN_IF_ERROR(section.Number("request_rate", &out->request_rate, 0, DBL_MAX));
  if (out->request_rate > 0 && out->request_rate < kMinRequestRate)
    return KeyError(section.KeyLoc("request_rate"),
                    fmt::format("expected 0 (closed loop) or requests/s >= {:g}, got {}",
                                kMinRequestRate, FormatNumber(out->request_rate)));
  PPS_RETURN_IF_ERROR(section.Enum("routing", &out->routing, {"least-outstanding", "round-robin"}));
  return Status::Ok();
}

Status ReadBaseline(const TableReader& section, const std::string& base_dir, BaselineSpec* out) {
  PPS_RETURN_IF_ERROR(section.CheckKeys(kBaselineKeys));
  out->origin = section.origin();
  if (const toml::node* layout = section.Find("layout")) {
    PPS_ASSIGN_OR_RETURN(out->layout,
                         ReadLayoutTuple(section.source(), *layout, section.KeyLoc("layout")));
  }
  PPS_RETURN_IF_ERROR(section.String("import_csv", &out->import_csv, Need::kOptional));
  PPS_RETURN_IF_ERROR(section.String("import_run", &out->import_run, Need::kOptional));
  if (!out->import_csv.empty() && !out->import_run.empty()) {
    return KeyError(section.KeyLoc("import_run"),
                    "set either 'import_csv' or 'import_run', not both");
  }
  if (!out->import_csv.empty()) out->import_csv = ResolvePath(base_dir, out->import_csv);
  if (!out->import_run.empty()) out->import_run = ResolvePath(base_dir, out->import_run);
  return Status::Ok();
}

namespace {

// The largest output a request of the workload may ask for.
int64_t MaxOutputTokens(const WorkloadSpec& w) {
  int64_t most = w.lengths.empty() ? w.output_tokens : 0;
  for (const workload::LengthPair& l : w.lengths) most = std::max(most, l.output_tokens);
  return most;
}

// One SLA key: a positive number in the key's unit, held in seconds. TPOT
// and ITL exist only after a second token, so a limit on them with a
// one-token workload would never be checked: refused here, not silently passed.
Status ReadSla(const TableReader& section, const WorkloadSpec& workload, decide::SlaMetric m,
               decide::SlaLimits* out) {
  const decide::SlaMetricInfo& info = decide::Info(m);
  if (section.Find(info.key) == nullptr) return Status::Ok();
  double value = 0;
  PPS_RETURN_IF_ERROR(section.Number(info.key, &value, 0, DBL_MAX));
  if (!(value > 0))
    return KeyError(section.KeyLoc(info.key), fmt::format("expected a positive number ({}), got {}",
                                                          info.unit, FormatNumber(value)));
  if (info.decode && MaxOutputTokens(workload) < 2)
    return KeyError(section.KeyLoc(info.key),
                    fmt::format("{} needs requests of more than one output token, and the "
                                "workload asks for one (set workload.output_tokens above 1, or "
                                "remove the limit)",
                                info.label));
  (*out)[m] = value / info.per_second;
  return Status::Ok();
}

}  // namespace

Status ReadDecision(const TableReader& section, const WorkloadSpec& workload, DecisionSpec* out) {
  PPS_RETURN_IF_ERROR(section.CheckKeys(kDecisionKeys));
  out->origin = section.origin();
  std::string objective = out->objective.name();
  PPS_RETURN_IF_ERROR(section.Enum("objective", &objective, decide::Objective::Names()));
  out->objective = *decide::Objective::FromName(objective);
  PPS_RETURN_IF_ERROR(section.Number("min_headroom_mib", &out->min_headroom_mib, 0, kMaxMib));
  PPS_RETURN_IF_ERROR(section.Number("max_repeat_spread", &out->max_repeat_spread, 0, DBL_MAX));
  PPS_RETURN_IF_ERROR(section.Enum("failure_policy", &out->failure_policy, {"exclude", "warn"}));
  for (decide::SlaMetric m : decide::kSlaMetrics)
    PPS_RETURN_IF_ERROR(ReadSla(section, workload, m, &out->sla));
  // 0 would never stop before every sample ran, 1 would stop at once.
  PPS_RETURN_IF_ERROR(section.Number("stop_probability", &out->stop_probability, 0.0001, 0.5));
  return Status::Ok();
}

Status ReadAdaptive(const TableReader& section, AdaptiveSpec* out) {
  PPS_RETURN_IF_ERROR(section.CheckKeys(kAdaptiveKeys));
  out->origin = section.origin();
  PPS_RETURN_IF_ERROR(section.Number("budget_gpu_hours", &out->budget_gpu_hours, 0, 1e9));
  PPS_RETURN_IF_ERROR(
      section.Int("budget_samples", &out->budget_samples, Need::kOptional, 0, 1000000));
  PPS_RETURN_IF_ERROR(section.Number("server_start_s", &out->server_start_s, 0, 86400));
  return Status::Ok();
}

}  // namespace ppsearch::spec

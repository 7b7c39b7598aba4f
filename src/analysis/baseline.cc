#include "analysis/baseline.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "util/files.h"

namespace ppsearch::analysis {
namespace {

std::optional<double> OptionalNumber(const CsvTable& table, size_t row, const std::string& name,
                                     Error* error) {
  if (table.Column(name) < 0) return std::nullopt;
  const std::string& cell = table.rows[row][static_cast<size_t>(table.Column(name))];
  if (cell.empty()) return std::nullopt;
  Result<double> v = CsvNumber(table, row, name);
  if (!v.ok()) {
    *error = v.error();
    return std::nullopt;
  }
  return *v;
}

std::string ArgText(const spec::EngineSpec& engine, const std::string& key) {
  const spec::ArgValue* v = engine.FindArg(key);
  return v == nullptr ? std::string("unset") : v->text;
}

bool IsSweptArg(const std::string& key) {
  static const std::set<std::string> swept = {"tp-size", "tp", "tensor-parallel-size",
                                              "pp-size", "pp", "pipeline-parallel-size",
                                              "ep-size", "ep", "expert-parallel-size"};
  return swept.count(key) > 0;
}

std::string Str(const nlohmann::json& j, const char* key) {
  if (!j.is_object() || !j.contains(key)) return "";
  return j[key].is_string() ? j[key].get<std::string>() : j[key].dump();
}

}  // namespace

Result<std::vector<PointSummary>> ParseBaselineCsv(const CsvTable& table) {
  for (const char* col : {"pp", "tp", "ep", "concurrency", "input_tps_median", "ttft_p50_s_median"})
    if (table.Column(col) < 0)
      return MakeError(table.path + ": missing column '" + col +
                       "' (a baseline CSV needs pp, tp, ep, concurrency, input_tps_median, "
                       "ttft_p50_s_median)");
  std::vector<PointSummary> out;
  for (size_t i = 0; i < table.rows.size(); ++i) {
    PointSummary p;
    PPS_ASSIGN_OR_RETURN(double pp, CsvNumber(table, i, "pp"));
    PPS_ASSIGN_OR_RETURN(double tp, CsvNumber(table, i, "tp"));
    PPS_ASSIGN_OR_RETURN(double ep, CsvNumber(table, i, "ep"));
    PPS_ASSIGN_OR_RETURN(double c, CsvNumber(table, i, "concurrency"));
    PPS_ASSIGN_OR_RETURN(p.input_tps_median, CsvNumber(table, i, "input_tps_median"));
    PPS_ASSIGN_OR_RETURN(p.ttft_p50_s_median, CsvNumber(table, i, "ttft_p50_s_median"));
    p.layout.pp = static_cast<int>(pp);
    p.layout.tp = static_cast<int>(tp);
    p.layout.ep = static_cast<int>(ep);
    p.layout.origin.file = table.path;
    p.layout.origin.line = table.row_lines[i];
    p.concurrency = static_cast<int>(c);
    Error error;
    p.repeats = static_cast<int>(OptionalNumber(table, i, "repeats", &error).value_or(0));
    p.valid_repeats = p.repeats;
    p.requests_completed =
        static_cast<int>(OptionalNumber(table, i, "requests_completed", &error).value_or(0));
    p.requests_total =
        static_cast<int>(OptionalNumber(table, i, "requests_total", &error).value_or(0));
    p.ttft_p95_s_median = OptionalNumber(table, i, "ttft_p95_s_median", &error).value_or(0);
    p.input_tps_spread = OptionalNumber(table, i, "input_tps_spread", &error).value_or(0);
    p.ttft_p50_s_spread = OptionalNumber(table, i, "ttft_p50_s_spread", &error).value_or(0);
    p.peak_gpu_mib = OptionalNumber(table, i, "peak_gpu_mib", &error);
    p.gpu_total_mib = OptionalNumber(table, i, "gpu_total_mib", &error);
    p.headroom_mib = OptionalNumber(table, i, "headroom_mib", &error);
    if (!p.headroom_mib && p.peak_gpu_mib && p.gpu_total_mib)
      p.headroom_mib = *p.gpu_total_mib - *p.peak_gpu_mib;
    if (!error.message.empty()) return error;
    p.imported = true;
    out.push_back(p);
  }
  return out;
}

Result<std::vector<PointSummary>> ReadBaselineCsv(const std::string& path) {
  PPS_ASSIGN_OR_RETURN(CsvTable table, ReadCsv(path));
  return ParseBaselineCsv(table);
}

std::vector<std::string> CheckCsvComparability(const std::vector<PointSummary>& rows,
                                               const spec::LayoutSpec& baseline,
                                               const spec::Spec& spec, const std::string& source) {
  std::vector<std::string> out;
  std::vector<const PointSummary*> mine;
  for (const PointSummary& r : rows)
    if (r.layout == baseline) mine.push_back(&r);
  if (mine.empty()) {
    out.push_back(fmt::format("baseline CSV {} has no row for the baseline layout {}", source,
                              baseline.Label()));
    return out;
  }
  for (int c : spec.sweep.concurrency) {
    if (std::none_of(mine.begin(), mine.end(),
                     [c](const PointSummary* r) { return r->concurrency == c; }))
      out.push_back(
          fmt::format("baseline CSV {} has no {} row at concurrency {}: no deltas at C={}", source,
                      baseline.Label(), c, c));
  }
  for (const PointSummary* r : mine) {
    if (r->requests_total > 0 && r->requests_total != spec.workload.requests)
      out.push_back(fmt::format(
          "baseline CSV {} measured {} requests per sample at C={}, this run sends {} "
          "(workload.requests): medians over different sample sizes are not directly comparable",
          source, r->requests_total, r->concurrency, spec.workload.requests));
  }
  return out;
}

std::vector<std::string> CheckRunComparability(const spec::Spec& ours,
                                               const nlohmann::json& our_run,
                                               const spec::Spec& theirs,
                                               const nlohmann::json& their_run,
                                               const std::string& source) {
  std::vector<std::string> out;
  auto differ = [&](const std::string& what, const std::string& here, const std::string& there) {
    if (here != there)
      out.push_back(fmt::format("baseline run {} differs in {}: '{}' there, '{}' here", source,
                                what, there, here));
  };
  const spec::WorkloadSpec& a = ours.workload;
  const spec::WorkloadSpec& b = theirs.workload;
  differ("workload.input_tokens", std::to_string(a.input_tokens), std::to_string(b.input_tokens));
  differ("workload.output_tokens", std::to_string(a.output_tokens),
         std::to_string(b.output_tokens));
  differ("workload.requests", std::to_string(a.requests), std::to_string(b.requests));
  differ("workload.input_distribution", a.input_distribution, b.input_distribution);
  differ("workload.range_ratio", fmt::format("{}", a.range_ratio),
         fmt::format("{}", b.range_ratio));
  differ("workload.unique_prompts", a.unique_prompts ? "true" : "false",
         b.unique_prompts ? "true" : "false");
  differ("workload.request_rate", fmt::format("{}", a.request_rate),
         fmt::format("{}", b.request_rate));
  differ("engine.image", ours.engine.image, theirs.engine.image);
  differ("engine.model_path", ours.engine.model_path, theirs.engine.model_path);
  differ("engine.version", ours.engine.version, theirs.engine.version);
  differ("cluster.hardware", ours.cluster.hardware, theirs.cluster.hardware);
  differ("cluster.gpus_per_node", std::to_string(ours.cluster.gpus_per_node),
         std::to_string(theirs.cluster.gpus_per_node));
  std::set<std::string> keys;
  for (const auto& [key, value] : ours.engine.args) keys.insert(key);
  for (const auto& [key, value] : theirs.engine.args) keys.insert(key);
  for (const std::string& key : keys)
    if (!IsSweptArg(key))
      differ("engine arg '" + key + "'", ArgText(ours.engine, key), ArgText(theirs.engine, key));
  std::set<std::string> env_keys;
  auto env = [](const spec::EngineSpec& e, const std::string& key) {
    for (const auto& [k, v] : e.env)
      if (k == key) return v;
    return std::string("unset");
  };
  for (const auto& [key, value] : ours.engine.env) env_keys.insert(key);
  for (const auto& [key, value] : theirs.engine.env) env_keys.insert(key);
  for (const std::string& key : env_keys)
    differ("engine env '" + key + "'", env(ours.engine, key), env(theirs.engine, key));
  differ("engine (run.json)", Str(our_run, "engine"), Str(their_run, "engine"));
  differ("image (run.json)", Str(our_run, "image"), Str(their_run, "image"));
  return out;
}

Status CopyBaselineInto(const spec::Spec& spec, const std::string& run_dir) {
  std::string from, to;
  if (!spec.baseline.import_csv.empty()) {
    from = spec.baseline.import_csv;
    to = run_dir + "/metadata/" + kBaselineCsvCopy;
  } else if (!spec.baseline.import_run.empty()) {
    from = spec.baseline.import_run + "/summary.csv";
    to = run_dir + "/metadata/" + kBaselineRunSummaryCopy;
  } else {
    return Status::Ok();
  }
  Result<std::string> text = ReadFile(from);
  if (!text.ok())
    return MakeError("baseline not copied into " + to + ": " + text.error().message +
                     (spec.baseline.import_csv.empty()
                          ? " (run `ppsearch report " + spec.baseline.import_run + "` to write it)"
                          : ""));
  return WriteFileAtomic(to, *text);
}

LayoutMemory ImportedMemory(const std::vector<PointSummary>& rows, const spec::LayoutSpec& layout) {
  LayoutMemory m;
  m.layout = layout;
  m.imported = true;
  for (const PointSummary& r : rows) {
    if (!(r.layout == layout) || !r.peak_gpu_mib) continue;
    if (!m.peak_gpu_mib || *r.peak_gpu_mib > *m.peak_gpu_mib) {
      m.peak_gpu_mib = r.peak_gpu_mib;
      m.gpu_total_mib = r.gpu_total_mib;
    }
    if (r.headroom_mib && (!m.headroom_mib || *r.headroom_mib < *m.headroom_mib))
      m.headroom_mib = r.headroom_mib;
  }
  if (m.peak_gpu_mib && m.gpu_total_mib) m.remaining_mib = *m.gpu_total_mib - *m.peak_gpu_mib;
  return m;
}

}  // namespace ppsearch::analysis

#include "nsys/analysis_json.h"

#include <fmt/format.h>

#include <cmath>

#include "table/table.h"
#include "util/format.h"

namespace ppsearch::nsys {
namespace {

nlohmann::ordered_json DistributionJson(const Distribution& d) {
  return {{"median", d.median}, {"min", d.min}, {"max", d.max}, {"spread", d.spread}};
}

nlohmann::ordered_json OrNull(const std::optional<int>& v) {
  return v ? nlohmann::ordered_json(*v) : nlohmann::ordered_json(nullptr);
}

nlohmann::ordered_json WindowJson(const WindowBreakdown& w, const std::string& label) {
  nlohmann::ordered_json j = {{"label", label},
                              {"start_ns", w.window.start_ns},
                              {"end_ns", w.window.end_ns},
                              {"duration_ns", w.duration_ns()},
                              {"exposed_ns", w.exposed_ns},
                              {"overlapped_ns", w.overlapped_ns},
                              {"compute_only_ns", w.compute_only_ns},
                              {"idle_ns", w.idle_ns},
                              {"exposed_share", w.Share(w.exposed_ns)},
                              {"kernels", w.kernels}};
  nlohmann::ordered_json c = nlohmann::ordered_json::object();
  for (Collective kind : kAllCollectives) {
    const int k = static_cast<int>(kind);
    if (w.calls[k] > 0)
      c[CollectiveName(kind)] = {{"calls", w.calls[k]}, {"time_ns", w.time_ns[k]}};
  }
  j["collectives"] = c;
  nlohmann::ordered_json classes = nlohmann::ordered_json::object();
  for (ComputeClass cls : kAllComputeClasses)
    classes[ComputeClassName(cls)] = w.class_time_ns[static_cast<int>(cls)];
  j["compute_classes_ns"] = classes;
  return j;
}

nlohmann::ordered_json GpuJson(const GpuWindows& g) {
  const ProfileSummary s = Summarize({g});
  nlohmann::ordered_json j = {{"source", g.source},
                              {"device_id", g.device_id},
                              {"gpu_name", g.gpu_name},
                              {"windows", g.windows.size()},
                              {"exposed_share", DistributionJson(s.exposed_share)},
                              {"overlapped_share", DistributionJson(s.overlapped_share)},
                              {"compute_only_share", DistributionJson(s.compute_only_share)},
                              {"idle_share", DistributionJson(s.idle_share)}};
  nlohmann::ordered_json windows = nlohmann::ordered_json::array();
  for (size_t i = 0; i < g.windows.size(); ++i)
    windows.push_back(WindowJson(g.windows[i], g.labels[i]));
  j["per_window"] = windows;
  return j;
}

std::string Percent(double share) { return FormatNumber(share * 100, 2); }

}  // namespace

nlohmann::ordered_json AnalysisJson(const ProfileAnalysis& a, const ProfileContext& context) {
  const ProfileSummary& s = a.summary;
  const int allreduce = static_cast<int>(Collective::kAllReduce);
  nlohmann::ordered_json j;
  if (context.pp && context.tp && context.ep) {
    j["layout"] = {{"pp", *context.pp}, {"tp", *context.tp}, {"ep", *context.ep}};
  } else {
    j["layout"] = nullptr;
  }
  j["what"] = "Nsight Systems profile of the prefill, summarised by ppsearch nsys";
  j["exposed_nccl_share_of_prefill_window_median"] = s.exposed_share.median;
  j["allreduce_calls_in_window"] = s.calls_per_window[allreduce].median;
  j["compute_communication_overlap"] = OverlapWords(s.comm_overlapped_fraction.median);
  j["tp_collectives_span_nodes"] = OrNull(context.tp_span_nodes);
  nlohmann::ordered_json window = {{"choice", a.window.Describe()}};
  if (a.window.mode == WindowChoice::Mode::kNvtx) {
    window["mode"] = "nvtx";
    window["pattern"] = a.window.pattern;
  } else {
    window["mode"] = "forward";
    window["gap_us"] = a.window.gap_ns / 1000;
  }
  j["window"] = window;
  j["definitions"] = {
      {"exposed", "communication kernels running while no compute kernel runs on the GPU"},
      {"overlapped", "communication and compute kernels running at once"},
      {"compute_only", "compute kernels and no communication kernel"},
      {"idle", "no kernel on the GPU"},
      {"statistics", "medians and spreads ((max - min) / median) over every window of every GPU"}};
  nlohmann::ordered_json sources = nlohmann::ordered_json::array();
  nlohmann::ordered_json notes = nlohmann::ordered_json::array();
  for (const ExportAnalysis& e : a.exports) {
    nlohmann::ordered_json skipped = nlohmann::ordered_json::array();
    for (const SkippedRows& s : e.skipped)
      skipped.push_back({{"table", s.table},
                         {"reason", s.reason},
                         {"rows", s.rows},
                         {"first_row_id", s.first_row_id},
                         {"first_row", s.first_row}});
    sources.push_back({{"path", e.path},
                       {"product_version", e.product_version},
                       {"schema_version", e.schema_version},
                       {"kernel_rows", e.kernel_rows},
                       {"gpus", e.gpus.size()},
                       {"skipped_rows", skipped}});
    for (const auto& n : e.notes) notes.push_back(n);
  }
  j["sources"] = sources;
  j["gpus"] = s.gpus;
  j["windows"] = s.windows;
  j["window_ms"] = DistributionJson(s.window_ms);
  j["exposed_share"] = DistributionJson(s.exposed_share);
  j["overlapped_share"] = DistributionJson(s.overlapped_share);
  j["compute_only_share"] = DistributionJson(s.compute_only_share);
  j["idle_share"] = DistributionJson(s.idle_share);
  j["communication_overlapped_fraction"] = DistributionJson(s.comm_overlapped_fraction);
  nlohmann::ordered_json collectives = nlohmann::ordered_json::object();
  for (Collective kind : kAllCollectives) {
    const int k = static_cast<int>(kind);
    if (s.total_calls[k] == 0 && kind != Collective::kAllReduce) continue;
    collectives[CollectiveName(kind)] = {
        {"calls_per_window", DistributionJson(s.calls_per_window[k])},
        {"time_ms_per_window", DistributionJson(s.time_ms_per_window[k])},
        {"calls_total", s.total_calls[k]},
        {"time_ms_total", static_cast<double>(s.total_time_ns[k]) / 1e6}};
  }
  j["collectives"] = collectives;
  nlohmann::ordered_json classes = nlohmann::ordered_json::object();
  for (ComputeClass cls : kAllComputeClasses) {
    const int c = static_cast<int>(cls);
    classes[ComputeClassName(cls)] = {
        {"share", DistributionJson(s.class_share[c])},
        {"time_ms_total", static_cast<double>(s.total_class_time_ns[c]) / 1e6}};
  }
  j["compute_classes"] = classes;
  nlohmann::ordered_json gpus = nlohmann::ordered_json::array();
  for (const ExportAnalysis& e : a.exports)
    for (const GpuWindows& g : e.gpus) gpus.push_back(GpuJson(g));
  j["per_gpu"] = gpus;
  j["notes"] = notes;
  return j;
}

std::string AnalysisTable(const ProfileAnalysis& a) {
  const ProfileSummary& s = a.summary;
  std::string out;
  for (const ExportAnalysis& e : a.exports)
    out +=
        fmt::format("# ppsearch nsys: {} ({} kernels{})\n", e.path, FormatThousands(e.kernel_rows),
                    e.product_version.empty() ? "" : ", Nsight Systems " + e.product_version);
  out +=
      fmt::format("# windows: {}; {} windows on {} GPUs\n", a.window.Describe(), s.windows, s.gpus);
  out += "#\n";
  table::Table gpus{
      {"gpu", "windows", "window", "exposed", "overlapped", "compute", "idle", "AllReduce"},
      {},
      {true, false, false, false, false, false, false, false},
      {"", "", "(ms, p50)", "(%, p50)", "(%, p50)", "(%, p50)", "(%, p50)", "(calls)"}};
  for (const ExportAnalysis& e : a.exports) {
    for (const GpuWindows& g : e.gpus) {
      const ProfileSummary gs = Summarize({g});
      const std::string name =
          fmt::format("{}{}", g.device_id, g.gpu_name.empty() ? "" : " " + g.gpu_name);
      gpus.rows.push_back(
          {name.substr(0, 28), std::to_string(g.windows.size()),
           FormatNumber(gs.window_ms.median, 3), Percent(gs.exposed_share.median),
           Percent(gs.overlapped_share.median), Percent(gs.compute_only_share.median),
           Percent(gs.idle_share.median),
           FormatNumber(gs.calls_per_window[static_cast<int>(Collective::kAllReduce)].median, 1)});
    }
  }
  out += table::RenderTextTable(gpus);
  out += "#\n";
  table::Table kinds{{"collective", "calls", "time", "calls total", "time total"},
                     {},
                     {true, false, false, false, false},
                     {"", "(per window)", "(ms/window)", "", "(ms)"}};
  for (Collective kind : kAllCollectives) {
    const int k = static_cast<int>(kind);
    if (s.total_calls[k] == 0) continue;
    kinds.rows.push_back({CollectiveName(kind), FormatNumber(s.calls_per_window[k].median, 1),
                          FormatNumber(s.time_ms_per_window[k].median, 3),
                          FormatThousands(s.total_calls[k]),
                          FormatNumber(static_cast<double>(s.total_time_ns[k]) / 1e6, 3)});
  }
  out += table::RenderTextTable(kinds);
  out += "#\n";
  out += fmt::format(
      "# exposed communication: {}% of the window (median over {} windows, spread {}%); "
      "overlapped {}%, compute only {}%, idle {}%\n",
      Percent(s.exposed_share.median), s.windows, Percent(s.exposed_share.spread),
      Percent(s.overlapped_share.median), Percent(s.compute_only_share.median),
      Percent(s.idle_share.median));
  out += fmt::format("# compute/communication overlap: {} ({}% of communication time overlapped)\n",
                     OverlapWords(s.comm_overlapped_fraction.median),
                     Percent(s.comm_overlapped_fraction.median));
  out += "# compute kernels by class, share of the window (median): " +
         ClassesText([&s](ComputeClass c) {
           return Percent(s.class_share[static_cast<int>(c)].median) + "%";
         }) +
         "\n";
  for (const ExportAnalysis& e : a.exports)
    for (const auto& n : e.notes) out += "# note: " + n + "\n";
  return out;
}

namespace {

// `j[key]` (or `j[key][field]`) when it is a number; else the error naming it.
Result<double> NumberAt(const nlohmann::json& j, const std::string& where, const char* key,
                        const char* field = nullptr) {
  const nlohmann::json* v = j.contains(key) ? &j[key] : nullptr;
  if (v != nullptr && field != nullptr)
    v = v->is_object() && v->contains(field) ? &(*v)[field] : nullptr;
  const std::string name = field == nullptr ? key : std::string(key) + "." + field;
  if (v == nullptr || !v->is_number())
    return MakeError(where + ": key '" + name +
                     "' must be a number (the JSON `ppsearch nsys` writes)" +
                     (v == nullptr ? ", got nothing" : ", got " + v->dump()));
  return v->get<double>();
}

}  // namespace

Result<AnalysisSummary> ReadAnalysisSummary(const nlohmann::json& j, const std::string& where) {
  if (!j.is_object()) return MakeError(where + ": not a JSON object");
  AnalysisSummary s;
  PPS_ASSIGN_OR_RETURN(s.exposed_share_median,
                       NumberAt(j, where, "exposed_nccl_share_of_prefill_window_median"));
  PPS_ASSIGN_OR_RETURN(s.exposed_share_spread, NumberAt(j, where, "exposed_share", "spread"));
  PPS_ASSIGN_OR_RETURN(s.overlapped_share_median, NumberAt(j, where, "overlapped_share", "median"));
  PPS_ASSIGN_OR_RETURN(s.compute_only_share_median,
                       NumberAt(j, where, "compute_only_share", "median"));
  PPS_ASSIGN_OR_RETURN(s.idle_share_median, NumberAt(j, where, "idle_share", "median"));
  PPS_ASSIGN_OR_RETURN(s.allreduce_calls_in_window,
                       NumberAt(j, where, "allreduce_calls_in_window"));
  PPS_ASSIGN_OR_RETURN(const double windows, NumberAt(j, where, "windows"));
  PPS_ASSIGN_OR_RETURN(const double gpus, NumberAt(j, where, "gpus"));
  s.windows = static_cast<int>(windows);
  s.gpus = static_cast<int>(gpus);
  const auto words = j.find("compute_communication_overlap");
  if (words == j.end() || !words->is_string())
    return MakeError(where + ": key 'compute_communication_overlap' must be a string (the JSON " +
                     "`ppsearch nsys` writes)");
  s.overlap_words = words->get<std::string>();
  PPS_ASSIGN_OR_RETURN(s.class_share_median, ReadClassShares(j, where));
  return s;
}

Result<std::optional<std::array<double, kComputeClasses>>> ReadClassShares(
    const nlohmann::json& j, const std::string& where) {
  if (!j.is_object() || !j.contains("compute_classes"))
    return std::optional<std::array<double, kComputeClasses>>();
  std::array<double, kComputeClasses> out{};
  const nlohmann::json& classes = j["compute_classes"];
  for (ComputeClass c : kAllComputeClasses) {
    const std::string name = ComputeClassName(c);
    const nlohmann::json::json_pointer at("/" + name + "/share/median");
    const nlohmann::json* v = classes.contains(at) ? &classes.at(at) : nullptr;
    // Concurrent kernels each count, so a share may pass 1; never below 0.
    if (v == nullptr || !v->is_number() || !(v->get<double>() >= 0) ||
        !std::isfinite(v->get<double>()))
      return MakeError(where + ": key 'compute_classes." + name +
                       ".share.median': expected a share >= 0" +
                       (v == nullptr ? std::string(", missing") : ", got " + v->dump()));
    out[static_cast<int>(c)] = v->get<double>();
  }
  return std::optional<std::array<double, kComputeClasses>>(out);
}

}  // namespace ppsearch::nsys

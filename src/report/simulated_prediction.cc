#include "report/simulated_prediction.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "decide/rules.h"
#include "decide/steady_state.h"
#include "evidence/summary_json.h"
#include "inputs/search_inputs.h"
#include "memory/memory_interval.h"
#include "memory/served.h"
#include "nsys/compute_kernels.h"
#include "report/out_of_memory.h"
#include "report/result_table.h"
#include "report/uncertainty_tables.h"
#include "spec/engine_env.h"
#include "table/table.h"
#include "uncertainty/summary.h"
#include "util/format.h"

namespace ppsearch::report {
namespace {

std::string Pct(double share) { return FormatPercent(share, 1); }

// The profile's tensor burst and the range of its share of the points'
// input TPS (TTFT p50 in an open loop: predict::TensorBurstShare), for the
// text output; "" without a burst.
std::string BurstLine(const hardware::HardwareProfile& hw, const spec::Spec& spec,
                      const std::vector<SimulatedPoint>& points) {
  double low = 1, high = 0;
  for (const auto& sp : points)
    if (sp.burst_share) {
      low = std::min(low, *sp.burst_share);
      high = std::max(high, *sp.burst_share);
    }
  if (low > high) return "";
  if (spec.workload.request_rate > 0)
    return fmt::format(
        "the tensor burst ({}; one public run's window, docs/model.md) takes {} off these "
        "predictions' TTFT p50 (Poisson arrivals: their input TPS is the arrival rate's while "
        "the server keeps up; tensor_burst_share in --json)",
        hw.TensorBurstText(), FormatPercentRange(low, high));
  return fmt::format(
      "the tensor burst ({}; one public run's window, docs/model.md) gives {} of these "
      "predictions' input TPS (tensor_burst_share in --json)",
      hw.TensorBurstText(), FormatPercentRange(low, high));
}

// Per layout, the load points whose batches outgrow a GPU (the point's
// served memory, memory/served.h): SGLang runs out of memory there, so
// no run measures those figures.
std::vector<std::string> OutOfMemoryLines(const hardware::HardwareProfile& hw,
                                          const std::vector<SimulatedPoint>& points) {
  std::vector<std::string> lines;
  std::string label, loads;
  const predict::PointPrediction* last = nullptr;
  int stage = 0;
  auto flush = [&] {
    if (!loads.empty())
      lines.push_back(
          OutOfMemoryLine(label, loads, false, last->served_memory, stage, hw.memory_mib));
    loads.clear();
  };
  for (const auto& sp : points) {
    const predict::PointPrediction& p = sp.point->prediction;
    if (p.layout.Label() != label) flush();
    label = p.layout.Label();
    const std::optional<int> over = memory::StageOutOfMemory(p.served_memory, hw.memory_mib);
    if (!over) continue;
    loads += (loads.empty() ? "C=" : ", C=") + std::to_string(p.concurrency);
    last = &p;
    stage = *over;
  }
  flush();
  return lines;
}

// A decode figure of a point: which one, its unit in the JSON, and its
// intervals where drawn.
struct DecodeFigure {
  double stats::Figures::*member;
  stats::TimeUnit unit;
  const uncertainty::Interval* interval;
  const uncertainty::Interval* parameter;  // the interval before the model-form term
};

std::vector<DecodeFigure> DecodeFigures(const SimulatedPoint& sp) {
  using F = stats::Figures;
  using stats::TimeUnit;
  const uncertainty::PointUncertainty* u = sp.spread;
  return {{&F::tpot_p50_s, TimeUnit::kMilliseconds, u ? &u->tpot_p50_s : nullptr,
           u ? &u->parameter.tpot_p50_s : nullptr},
          {&F::itl_p99_s, TimeUnit::kMilliseconds, u ? &u->itl_p99_s : nullptr,
           u ? &u->parameter.itl_p99_s : nullptr},
          {&F::output_tps, TimeUnit::kSeconds, u ? &u->output_tps : nullptr,
           u ? &u->parameter.output_tps : nullptr},
          {&F::e2e_p50_s, TimeUnit::kSeconds, u ? &u->e2e_p50_s : nullptr,
           u ? &u->parameter.e2e_p50_s : nullptr}};
}

// The sample a point simulates, for the steady-state rule: a closed loop
// at the point's concurrency, or an open loop (not judged).
decide::LoopSample SampleOf(const predict::PointPrediction& p, const spec::WorkloadSpec& w) {
  return {"C=" + std::to_string(p.concurrency), w.request_rate > 0 ? 0 : p.concurrency, w.requests};
}

// A point's stages: each one's time shares and memory, with the peak's
// interval where one was drawn.
nlohmann::json StagesJson(const predict::PointPrediction& p) {
  nlohmann::json stages = nlohmann::json::array();
  for (size_t s = 0; s < p.stage_shares.size(); ++s) {
    const auto& sh = p.stage_shares[s];
    const auto& mem = p.memory.stages[s];
    nlohmann::json classes;
    const auto shares = predict::ClassShares(sh);
    for (nsys::ComputeClass cls : nsys::kAllComputeClasses)
      classes[nsys::ComputeClassName(cls)] = shares[static_cast<int>(cls)];
    stages.push_back({{"stage", s},
                      {"compute_share", sh.compute},
                      {"compute_class_share", classes},
                      {"exposed_comm_share", sh.exposed_comm},
                      {"pp_transfer_share", sh.transfer},
                      {"overhead_share", sh.overhead},
                      {"idle_share", sh.idle},
                      {"peak_gpu_mib", mem.peak_mib},
                      {"headroom_mib", mem.headroom_mib},
                      {"weight_mib", mem.weight_mib},
                      {"kv_pool_mib", mem.kv_pool_mib},
                      {"activation_mib", mem.activation_mib},
                      {"activation_peak", mem.activation_peak}});
    if (s < p.memory_interval.size()) {
      const memory::StagePeakInterval& i = p.memory_interval[s];
      nlohmann::json& st = stages.back();
      st["peak_gpu_mib_low"] = i.low_mib;
      st["peak_gpu_mib_high"] = i.high_mib;
      st["peak_gpu_mib_terms_low"] = i.terms_low_mib;
      st["peak_gpu_mib_terms_high"] = i.terms_high_mib;
      st["peak_gpu_mib_model_form"] = i.model_form_mib;
    }
  }
  return stages;
}

// A point's intervals: each figure's low and high, the parameters' band
// apart, the model-form half-width and the distances it grew with.
void AddIntervals(const SimulatedPoint& sp, nlohmann::json& j) {
  const uncertainty::PointUncertainty* u = sp.spread;
  if (u == nullptr) return;
  const std::pair<const char*, const uncertainty::Interval*> fields[] = {
      {"input_tps", &u->input_tps},
      {"ttft_p50_s", &u->ttft_p50_s},
      {"ttft_p95_s", &u->ttft_p95_s},
      {"peak_gpu_mib", &u->peak_gpu_mib}};
  for (const auto& [name, interval] : fields) {
    j[std::string(name) + "_low"] = interval->low;
    j[std::string(name) + "_high"] = interval->high;
  }
  // The two parts of each interval: the parameters' band, and the
  // model-form half-width (log space) it was widened by.
  const std::pair<const char*, const uncertainty::Interval*> parameter[] = {
      {"input_tps", &u->parameter.input_tps},
      {"ttft_p50_s", &u->parameter.ttft_p50_s},
      {"ttft_p95_s", &u->parameter.ttft_p95_s},
      {"peak_gpu_mib", &u->peak_gpu_mib}};
  for (const auto& [name, interval] : parameter) {
    j[std::string(name) + "_parameter_low"] = interval->low;
    j[std::string(name) + "_parameter_high"] = interval->high;
  }
  j["model_form_rel"] = u->model_form_rel;
  j["parameter_rel"] = u->central.input_tps > 0 && u->parameter.input_tps.low > 0
                           ? std::log(u->parameter.input_tps.high / u->parameter.input_tps.low) / 2
                           : 0.0;
  if (const uncertainty::Extrapolation* d = sp.extrapolation) {
    const auto values = d->Values();
    for (int k = 0; k < cost::kModelFormDistances; ++k)
      j["extrapolation"][cost::kModelFormDistanceNames[k]] = values[k];
  }
}

// A decode workload's figures (TPOT, ITL, output TPS, ...) with theirs.
void AddDecodeFigures(const SimulatedPoint& sp, const stats::Figures& f, nlohmann::json& j) {
  using stats::TimeUnit;
  j[stats::FigureKey(&stats::Figures::itl_p50_s, TimeUnit::kMilliseconds)] =
      stats::FigureIn(f.itl_p50_s, TimeUnit::kMilliseconds);
  for (const DecodeFigure& d : DecodeFigures(sp)) {
    const std::string key = stats::FigureKey(d.member, d.unit);
    j[key] = stats::FigureIn(f.*d.member, d.unit);
    if (!d.interval) continue;
    j[key + "_low"] = stats::FigureIn(d.interval->low, d.unit);
    j[key + "_high"] = stats::FigureIn(d.interval->high, d.unit);
    j[key + "_parameter_low"] = stats::FigureIn(d.parameter->low, d.unit);
    j[key + "_parameter_high"] = stats::FigureIn(d.parameter->high, d.unit);
  }
}

// `decode`: the workload asks for more than one output token per request.
nlohmann::json OutOfMemoryStageJson(const predict::PointPrediction& p, double gpu_mib) {
  const std::optional<int> stage = memory::StageOutOfMemory(p.served_memory, gpu_mib);
  return stage ? nlohmann::json(*stage) : nlohmann::json(nullptr);
}

nlohmann::json PointJson(const SimulatedPoint& sp, const spec::WorkloadSpec& w, bool decode,
                         double gpu_mib) {
  const auto& p = sp.point->prediction;
  const decide::LoopSample sample = SampleOf(p, w);
  const std::string not_steady = decide::NotSteady(sample.concurrency, sample.requests);
  nlohmann::json j = {
      {"pp", p.layout.pp},
      {"tp", p.layout.tp},
      {"ep", p.layout.ep},
      {"dp", p.layout.dp},
      {"instances", p.layout.instances},
      {"label", p.layout.Label()},
      {"concurrency", p.concurrency},
      {"requests_completed", p.metrics.requests_completed},
      {"requests_total", p.metrics.requests_total},
      {"steady_state", not_steady.empty()},
      {"not_steady", not_steady.empty() ? nlohmann::json() : nlohmann::json(not_steady)},
      {"peak_gpu_mib", p.memory.peak_mib_max},
      // Once the point's batches have run (memory/served.h), and the stage
      // they outgrow the GPU on (null: none; SGLang would run out of memory).
      {"served_peak_gpu_mib", p.served_memory.peak_mib_max},
      {"out_of_memory_stage", OutOfMemoryStageJson(p, gpu_mib)},
      {"peak_spread_mib", p.memory.peak_spread_mib},
      {"exposed_comm_share", p.exposed_comm_share},
      {"bubble_share", p.bubble_share},
      {"allreduce_per_forward", p.allreduce_per_forward},
      {"alltoall_per_forward", p.alltoall_per_forward},
      {"max_total_tokens", p.memory.max_total_tokens},
      {"max_running_requests", p.memory.max_running_requests},
      {"tightest_stage", p.memory.tightest_stage},
      {"tightest_reason", p.memory.tightest_reason},
      {"tensor_burst_share",
       sp.burst_share ? nlohmann::json(*sp.burst_share) : nlohmann::json(nullptr)},
      {"tensor_burst_share_of", sp.burst_share
                                    ? nlohmann::json(predict::TensorBurstFigure(w.request_rate > 0))
                                    : nlohmann::json(nullptr)},
      {"pp_max_micro_batch_size", p.sim.pp_max_micro_batch_size},
      {"micro_batches", p.sim.micro_batches},
      {"stages", StagesJson(p)}};
  using F = stats::Figures;
  const stats::Figures f = stats::FiguresOf(p.metrics, p.layout.gpus());
  for (double F::*m : {&F::input_tps, &F::ttft_mean_s, &F::ttft_p50_s, &F::ttft_p95_s,
                       &F::ttft_p99_s, &F::e2e_p50_s})
    j[stats::FigureKey(m)] = f.*m;
  if (sp.point->cap1_input_tps > 0)
    j["input_tps_with_pp_max_micro_batch_size_1"] = sp.point->cap1_input_tps;
  if (!sp.point->roomier_partition.empty())
    j["roomier_partition"] = {{"sglang_pp_layer_partition", sp.point->roomier_partition},
                              {"input_tps", sp.point->roomier_input_tps},
                              {"peak_gpu_mib", sp.point->roomier_peak_mib}};
  AddIntervals(sp, j);
  if (decode) AddDecodeFigures(sp, f, j);
  return j;
}

// What each stage's peak_gpu_mib_low/_high hold: the estimated terms'
// corners and, apart, the model form measured on the memory backtest.
nlohmann::json MemoryIntervalJson(const memory::MemoryTermRange& r) {
  return {{"terms",
           {{"runtime_mib", {r.runtime_low_mib, r.runtime_high_mib}},
            {"activation_scale", {r.activation_low_scale, r.activation_high_scale}}}},
          {"model_form",
           {{"kv_pool_share", r.kv_model_form_share},
            {"source", "largest |error| of KV pool tokens, validation/memory-sglang-logs"}}},
          {"note",
           "peak_gpu_mib_terms_low/_high: the stage peak at the corners of the estimated terms; "
           "peak_gpu_mib_model_form: the model-form half-width added on each side to give "
           "peak_gpu_mib_low/_high"}};
}

nlohmann::json UncertaintyJson(const uncertainty::UncertaintySummary& s,
                               const cost::Calibration& calibration,
                               const uncertainty::EnsembleOptions& eo,
                               const decide::Objective& objective) {
  nlohmann::json j = {{"samples", eo.members},
                      {"seed", eo.seed},
                      {"low_percentile", uncertainty::kIntervalLowPercentile},
                      {"high_percentile", uncertainty::kIntervalHighPercentile},
                      {"sensitivity", nlohmann::json::array()}};
  for (const auto& l : s.sensitivity) {
    nlohmann::json params = nlohmann::json::array();
    for (const auto& p : l.top)
      params.push_back({{"name", cost::Info(p.param).name},
                        {"share", p.share},
                        {"rank_correlation", p.correlation},
                        {"status", cost::ParamStatusName(calibration.Status(p.param))}});
    nlohmann::json e = evidence::SummaryLayoutJson(l.layout);
    e["parameters"] = params;
    e["model_form_share"] = l.model_form_share;
    j["sensitivity"].push_back(e);
  }
  if (s.ranking.size() >= 2) {
    nlohmann::json d = {{"objective", objective.name()},
                        {"primary", evidence::SummaryLayoutJson(s.ranking[0].layout)},
                        {"runner_up", evidence::SummaryLayoutJson(s.ranking[1].layout)},
                        {"primary_score", s.ranking[0].score},
                        {"runner_up_score", s.ranking[1].score},
                        {"intervals_overlap", s.overlap},
                        {"overlap_note", s.overlap_note}};
    if (s.next) {
      d["runner_up_first_in"] = s.next->flips;
      d["members"] = s.next->members;
      nlohmann::json n = {{"line", uncertainty::NextMeasurementLine(*s.next)},
                          {"explained", s.next->explained}};
      if (s.next->layout) {
        n["layout"] = evidence::SummaryLayoutJson(*s.next->layout);
        n["concurrency"] = s.next->concurrency;
      }
      d["next_measurement"] = n;
    }
    j["decision"] = d;
  }
  return j;
}

void AppendBreakdown(const std::vector<predict::SearchPoint>& points, std::string& out) {
  out +=
      "\n# time breakdown: share of the sample window per stage (compute | exposed TP "
      "collectives | PP receive all-gather | kernel gaps | idle = bubble)\n";
  for (const auto& sp : points) {
    const auto& p = sp.prediction;
    const plan::LayoutPlan& lp = *sp.plan;
    // DeepEP's dispatch and combine replace the MoE layers' FFN all-reduces.
    const std::string alltoall =
        lp.alltoall_per_forward > 0
            ? fmt::format("  all-to-all/forward {} ({} across nodes)", lp.alltoall_per_forward,
                          lp.cross_node_alltoall_per_forward)
            : "";
    out += fmt::format(
        "{}  C={}  all-reduce/forward {} ({} across nodes){}  exposed comm {}  bubble {}\n",
        p.layout.Label(), p.concurrency, lp.allreduce_per_forward,
        lp.cross_node_allreduce_per_forward, alltoall, Pct(p.exposed_comm_share),
        Pct(p.bubble_share));
    table::Table t{
        {"stage", "layers", "TP group", "compute", "comm", "pp-recv", "gaps", "idle", "peak"},
        {},
        {false, true, true, false, false, false, false, false, false}};
    for (size_t s = 0; s < p.stage_shares.size(); ++s) {
      const auto& sh = p.stage_shares[s];
      const auto& st = lp.stages[s];
      t.rows.push_back({std::to_string(s), fmt::format("[{},{})", st.first_layer, st.end_layer),
                        st.collectives.crosses_nodes()
                            ? fmt::format("{} nodes", st.collectives.nodes_spanned)
                            : std::string("node-local"),
                        Pct(sh.compute), Pct(sh.exposed_comm), Pct(sh.transfer), Pct(sh.overhead),
                        Pct(sh.idle), FormatNumber(p.memory.stages[s].peak_mib, 0) + " MiB"});
    }
    out += table::Indent(table::RenderTextTable(t), 2);
    if (!p.stage_shares.empty()) {
      const auto mean = predict::MeanClassShares(p.stage_shares);
      out += "  compute by class, share of the window (mean over stages): " +
             nsys::ClassesText(
                 [&mean](nsys::ComputeClass c) { return Pct(mean[static_cast<int>(c)]); }) +
             "\n";
    }
    if (!p.memory.stages.empty()) {
      const auto& tight = p.memory.stages[p.memory.tightest_stage];
      out += fmt::format("  tightest: stage {} ({}); headroom {} MiB\n", p.memory.tightest_stage,
                         p.memory.tightest_reason, FormatNumber(tight.headroom_mib, 0));
    }
  }
}

void AppendDecode(const std::vector<SimulatedPoint>& points, std::string& out) {
  out +=
      "\n# decode (predicted): TPOT p50 = median over requests of (e2e - TTFT) / "
      "(output tokens - 1); ITL = gaps between streamed tokens\n";
  table::Table t{{"layout", "C", "TPOT p50 ms", "ITL p99 ms", "output tok/s", "e2e p50 s"},
                 {},
                 {true, false, false, false, false, false}};
  for (const auto& sp : points) {
    const auto& p = sp.point->prediction;
    const stats::Figures figures = stats::FiguresOf(p.metrics, p.layout.gpus());
    std::vector<std::string> row = {p.layout.Label(), std::to_string(p.concurrency)};
    for (const DecodeFigure& f : DecodeFigures(sp)) {
      std::string cell = FormatNumber(stats::FigureIn(figures.*f.member, f.unit), 2);
      if (f.interval)
        cell += fmt::format(" [{}, {}]", FormatNumber(stats::FigureIn(f.interval->low, f.unit), 2),
                            FormatNumber(stats::FigureIn(f.interval->high, f.unit), 2));
      row.push_back(cell);
    }
    t.rows.push_back(std::move(row));
  }
  out += table::RenderTextTable(t);
}

void AppendCapCheck(const std::vector<predict::SearchPoint>& points, std::string& out) {
  out +=
      "\n# pp-max-micro-batch-size = 1 (one request per micro-batch) vs SGLang's default, "
      "this workload\n";
  for (const auto& sp : points) {
    if (sp.cap1_input_tps <= 0) continue;
    const auto& p = sp.prediction;
    out += fmt::format("  {}  C={}  default cap {}: {} tok/s   cap 1: {} tok/s   change {}\n",
                       p.layout.Label(), p.concurrency, p.sim.pp_max_micro_batch_size,
                       FormatNumber(p.metrics.input_tps, 2), FormatNumber(sp.cap1_input_tps, 2),
                       FormatSignedPercent(sp.cap1_input_tps / p.metrics.input_tps - 1));
  }
}

void AppendPartitionCheck(const std::vector<predict::SearchPoint>& points, double gpu_mib,
                          std::string& out) {
  bool any = false;
  for (const auto& sp : points) any = any || !sp.roomier_partition.empty();
  if (!any) return;
  out +=
      "\n# SGLANG_PP_LAYER_PARTITION that leaves the tightest stage more memory than SGLang's "
      "even split (no stage given more layers than the even split's largest), this workload\n";
  for (const auto& sp : points) {
    if (sp.roomier_partition.empty()) continue;
    const auto& p = sp.prediction;
    out += fmt::format(
        "  {}  C={}  even: headroom {} MiB, {} tok/s   \"{}\": headroom {} MiB, {} tok/s   "
        "change {}\n",
        p.layout.Label(), p.concurrency,
        FormatNumber(decide::HeadroomMib(gpu_mib, p.memory.peak_mib_max), 0),
        FormatNumber(p.metrics.input_tps, 2), spec::PpLayerPartitionText(sp.roomier_partition),
        FormatNumber(decide::HeadroomMib(gpu_mib, sp.roomier_peak_mib), 0),
        FormatNumber(sp.roomier_input_tps, 2),
        FormatSignedPercent(sp.roomier_input_tps / p.metrics.input_tps - 1));
  }
  // The spec's table takes one split per pipeline size: the first layout's,
  // and a layout of the same size that found another, as a comment.
  out +=
      "  to run and predict a layout with its split, set it in the spec (one "
      "[engine.pp_layer_partition] table):\n"
      "    [engine.pp_layer_partition]\n";
  std::map<int, std::vector<int>> written;
  std::set<std::string> layouts;
  for (const auto& sp : points) {
    const spec::LayoutSpec& layout = sp.prediction.layout;
    if (sp.roomier_partition.empty() || !layouts.insert(layout.Label()).second) continue;
    const auto [at, first] = written.emplace(layout.pp, sp.roomier_partition);
    if (!first && at->second == sp.roomier_partition) continue;
    out += fmt::format("    {}{} = [{}]  # {}\n", first ? "" : "# ", layout.pp,
                       fmt::join(sp.roomier_partition, ", "), layout.Label());
  }
}

void AppendUncertainty(const uncertainty::UncertaintySummary& s,
                       const cost::Calibration& calibration, const decide::Objective& objective,
                       std::string& out) {
  out +=
      "\n# sensitivity: how much of a layout's input TPS interval is the model's form "
      "(its structural error, fitted to the backtest's misses) and how much the "
      "parameters (log-space variance shares); each parameter's share of the variance "
      "of the predicted input TPS it explains alone (squared rank correlation across "
      "the draws; + when TPS rises with it), and its calibration status\n";
  out += table::RenderTextTable(SensitivityTable(s, calibration));
  const std::vector<std::string> lines = DecisionUncertaintyLines(s, objective);
  if (lines.empty()) return;
  out += "\n# decision under uncertainty (predicted)\n";
  for (const std::string& line : lines) out += "  " + line + "\n";
}

// Each simulated sample once (a layout's points share their concurrency levels).
std::vector<decide::LoopSample> Samples(const SimulatedPage& page) {
  std::vector<decide::LoopSample> samples;
  for (const auto& sp : page.points) {
    decide::LoopSample s = SampleOf(sp.point->prediction, page.inputs->spec.workload);
    if (std::none_of(samples.begin(), samples.end(),
                     [&](const decide::LoopSample& o) { return o.label == s.label; }))
      samples.push_back(std::move(s));
  }
  return samples;
}

std::vector<ResultRow> Rows(const SimulatedPage& page) {
  std::vector<ResultRow> rows;
  for (const auto& sp : page.points) {
    const auto& p = sp.point->prediction;
    ResultRow row;
    row.point.layout = p.layout;
    row.point.concurrency = p.concurrency;
    row.point.median.input_tps = p.metrics.input_tps;
    row.point.median.ttft_p50_s = p.metrics.ttft_s.p50;
    row.point.median.ttft_p95_s = p.metrics.ttft_s.p95;
    row.point.peak_gpu_mib = p.memory.peak_mib_max;
    if (sp.spread) {
      row.input_tps_interval = sp.spread->input_tps;
      row.ttft_p50_interval = sp.spread->ttft_p50_s;
      row.ttft_p95_interval = sp.spread->ttft_p95_s;
    }
    rows.push_back(row);
  }
  return rows;
}

bool Decode(const SimulatedPage& page) { return page.inputs->spec.workload.output_tokens > 1; }

}  // namespace

std::string RenderSimulatedPrediction(const SimulatedPage& page) {
  const inputs::SearchInputs& in = *page.inputs;
  const cost::Calibration& calibration = *page.calibration;
  const bool intervals = !page.prediction->intervals.empty();
  const auto& w = in.spec.workload;
  std::string out = fmt::format("# ppsearch simulate {} (predicted values; calibration: {})\n",
                                page.spec_path, calibration.source);
  out += fmt::format("# {} on {} x {} {}; {} requests x {} input / {} output tokens per sample\n",
                     in.model.name, in.spec.cluster.hosts.size(), in.spec.cluster.gpus_per_node,
                     in.hardware.gpu_name, w.requests, FormatThousands(w.input_tokens),
                     w.output_tokens);
  // A fit that hit a physical bound still predicts, but the user must know
  // the model could not reach the measurement.
  if (!calibration.infeasible.empty())
    out += fmt::format(
        "# the calibration is infeasible: {} finding(s) in {} (parameters held at physical "
        "bounds while the data pulls further; see its \"infeasible\" list)\n",
        calibration.infeasible.size(), calibration.source);
  if (const std::string line = decide::SteadyStateLine(Samples(page), "load point"); !line.empty())
    out += "# " + line + "\n";
  if (const std::string line = BurstLine(in.hardware, in.spec, page.points); !line.empty())
    out += "# " + line + "\n";
  for (const std::string& line : OutOfMemoryLines(in.hardware, page.points))
    out += "# " + line + "\n";
  if (intervals) out += "# " + IntervalMeaning(page.ensemble.members, page.ensemble.seed) + "\n";
  const std::vector<ResultRow> rows = Rows(page);
  out += RenderResultTable(rows, rows, in.spec.baseline.layout, false);
  if (Decode(page)) AppendDecode(page.points, out);
  AppendBreakdown(page.prediction->points, out);
  AppendCapCheck(page.prediction->points, out);
  AppendPartitionCheck(page.prediction->points, page.inputs->hardware.memory_mib, out);
  if (intervals)
    AppendUncertainty(page.prediction->summary, calibration, in.spec.decision.objective, out);
  return out;
}

nlohmann::json SimulatedPredictionJson(const SimulatedPage& page) {
  const cost::Calibration& calibration = *page.calibration;
  const predict::SearchPrediction& prediction = *page.prediction;
  nlohmann::json j = {{"simulated", true},
                      {"calibration", calibration.source},
                      {"calibration_infeasible", calibration.infeasible},
                      {"points", nlohmann::json::array()}};
  for (const auto& sp : page.points)
    j["points"].push_back(
        PointJson(sp, page.inputs->spec.workload, Decode(page), page.inputs->hardware.memory_mib));
  j["steady_rule"] = decide::SteadyRule();
  j["memory_interval"] = MemoryIntervalJson(memory::DefaultMemoryTermRange());
  if (!prediction.intervals.empty()) {
    j["uncertainty"] = UncertaintyJson(prediction.summary, calibration, page.ensemble,
                                       page.inputs->spec.decision.objective);
    if (const auto& m = prediction.model_form) {
      auto& mj = j["uncertainty"]["model_form"];
      mj["form"] = cost::kModelForm;
      mj["s0"] = m->s0;
      const auto scales = m->PerUnit();
      for (int k = 0; k < cost::kModelFormDistances; ++k)
        mj[cost::kModelFormDistanceNames[k]] = scales[k];
      mj["source"] = m->source;
      // The figures ApplyModelForm widens: those with intervals above.
      nlohmann::json applies = nlohmann::json::array();
      for (double stats::Figures::*m :
           {&stats::Figures::input_tps, &stats::Figures::ttft_p50_s, &stats::Figures::ttft_p95_s})
        applies.push_back(stats::FigureKey(m));
      for (const DecodeFigure& d : DecodeFigures(SimulatedPoint{}))
        applies.push_back(stats::FigureKey(d.member, d.unit));
      mj["applies_to"] = applies;
    }
  }
  return j;
}

}  // namespace ppsearch::report

#include "report/disaggregated_prediction.h"

#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "memory/served.h"
#include "report/out_of_memory.h"
#include "util/format.h"

namespace ppsearch::report {
namespace {

int DeploymentGpus(const predict::DisaggregatedPrediction& p) {
  return p.prefill.gpus + p.decode.gpus;
}

double PerGpuOf(double tps, int gpus) { return gpus > 0 ? tps / gpus : 0; }

std::string MsText(double s) { return FormatNumber(s * 1e3, 2); }

std::string PoolHeader(const plan::PoolPlan& pool) {
  std::string hosts;
  for (const std::string& h : pool.hosts) hosts += (hosts.empty() ? "" : ",") + h;
  const spec::LayoutSpec& l = pool.pool.layout;
  return fmt::format("{} {} x PP{}/TP{}/EP{}{} on {}", pool.role, std::max(l.instances, 1), l.pp,
                     l.tp, l.ep, l.dp > 1 ? fmt::format("/DP{}", l.dp) : "", hosts);
}

nlohmann::json PoolLoadJson(const predict::PoolPrediction& p, double gpu_total_mib) {
  const std::optional<int> oom = memory::StageOutOfMemory(p.served_memory, gpu_total_mib);
  return {{"servers", p.servers},
          {"gpus", p.gpus},
          {"busy_share", p.busy_share},
          {"batch_fill", p.batch_fill},
          {"peak_mib", p.memory.peak_mib_max},
          {"served_peak_mib", p.served_memory.peak_mib_max},
          {"out_of_memory_stage", oom ? nlohmann::json(*oom) : nlohmann::json(nullptr)},
          {"max_total_tokens", p.memory.max_total_tokens},
          {"max_running_requests", p.memory.max_running_requests}};
}

// Per pool, the load points whose batches outgrow a GPU of its servers
// (PoolPrediction::served_memory): SGLang runs out of memory there.
std::vector<std::string> OutOfMemoryLines(const DisaggregatedPage& page) {
  std::vector<std::string> lines;
  for (const bool prefill : {true, false}) {
    std::string loads;
    const predict::PoolPrediction* last = nullptr;
    int stage = 0;
    for (const predict::DisaggregatedPrediction& p : page.points) {
      const predict::PoolPrediction& pool = prefill ? p.prefill : p.decode;
      const std::optional<int> over =
          memory::StageOutOfMemory(pool.served_memory, page.gpu_total_mib);
      if (!over) continue;
      loads += (loads.empty() ? "C=" : ", C=") + std::to_string(p.concurrency);
      last = &pool;
      stage = *over;
    }
    if (last != nullptr)
      lines.push_back(OutOfMemoryLine(prefill ? "the prefill servers" : "the decode servers", loads,
                                      true, last->served_memory, stage, page.gpu_total_mib));
  }
  return lines;
}

}  // namespace

std::string RenderDisaggregatedPrediction(const DisaggregatedPage& page) {
  std::string out;
  out += fmt::format("# ppsearch simulate {} (predicted values; calibration: {})\n", page.spec_path,
                     page.calibration_source);
  out += fmt::format("# {} disaggregated on {}: {}; {}\n", page.model_name, page.gpu_name,
                     PoolHeader(page.plan->prefill), PoolHeader(page.plan->decode));
  out += fmt::format("# {} requests x {} input / {} output tokens per sample; router {}\n",
                     page.workload_requests, FormatThousands(page.input_tokens),
                     FormatThousands(page.output_tokens), page.plan->transfer.router_policy);
  out += fmt::format(
      "# KV transfer ({}): {} bytes per prompt token, {} GB/s per prefill server's link, {} us "
      "per transfer, {} us handshake\n",
      page.plan->transfer.transfer_backend, FormatThousands(page.transfer.kv_bytes_per_token),
      FormatNumber(page.transfer.bytes_per_ns, 1),
      FormatNumber(static_cast<double>(page.transfer.latency_ns) / 1e3, 1),
      FormatNumber(static_cast<double>(page.transfer.handshake_ns) / 1e3, 1));
  for (const std::string& line : OutOfMemoryLines(page)) out += "# " + line + "\n";
  out += "\n";
  out += fmt::format("{:>6} {:>6} {:>12} {:>12} {:>9} {:>10} {:>10} {:>9} {:>9}\n", "C", "done",
                     "input tok/s", "output tok/s", "out/GPU", "TTFT p50 s", "TTFT p99 s",
                     "TPOT p50", "TPOT p99");
  for (const auto& p : page.points) {
    const stats::SampleMetrics& m = p.metrics;
    out += fmt::format("{:>6} {:>6} {:>12} {:>12} {:>9} {:>10} {:>10} {:>9} {:>9}\n", p.concurrency,
                       fmt::format("{}/{}", m.requests_completed, m.requests_total),
                       FormatNumber(m.input_tps, 0), FormatNumber(m.output_tps, 0),
                       FormatNumber(PerGpuOf(m.output_tps, DeploymentGpus(p)), 1),
                       FormatNumber(m.ttft_s.p50, 3), FormatNumber(m.ttft_s.p99, 3),
                       MsText(m.tpot_s.p50) + " ms", MsText(m.tpot_s.p99) + " ms");
  }
  out += "\nWhere the time to first token went (means, ms):\n";
  out += fmt::format("{:>6} {:>13} {:>10} {:>9} {:>9} {:>12} {:>15}\n", "C", "prealloc wait",
                     "handshake", "prefill", "transfer", "decode join", "transfer share");
  for (const auto& p : page.points) {
    const predict::TtftParts& t = p.ttft_parts;
    out += fmt::format("{:>6} {:>13} {:>10} {:>9} {:>9} {:>12} {:>15}\n", p.concurrency,
                       MsText(t.prealloc_wait_s), MsText(t.handshake_s), MsText(t.prefill_s),
                       MsText(t.transfer_s), MsText(t.decode_join_s),
                       FormatPercent(p.transfer_share_of_ttft, 1));
  }
  out += "\nThe pools' load (busy: GPU time at work; held: requests held / admitted at once):\n";
  out += fmt::format("{:>6} {:>13} {:>13} {:>13} {:>13}  {}\n", "C", "prefill busy", "prefill held",
                     "decode busy", "decode held", "bottleneck");
  for (const auto& p : page.points)
    out += fmt::format(
        "{:>6} {:>13} {:>13} {:>13} {:>13}  {}\n", p.concurrency,
        FormatPercent(p.prefill.busy_share, 1), FormatPercent(p.prefill.batch_fill, 1),
        FormatPercent(p.decode.busy_share, 1), FormatPercent(p.decode.batch_fill, 1), p.bottleneck);
  if (!page.intervals.empty()) {
    out += fmt::format(
        "\nIntervals (10th-90th percentile of the model's form error: each pool's distance from "
        "the calibration, and {:.3f} for the transfer, preallocation and router no measurement "
        "has calibrated):\n",
        page.intervals.front().transfer_sigma);
    out += fmt::format("{:>6} {:>20} {:>20} {:>22} {:>7}\n", "C", "out/GPU", "TTFT p50 s",
                       "TPOT p50 ms", "sigma");
    for (size_t i = 0; i < page.points.size() && i < page.intervals.size(); ++i) {
      const predict::DisaggregatedIntervals& v = page.intervals[i];
      const int gpus = DeploymentGpus(page.points[i]);
      out += fmt::format(
          "{:>6} {:>20} {:>20} {:>22} {:>7}\n", page.points[i].concurrency,
          FormatNumber(PerGpuOf(v.output_tps.low, gpus), 1) + " - " +
              FormatNumber(PerGpuOf(v.output_tps.high, gpus), 1),
          FormatNumber(v.ttft_p50_s.low, 3) + " - " + FormatNumber(v.ttft_p50_s.high, 3),
          MsText(v.tpot_p50_s.low) + " - " + MsText(v.tpot_p50_s.high), FormatNumber(v.sigma, 3));
    }
  }
  if (!page.points.empty()) {
    out += "\nMemory per server:\n";
    for (const predict::PoolPrediction* pool :
         {&page.points.front().prefill, &page.points.front().decode}) {
      // With DP attention each rank holds its own requests in its own pool.
      const int ranks = pool->scheduler.dp_size;
      out += fmt::format("  {:<8} peak {} MiB; KV pool {} tokens; max running requests {}{}\n",
                         pool->role, FormatThousands(std::llround(pool->memory.peak_mib_max)),
                         FormatThousands(pool->memory.max_total_tokens),
                         pool->memory.max_running_requests,
                         ranks > 1 ? fmt::format(" per DP rank ({} ranks)", ranks) : "");
    }
  }
  return out;
}

nlohmann::json DisaggregatedPredictionJson(const DisaggregatedPage& page) {
  nlohmann::json j = {{"simulated", true},
                      {"disaggregated", true},
                      {"calibration", page.calibration_source},
                      {"transfer",
                       {{"backend", page.plan->transfer.transfer_backend},
                        {"router_policy", page.plan->transfer.router_policy},
                        {"kv_bytes_per_token", page.transfer.kv_bytes_per_token},
                        {"link_gbps", page.transfer.bytes_per_ns},
                        {"latency_us", static_cast<double>(page.transfer.latency_ns) / 1e3},
                        {"handshake_us", static_cast<double>(page.transfer.handshake_ns) / 1e3}}},
                      {"points", nlohmann::json::array()}};
  for (size_t i = 0; i < page.points.size(); ++i) {
    const predict::DisaggregatedPrediction& p = page.points[i];
    const stats::SampleMetrics& m = p.metrics;
    const predict::TtftParts& t = p.ttft_parts;
    j["points"].push_back({{"concurrency", p.concurrency},
                           {"requests_completed", m.requests_completed},
                           {"request_errors", m.request_errors},
                           {"input_tps", m.input_tps},
                           {"output_tps", m.output_tps},
                           {"output_tps_per_gpu", PerGpuOf(m.output_tps, DeploymentGpus(p))},
                           {"ttft_p50_s", m.ttft_s.p50},
                           {"ttft_p99_s", m.ttft_s.p99},
                           {"tpot_p50_ms", m.tpot_s.p50 * 1e3},
                           {"tpot_p99_ms", m.tpot_s.p99 * 1e3},
                           {"ttft_parts",
                            {{"prealloc_wait_s", t.prealloc_wait_s},
                             {"handshake_s", t.handshake_s},
                             {"prefill_s", t.prefill_s},
                             {"transfer_s", t.transfer_s},
                             {"decode_join_s", t.decode_join_s}}},
                           {"transfer_share_of_ttft", p.transfer_share_of_ttft},
                           {"bottleneck", p.bottleneck},
                           {"pools",
                            {{"prefill", PoolLoadJson(p.prefill, page.gpu_total_mib)},
                             {"decode", PoolLoadJson(p.decode, page.gpu_total_mib)}}}});
    if (i < page.intervals.size()) {
      const predict::DisaggregatedIntervals& v = page.intervals[i];
      auto pair = [](const uncertainty::Interval& x, double scale = 1) {
        return nlohmann::json::array({x.low * scale, x.high * scale});
      };
      const int gpus = DeploymentGpus(p);
      j["points"].back()["intervals"] = {
          {"sigma", v.sigma},
          {"pool_sigma", v.pool_sigma},
          {"transfer_sigma", v.transfer_sigma},
          {"input_tps", pair(v.input_tps)},
          {"output_tps", pair(v.output_tps)},
          {"output_tps_per_gpu", pair(v.output_tps, gpus > 0 ? 1.0 / gpus : 0.0)},
          {"ttft_p50_s", pair(v.ttft_p50_s)},
          {"ttft_p99_s", pair(v.ttft_p99_s)},
          {"tpot_p50_ms", pair(v.tpot_p50_s, 1e3)},
          {"tpot_p99_ms", pair(v.tpot_p99_s, 1e3)}};
    }
  }
  return j;
}

}  // namespace ppsearch::report

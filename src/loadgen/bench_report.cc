#include "loadgen/bench_report.h"

#include <fmt/format.h>

#include <map>

#include "loadgen/url.h"
#include "table/table.h"
#include "util/format.h"

namespace ppsearch::loadgen {
namespace {

using workload::RequestRecord;

std::string Ms(double s) { return FormatNumber(s * 1e3, 2); }

// A latency of the completed requests; "-" when none completed.
std::string CompletedMs(const stats::SampleMetrics& m, double s) {
  return m.requests_completed > 0 ? Ms(s) : std::string("-");
}

std::string LoopDescription(const BenchOptions& o) {
  if (o.request_rate <= 0) return fmt::format("closed loop, concurrency {}", o.concurrency);
  return fmt::format("open loop, Poisson {} requests/s, {}", FormatNumber(o.request_rate, 2),
                     o.concurrency > 0 ? "at most " + std::to_string(o.concurrency) + " in flight"
                                       : std::string("no in-flight cap"));
}

// "3 timeout, 1 http_error" and the first error of the sample.
std::string ErrorBreakdown(const BenchResult& r) {
  std::map<std::string, int> counts;
  const RequestRecord* first = nullptr;
  for (const auto& rec : r.records) {
    if (rec.ok()) continue;
    ++counts[workload::RequestStatusName(rec.status)];
    if (first == nullptr && rec.status != workload::RequestStatus::kNotSent) first = &rec;
  }
  std::string out;
  for (const auto& [name, n] : counts)
    out += (out.empty() ? "" : ", ") + std::to_string(n) + " " + name;
  if (first != nullptr) out += fmt::format("; first: request {}: {}", first->id, first->error);
  return out;
}

}  // namespace

std::vector<evidence::BenchInstance> ServedByInstance(const std::vector<RequestRecord>& records,
                                                      size_t instances) {
  std::vector<evidence::BenchInstance> out(instances);
  for (size_t i = 0; i < instances; ++i) {
    out[i].instance = static_cast<int>(i);
    for (const RequestRecord& rec : records) {
      if (rec.instance != static_cast<int>(i) || rec.status == workload::RequestStatus::kNotSent)
        continue;
      ++out[i].requests;
      out[i].requests_ok += rec.ok() ? 1 : 0;
    }
  }
  return out;
}

std::vector<evidence::BenchInstance> BenchInstances(const BenchOptions& o, const BenchResult& r) {
  const std::vector<std::string> urls = ServerUrls(o);
  std::vector<evidence::BenchInstance> out = ServedByInstance(r.records, urls.size());
  for (size_t i = 0; i < urls.size(); ++i) out[i].url = ShownUrl(urls[i]);
  return out;
}

std::string BenchVerdict(const BenchResult& r) {
  const auto& m = r.metrics;
  return fmt::format("{}/{} requests ok, {} errors, {} prompt-length mismatches",
                     m.requests_completed, m.requests_total,
                     m.requests_total - m.requests_completed, r.prompt_length_mismatches);
}

std::string RenderBenchText(const BenchOptions& o, const BenchResult& r) {
  const auto& m = r.metrics;
  std::string out;
  auto line = [&out](const std::string& s) { out += s + "\n"; };
  line("# ppsearch bench");
  if (o.more_urls.empty()) {
    line(fmt::format("# url: {}  api: {} (POST {})", ShownUrl(o.url), ApiName(o.api),
                     ApiPath(o.api)));
  } else {
    std::vector<std::string> shown;
    for (const std::string& url : ServerUrls(o)) shown.push_back(ShownUrl(url));
    line(fmt::format("# urls: {}  routing: {}  api: {} (POST {})", fmt::join(shown, " "),
                     RoutingName(o.routing), ApiName(o.api), ApiPath(o.api)));
    std::string served;
    for (const evidence::BenchInstance& i : BenchInstances(o, r))
      served += fmt::format("{}{}: {} requests ({} ok)", served.empty() ? "" : ", ", i.instance,
                            i.requests, i.requests_ok);
    line("# per instance: " + served);
  }
  line(fmt::format("# {}; {} requests; warm-up {} ({} ok); cache flush: {}", LoopDescription(o),
                   o.num_requests, o.warmup_requests, r.warmup_ok, o.flush_cache ? "yes" : "no"));
  if (!o.lengths.empty()) {
    line(fmt::format("# lengths: {} ({} rows, drawn with the seed)  timeout: {} s",
                     o.lengths_file.empty() ? std::string("given") : o.lengths_file,
                     o.lengths.size(), FormatNumber(o.timeout_s, 0)));
  } else {
    line(fmt::format(
        "# input tokens: {}{}  output tokens: {}{}  timeout: {} s", FormatThousands(o.input_tokens),
        o.range_ratio < 1 ? fmt::format(" (uniform from x{})", o.range_ratio) : "", o.output_tokens,
        o.output_range_ratio < 1 ? fmt::format(" (uniform from x{})", o.output_range_ratio) : "",
        FormatNumber(o.timeout_s, 0)));
  }
  line(fmt::format("# seed: {}  token ids: [{}, {})  shared prefix: {} tokens", o.prompt.seed,
                   o.prompt.min_token_id, o.prompt.vocab_size, o.prompt.shared_prefix_tokens));
  table::Table t{
      {"requests", "ok", "errors", "duration", "req_rate", "input_tput", "output_tput", "ttft_mean",
       "ttft_p50", "ttft_p95", "ttft_p99", "ttft_max", "e2e_p50", "e2e_p99"},
      {},
      {},
      {"", "", "", "(s)", "(req/s)", "(tok/s)", "(tok/s)", "(ms)", "(ms)", "(ms)", "(ms)", "(ms)",
       "(ms)", "(ms)"},
      /*commented_header=*/true};
  t.rows.push_back(
      {std::to_string(m.requests_total), std::to_string(m.requests_completed),
       std::to_string(m.requests_total - m.requests_completed), FormatNumber(m.duration_s, 3),
       FormatNumber(m.request_throughput, 2), FormatNumber(m.input_tps, 1),
       FormatNumber(m.output_tps, 1), CompletedMs(m, m.ttft_s.mean), CompletedMs(m, m.ttft_s.p50),
       CompletedMs(m, m.ttft_s.p95), CompletedMs(m, m.ttft_s.p99), CompletedMs(m, m.ttft_s.max),
       CompletedMs(m, m.e2e_s.p50), CompletedMs(m, m.e2e_s.p99)});
  // Decode columns only where requests generated more than one token: a
  // prefill-only table stays as it was.
  if (m.tpot_requests > 0) {
    for (const char* name : {"tpot_p50", "tpot_p99", "itl_p50", "itl_p99"}) {
      t.header.push_back(name);
      t.units.push_back("(ms)");
    }
    t.rows.back().push_back(Ms(m.tpot_s.p50));
    t.rows.back().push_back(Ms(m.tpot_s.p99));
    // The rest of an answer read with its first token leaves no ITL value:
    // its ITL is unknown, not 0 ms.
    for (double v : {m.itl_s.p50, m.itl_s.p99})
      t.rows.back().push_back(m.itl_values > 0 ? Ms(v) : std::string("-"));
  }
  out += table::RenderTextTable(t);
  if (m.requests_completed < m.requests_total) line("# errors: " + ErrorBreakdown(r));
  line("# " + BenchVerdict(r));
  return out;
}

evidence::BenchClientSummary BenchClientSummaryOf(const BenchOptions& o, const BenchResult& r) {
  const auto& m = r.metrics;
  evidence::BenchClientSummary c;
  c.url = ShownUrl(o.url);
  c.api = ApiName(o.api);
  c.concurrency = o.concurrency;
  c.request_rate = o.request_rate;
  c.requests = o.num_requests;
  c.warmup_requests = o.warmup_requests;
  c.warmup_ok = r.warmup_ok;
  c.flush_cache = o.flush_cache;
  c.input_tokens = o.input_tokens;
  c.output_tokens = o.output_tokens;
  c.range_ratio = o.range_ratio;
  c.output_range_ratio = o.output_range_ratio;
  c.lengths_file = o.lengths_file;
  c.lengths_rows = static_cast<int64_t>(o.lengths.size());
  c.timeout_s = o.timeout_s;
  c.seed = o.prompt.seed;
  c.min_token_id = o.prompt.min_token_id;
  c.vocab_size = o.prompt.vocab_size;
  c.shared_prefix_tokens = o.prompt.shared_prefix_tokens;
  c.requests_total = m.requests_total;
  c.requests_completed = m.requests_completed;
  c.request_errors = m.requests_total - m.requests_completed;
  c.prompt_length_mismatches = r.prompt_length_mismatches;
  c.total_input_tokens = m.input_tokens;
  c.total_output_tokens = m.output_tokens;
  c.duration_s = m.duration_s;
  c.request_throughput = m.request_throughput;
  c.input_tps = m.input_tps;
  c.output_tps = m.output_tps;
  c.ttft_s = m.ttft_s;
  c.e2e_s = m.e2e_s;
  c.tpot_requests = m.tpot_requests;
  if (m.tpot_requests > 0) c.tpot_s = m.tpot_s;
  c.itl_values = m.itl_values;
  if (m.itl_values > 0) c.itl_s = m.itl_s;
  c.client_cpu_s = r.client_cpu_s;
  if (!o.more_urls.empty()) c.routing = RoutingName(o.routing);
  return c;
}

nlohmann::json BenchSummaryJson(const BenchOptions& o, const BenchResult& r) {
  return evidence::BenchClientJson(
      BenchClientSummaryOf(o, r),
      o.more_urls.empty() ? std::vector<evidence::BenchInstance>{} : BenchInstances(o, r));
}

}  // namespace ppsearch::loadgen

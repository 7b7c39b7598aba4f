#include "evidence/bench_summary.h"

#include <fmt/format.h>

#include <initializer_list>

#include "evidence/json_fields.h"
#include "util/files.h"
#include "util/json_text.h"

namespace ppsearch::evidence {
namespace {

nlohmann::json LatencyJson(const stats::LatencySummary& s) {
  return {{"mean", s.mean}, {"p50", s.p50}, {"p90", s.p90},
          {"p95", s.p95},   {"p99", s.p99}, {"max", s.max}};
}

constexpr const char* kLatencyKeys[] = {"mean", "p50", "p90", "p95", "p99", "max"};

// Latencies measured over nothing: each figure null, not a 0 that reads as
// an instant answer.
nlohmann::json NullLatencyJson() {
  nlohmann::json j = nlohmann::json::object();
  for (const char* key : kLatencyKeys) j[key] = nullptr;
  return j;
}

nlohmann::json LatencyJsonOf(const stats::LatencySummary& s, int completed) {
  return completed > 0 ? LatencyJson(s) : NullLatencyJson();
}

nlohmann::json LatencyJsonOf(const std::optional<stats::LatencySummary>& s) {
  return s ? LatencyJson(*s) : NullLatencyJson();
}

nlohmann::json InstancesJson(const std::vector<BenchInstance>& instances) {
  nlohmann::json out = nlohmann::json::array();
  for (const BenchInstance& i : instances) {
    nlohmann::json j = {
        {"instance", i.instance}, {"requests", i.requests}, {"requests_ok", i.requests_ok}};
    if (i.hosts) j["hosts"] = *i.hosts;
    if (!i.url.empty()) j["url"] = i.url;
    out.push_back(std::move(j));
  }
  return out;
}

nlohmann::json DisaggregationJson(const BenchDisaggregation& d) {
  nlohmann::json pools = nlohmann::json::array();
  for (const BenchPool& p : d.pools)
    pools.push_back({{"role", p.role},
                     {"gpus", p.gpus},
                     {"servers", InstancesJson(p.servers)},
                     {"busy_share", p.busy_share},
                     {"batch_fill", p.batch_fill}});
  return {{"pools", pools},
          {"ttft_parts_s",
           {{"prealloc_wait", d.prealloc_wait_s},
            {"handshake", d.handshake_s},
            {"prefill", d.prefill_s},
            {"transfer", d.transfer_s},
            {"decode_join", d.decode_join_s}}},
          {"transfer_share_of_ttft", d.transfer_share_of_ttft},
          {"transfer_bytes", d.transfer_bytes},
          {"bottleneck", d.bottleneck}};
}

bool HasAny(const JsonFields& r, std::initializer_list<const char*> keys) {
  for (const char* key : keys)
    if (r.Has(key)) return true;
  return false;
}

// Any key of the load generator's part but the seed, which the file shares.
bool HasClientKey(const JsonFields& r) {
  static const nlohmann::json kClient = BenchClientJson({}, {});
  for (const auto& [key, value] : kClient.items())
    if (key != "seed" && r.Has(key.c_str())) return true;
  return false;
}

Status ReadLatency(const JsonFields& r, const char* key, stats::LatencySummary* out) {
  PPS_ASSIGN_OR_RETURN(JsonFields l, r.Fields(key));
  const std::pair<const char*, double*> fields[] = {{"mean", &out->mean}, {"p50", &out->p50},
                                                    {"p90", &out->p90},   {"p95", &out->p95},
                                                    {"p99", &out->p99},   {"max", &out->max}};
  for (const auto& [name, field] : fields) PPS_RETURN_IF_ERROR(l.Number(name, field));
  return Status::Ok();
}

// A decode latency group of `count` values: none when the count is 0 (a
// file written before null held made-up zeros there) or every figure is
// null; else each figure must be a number.
Status ReadDecodeLatency(const JsonFields& r, const char* key, const char* count_key, int64_t count,
                         std::optional<stats::LatencySummary>* out) {
  if (count <= 0) return Status::Ok();
  PPS_ASSIGN_OR_RETURN(JsonFields l, r.Fields(key));
  bool any = false;
  for (const char* name : kLatencyKeys) any = any || l.Has(name);
  if (!any) return Status::Ok();
  const std::string expected = fmt::format("a number where {} is {}", count_key, count);
  for (const char* name : kLatencyKeys) PPS_RETURN_IF_ERROR(l.Require(name, expected.c_str()));
  stats::LatencySummary s;
  PPS_RETURN_IF_ERROR(ReadLatency(r, key, &s));
  *out = s;
  return Status::Ok();
}

Result<BenchClientSummary> ReadClient(const JsonFields& r) {
  BenchClientSummary c;
  PPS_RETURN_IF_ERROR(r.String("url", &c.url));
  PPS_RETURN_IF_ERROR(r.String("api", &c.api));
  PPS_RETURN_IF_ERROR(r.Int("concurrency", &c.concurrency));
  PPS_RETURN_IF_ERROR(r.Number("request_rate", &c.request_rate));
  PPS_RETURN_IF_ERROR(r.Int("requests", &c.requests));
  PPS_RETURN_IF_ERROR(r.Int("warmup_requests", &c.warmup_requests));
  PPS_RETURN_IF_ERROR(r.Int("warmup_ok", &c.warmup_ok));
  PPS_RETURN_IF_ERROR(r.Bool("flush_cache", &c.flush_cache));
  PPS_RETURN_IF_ERROR(r.Int64("input_tokens", &c.input_tokens));
  PPS_RETURN_IF_ERROR(r.Int64("output_tokens", &c.output_tokens));
  PPS_RETURN_IF_ERROR(r.Number("range_ratio", &c.range_ratio));
  PPS_RETURN_IF_ERROR(r.Number("output_range_ratio", &c.output_range_ratio));
  PPS_RETURN_IF_ERROR(r.String("lengths_file", &c.lengths_file));
  PPS_RETURN_IF_ERROR(r.Int64("lengths_rows", &c.lengths_rows));
  PPS_RETURN_IF_ERROR(r.Number("timeout_s", &c.timeout_s));
  PPS_RETURN_IF_ERROR(r.Uint64("seed", &c.seed));
  PPS_RETURN_IF_ERROR(r.Int64("min_token_id", &c.min_token_id));
  PPS_RETURN_IF_ERROR(r.Int64("vocab_size", &c.vocab_size));
  PPS_RETURN_IF_ERROR(r.Int64("shared_prefix_tokens", &c.shared_prefix_tokens));
  PPS_RETURN_IF_ERROR(r.Int("requests_total", &c.requests_total));
  PPS_RETURN_IF_ERROR(r.Int("requests_completed", &c.requests_completed));
  PPS_RETURN_IF_ERROR(r.Int("request_errors", &c.request_errors));
  PPS_RETURN_IF_ERROR(r.Int("prompt_length_mismatches", &c.prompt_length_mismatches));
  PPS_RETURN_IF_ERROR(r.Int64("total_input_tokens", &c.total_input_tokens));
  PPS_RETURN_IF_ERROR(r.Int64("total_output_tokens", &c.total_output_tokens));
  PPS_RETURN_IF_ERROR(r.Number("duration_s", &c.duration_s));
  PPS_RETURN_IF_ERROR(r.Number("request_throughput", &c.request_throughput));
  PPS_RETURN_IF_ERROR(r.Number("input_tps", &c.input_tps));
  PPS_RETURN_IF_ERROR(r.Number("output_tps", &c.output_tps));
  PPS_RETURN_IF_ERROR(ReadLatency(r, "ttft_s", &c.ttft_s));
  PPS_RETURN_IF_ERROR(ReadLatency(r, "e2e_s", &c.e2e_s));
  PPS_RETURN_IF_ERROR(r.Int("tpot_requests", &c.tpot_requests));
  PPS_RETURN_IF_ERROR(ReadDecodeLatency(r, "tpot_s", "tpot_requests", c.tpot_requests, &c.tpot_s));
  PPS_RETURN_IF_ERROR(r.Int64("itl_values", &c.itl_values));
  PPS_RETURN_IF_ERROR(ReadDecodeLatency(r, "itl_s", "itl_values", c.itl_values, &c.itl_s));
  PPS_RETURN_IF_ERROR(r.Number("client_cpu_s", &c.client_cpu_s));
  PPS_RETURN_IF_ERROR(r.String("routing", &c.routing));
  return c;
}

Status ReadInstances(const JsonFields& r, std::vector<BenchInstance>* out,
                     const char* key = "instances") {
  PPS_ASSIGN_OR_RETURN(std::vector<JsonFields> each, r.FieldsOfEach(key));
  for (const JsonFields& e : each) {
    BenchInstance i;
    PPS_RETURN_IF_ERROR(e.Int("instance", &i.instance));
    if (e.Has("hosts")) {
      i.hosts.emplace();
      PPS_RETURN_IF_ERROR(e.Strings("hosts", &*i.hosts));
    }
    PPS_RETURN_IF_ERROR(e.String("url", &i.url));
    PPS_RETURN_IF_ERROR(e.Int("requests", &i.requests));
    PPS_RETURN_IF_ERROR(e.Int("requests_ok", &i.requests_ok));
    out->push_back(std::move(i));
  }
  return Status::Ok();
}

Status ReadDisaggregation(const JsonFields& r, std::optional<BenchDisaggregation>* out) {
  if (!r.Has("disaggregation")) return Status::Ok();
  PPS_ASSIGN_OR_RETURN(JsonFields j, r.Fields("disaggregation"));
  BenchDisaggregation& d = out->emplace();
  PPS_ASSIGN_OR_RETURN(std::vector<JsonFields> pools, j.FieldsOfEach("pools"));
  for (const JsonFields& p : pools) {
    BenchPool& pool = d.pools.emplace_back();
    PPS_RETURN_IF_ERROR(p.String("role", &pool.role));
    PPS_RETURN_IF_ERROR(p.Int("gpus", &pool.gpus));
    PPS_RETURN_IF_ERROR(ReadInstances(p, &pool.servers, "servers"));
    PPS_RETURN_IF_ERROR(p.Number("busy_share", &pool.busy_share));
    PPS_RETURN_IF_ERROR(p.Number("batch_fill", &pool.batch_fill));
  }
  if (j.Has("ttft_parts_s")) {
    PPS_ASSIGN_OR_RETURN(JsonFields t, j.Fields("ttft_parts_s"));
    PPS_RETURN_IF_ERROR(t.Number("prealloc_wait", &d.prealloc_wait_s));
    PPS_RETURN_IF_ERROR(t.Number("handshake", &d.handshake_s));
    PPS_RETURN_IF_ERROR(t.Number("prefill", &d.prefill_s));
    PPS_RETURN_IF_ERROR(t.Number("transfer", &d.transfer_s));
    PPS_RETURN_IF_ERROR(t.Number("decode_join", &d.decode_join_s));
  }
  PPS_RETURN_IF_ERROR(j.Number("transfer_share_of_ttft", &d.transfer_share_of_ttft));
  PPS_RETURN_IF_ERROR(j.Int64("transfer_bytes", &d.transfer_bytes));
  PPS_RETURN_IF_ERROR(j.String("bottleneck", &d.bottleneck));
  return Status::Ok();
}

// An optional value of the file's top level: set when the key is there.
template <typename T>
Status ReadOptional(const JsonFields& r, const char* key,
                    Status (JsonFields::*read)(const char*, T*) const, std::optional<T>* out) {
  if (!r.Has(key)) return Status::Ok();
  T value{};
  PPS_RETURN_IF_ERROR((r.*read)(key, &value));
  *out = value;
  return Status::Ok();
}

Status ReadGroups(const JsonFields& r, BenchSummary& s) {
  if (HasAny(r,
             {"pp_max_micro_batch_size", "micro_batches", "exposed_comm_share", "bubble_share"})) {
    BenchSimFigures& f = s.sim.emplace();
    PPS_RETURN_IF_ERROR(r.Int("pp_max_micro_batch_size", &f.pp_max_micro_batch_size));
    PPS_RETURN_IF_ERROR(r.Int64("micro_batches", &f.micro_batches));
    PPS_RETURN_IF_ERROR(r.Number("exposed_comm_share", &f.exposed_comm_share));
    PPS_RETURN_IF_ERROR(r.Number("bubble_share", &f.bubble_share));
  }
  if (r.Has("replayed_from")) {
    PPS_ASSIGN_OR_RETURN(JsonFields from, r.Fields("replayed_from"));
    BenchReplayedFrom& f = s.replayed_from.emplace();
    PPS_RETURN_IF_ERROR(from.String("run", &f.run));
    PPS_RETURN_IF_ERROR(from.String("sample", &f.sample));
    PPS_RETURN_IF_ERROR(from.String("file", &f.file));
    PPS_RETURN_IF_ERROR(from.Int64("line", &f.line));
  }
  if (HasAny(r, {"noise_cv", "noise_source", "ttft", "decode", "gpu_memory"})) {
    BenchSynthesis& y = s.synthesis.emplace();
    PPS_RETURN_IF_ERROR(r.Number("noise_cv", &y.noise_cv));
    PPS_RETURN_IF_ERROR(r.String("noise_source", &y.noise_source));
    PPS_RETURN_IF_ERROR(r.String("ttft", &y.ttft));
    PPS_RETURN_IF_ERROR(r.String("decode", &y.decode));
    PPS_RETURN_IF_ERROR(r.String("gpu_memory", &y.gpu_memory));
    PPS_RETURN_IF_ERROR(r.Strings("figures_from_file", &y.figures_from_file));
  }
  if (r.Has("ready_s")) {
    BenchServerReady& ready = s.ready.emplace();
    PPS_RETURN_IF_ERROR(r.Number("ready_s", &ready.ready_s));
    PPS_RETURN_IF_ERROR(r.String("server_version", &ready.server_version));
  }
  if (HasClientKey(r)) {
    PPS_ASSIGN_OR_RETURN(s.client, ReadClient(r));
  }
  return Status::Ok();
}

}  // namespace

nlohmann::json BenchClientJson(const BenchClientSummary& c,
                               const std::vector<BenchInstance>& instances) {
  nlohmann::json j = {
      {"url", c.url},
      {"api", c.api},
      {"concurrency", c.concurrency},
      {"request_rate", c.request_rate},
      {"requests", c.requests},
      {"warmup_requests", c.warmup_requests},
      {"warmup_ok", c.warmup_ok},
      {"flush_cache", c.flush_cache},
      {"input_tokens", c.input_tokens},
      {"output_tokens", c.output_tokens},
      {"range_ratio", c.range_ratio},
      {"output_range_ratio", c.output_range_ratio},
      {"lengths_file", c.lengths_file},
      {"lengths_rows", c.lengths_rows},
      {"timeout_s", c.timeout_s},
      {"seed", c.seed},
      {"min_token_id", c.min_token_id},
      {"vocab_size", c.vocab_size},
      {"shared_prefix_tokens", c.shared_prefix_tokens},
      {"requests_total", c.requests_total},
      {"requests_completed", c.requests_completed},
      {"request_errors", c.request_errors},
      {"prompt_length_mismatches", c.prompt_length_mismatches},
      {"total_input_tokens", c.total_input_tokens},
      {"total_output_tokens", c.total_output_tokens},
      {"duration_s", c.duration_s},
      {"request_throughput", c.request_throughput},
      {"input_tps", c.input_tps},
      {"output_tps", c.output_tps},
      {"ttft_s", LatencyJsonOf(c.ttft_s, c.requests_completed)},
      {"e2e_s", LatencyJsonOf(c.e2e_s, c.requests_completed)},
      {"tpot_requests", c.tpot_requests},
      {"tpot_s", LatencyJsonOf(c.tpot_s)},
      {"itl_values", c.itl_values},
      {"itl_s", LatencyJsonOf(c.itl_s)},
      {"client_cpu_s", c.client_cpu_s},
  };
  if (!c.routing.empty()) j["routing"] = c.routing;
  if (!instances.empty()) j["instances"] = InstancesJson(instances);
  return j;
}

nlohmann::json BenchSummaryToJson(const BenchSummary& s) {
  nlohmann::json j = s.client ? BenchClientJson(*s.client, {}) : nlohmann::json::object();
  if (!s.instances.empty()) j["instances"] = InstancesJson(s.instances);
  j["sample"] = s.sample;
  if (s.simulated) j["simulated"] = *s.simulated;
  // With the real engine the load generator's seed is the workload seed:
  // the file has one key for both.
  if (s.seed) j["seed"] = *s.seed;
  if (s.noise_factor) j["noise_factor"] = *s.noise_factor;
  if (s.sim) {
    j["pp_max_micro_batch_size"] = s.sim->pp_max_micro_batch_size;
    j["micro_batches"] = s.sim->micro_batches;
    j["exposed_comm_share"] = s.sim->exposed_comm_share;
    j["bubble_share"] = s.sim->bubble_share;
  }
  if (s.replayed_from) {
    j["replayed_from"] =
        s.replayed_from->file.empty()
            ? nlohmann::json{{"run", s.replayed_from->run}, {"sample", s.replayed_from->sample}}
            : nlohmann::json{{"file", s.replayed_from->file}, {"line", s.replayed_from->line}};
  }
  if (s.synthesis) {
    j["noise_cv"] = s.synthesis->noise_cv;
    j["noise_source"] = s.synthesis->noise_source;
    j["ttft"] = s.synthesis->ttft;
    j["decode"] = s.synthesis->decode;
    j["gpu_memory"] = s.synthesis->gpu_memory;
    j["figures_from_file"] = s.synthesis->figures_from_file;
  }
  if (!s.stop_notes.empty()) j["stop_notes"] = s.stop_notes;
  if (!s.release_wait.empty()) j["release_wait"] = s.release_wait;
  if (!s.snapshot_errors.empty()) j["snapshot_errors"] = s.snapshot_errors;
  if (!s.server_version_error.empty()) j["server_version_error"] = s.server_version_error;
  if (s.ready) {
    j["ready_s"] = s.ready->ready_s;
    j["server_version"] = s.ready->server_version.empty() ? nlohmann::json(nullptr)
                                                          : nlohmann::json(s.ready->server_version);
  }
  if (s.sample_wall_s) j["sample_wall_s"] = *s.sample_wall_s;
  if (s.disaggregation) j["disaggregation"] = DisaggregationJson(*s.disaggregation);
  return j;
}

std::string BenchSummaryText(const BenchSummary& s) {
  return JsonText(BenchSummaryToJson(s), 2) + "\n";
}

Status WriteBenchSummary(const RunPaths& paths, const SampleId& id, const BenchSummary& s) {
  return WriteFileAtomic(paths.bench(id), BenchSummaryText(s));
}

Result<BenchSummary> BenchSummaryFromText(const std::string& text) {
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return MakeError("not valid JSON");
  if (!j.is_object()) return MakeError(std::string("expected a JSON object, got ") + j.type_name());
  const JsonFields r(j, "");
  BenchSummary s;
  const nlohmann::json* sample = r.Find("sample");
  if (sample == nullptr || !sample->is_string())
    return r.Wrong("sample", "a string naming the sample", sample);
  s.sample = sample->get<std::string>();
  PPS_RETURN_IF_ERROR(ReadOptional(r, "simulated", &JsonFields::Bool, &s.simulated));
  PPS_RETURN_IF_ERROR(ReadOptional(r, "seed", &JsonFields::Uint64, &s.seed));
  PPS_RETURN_IF_ERROR(ReadOptional(r, "noise_factor", &JsonFields::Number, &s.noise_factor));
  PPS_RETURN_IF_ERROR(ReadOptional(r, "sample_wall_s", &JsonFields::Number, &s.sample_wall_s));
  PPS_RETURN_IF_ERROR(r.Strings("stop_notes", &s.stop_notes));
  PPS_RETURN_IF_ERROR(r.String("release_wait", &s.release_wait));
  PPS_RETURN_IF_ERROR(r.Strings("snapshot_errors", &s.snapshot_errors));
  PPS_RETURN_IF_ERROR(r.String("server_version_error", &s.server_version_error));
  PPS_RETURN_IF_ERROR(ReadGroups(r, s));
  PPS_RETURN_IF_ERROR(ReadInstances(r, &s.instances));
  PPS_RETURN_IF_ERROR(ReadDisaggregation(r, &s.disaggregation));
  return s;
}

Result<BenchSummary> ParseBenchSummary(const std::string& text, const std::string& file) {
  Result<BenchSummary> s = BenchSummaryFromText(text);
  if (!s.ok()) return MakeError(file + ": " + s.error().message);
  return s;
}

Result<BenchSummary> ReadBenchSummary(const RunPaths& paths, const SampleId& id) {
  const std::string path = paths.bench(id);
  PPS_ASSIGN_OR_RETURN(std::string text, ReadEvidenceFile(path));
  return ParseBenchSummary(text, path);
}

}  // namespace ppsearch::evidence

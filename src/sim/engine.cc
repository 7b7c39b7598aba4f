#include "sim/engine.h"

#include <algorithm>
#include <climits>

#include "sim/online_engine.h"

namespace ppsearch::sim {
namespace {

// The benchmark client of an offline run: sends the planned requests (closed
// or open loop) into an OnlineEngine and turns its reports into records.
class BenchmarkClient : public EngineListener {
 public:
  BenchmarkClient(const std::vector<workload::PlannedRequest>& planned, int concurrency,
                  bool token_times, SimResult* result)
      : planned_(planned), concurrency_(concurrency), token_times_(token_times), result_(result) {
    result_->records.resize(planned.size());
  }

  // Each request is sent at its planned arrival (0 in a closed loop) or,
  // when `concurrency` requests are in flight, as soon as one finishes:
  // bench_serving's --max-concurrency semaphore. Arrivals rise with the
  // index, so sending in index order keeps the cap.
  void Start(OnlineEngine* engine) {
    engine_ = engine;
    const int n = static_cast<int>(planned_.size());
    const int first = concurrency_ > 0 ? std::min(concurrency_, n) : n;
    for (int i = 0; i < first; ++i) Send(planned_[static_cast<size_t>(i)].arrival_ns);
  }

  void OnTokens(int request, int64_t output_tokens, int64_t client_ns) override {
    auto& rec = result_->records[request];
    if (output_tokens == 1) rec.first_token_ns = client_ns;
    rec.output_tokens = output_tokens;
    if (token_times_) rec.chunk_ns.push_back(client_ns);
  }

  void OnFinished(int request, int64_t client_ns, bool ok) override {
    auto& rec = result_->records[request];
    rec.end_ns = client_ns;
    if (ok) {
      rec.http_status = 200;
    } else {
      rec.output_tokens = 0;
      rec.chunk_ns.clear();
      rec.status = workload::RequestStatus::kHttpError;
      rec.http_status = 400;
      rec.error = "request does not fit the KV cache pool";
    }
    last_end_ns_ = std::max(last_end_ns_, client_ns);
    if (concurrency_ > 0 && next_to_send_ < static_cast<int>(planned_.size()))
      Send(std::max(client_ns, planned_[static_cast<size_t>(next_to_send_)].arrival_ns));
  }

  void Finish() {
    int64_t first_send = INT64_MAX;
    for (auto& rec : result_->records) {
      if (rec.end_ns < 0) {
        rec.status = workload::RequestStatus::kNotSent;
        continue;
      }
      first_send = std::min(first_send, rec.send_ns);
    }
    result_->window_ns = first_send == INT64_MAX ? 0 : last_end_ns_ - first_send;
  }

 private:
  void Send(int64_t send_ns) {
    const int i = next_to_send_++;
    const auto& p = planned_[i];
    auto& rec = result_->records[i];
    rec.id = p.id;
    rec.send_ns = send_ns;
    rec.input_tokens = p.input_tokens;
    rec.reported_input_tokens = p.input_tokens;
    if (token_times_)
      rec.chunk_ns.reserve(static_cast<size_t>(std::max<int64_t>(p.output_tokens, 0)));
    engine_->Submit(send_ns, p.input_tokens, p.output_tokens);
  }

  const std::vector<workload::PlannedRequest>& planned_;
  const int concurrency_;
  const bool token_times_;
  SimResult* result_;
  OnlineEngine* engine_ = nullptr;
  int next_to_send_ = 0;
  int64_t last_end_ns_ = 0;
};

}  // namespace

SimResult Simulate(const SchedulerConfig& config, const CostModel& cost,
                   const std::vector<workload::PlannedRequest>& planned, int concurrency,
                   const SimOptions& options) {
  SimResult result;
  BenchmarkClient client(planned, concurrency, options.token_times, &result);
  OnlineEngine engine(config, cost, &client, options);
  client.Start(&engine);
  engine.RunToEnd();
  client.Finish();

  EngineCounters counters = engine.counters();
  result.stages = std::move(counters.stages);
  result.trace = std::move(counters.trace);
  result.micro_batches = counters.micro_batches;
  result.prefill_batches = counters.prefill_batches;
  result.decode_batches = counters.decode_batches;
  result.stretched_batches = counters.stretched_batches;
  result.round_batches = counters.round_batches;
  result.late_fit_jumps = counters.late_fit_jumps;
  result.carried_prices = counters.carried_prices;
  result.peak_kv_tokens = counters.peak_kv_tokens;
  result.peak_running_requests = counters.peak_running_requests;
  result.prefill_shapes = counters.prefill_shapes;
  result.peak_decode_batch = counters.peak_decode_batch;
  result.pp_max_micro_batch_size = engine.pp_max_micro_batch_size();
  result.dynamic_chunking = engine.dynamic_chunking();
  for (auto& s : result.stages) s.idle_ns = std::max<int64_t>(result.window_ns - s.busy_ns(), 0);
  return result;
}

}  // namespace ppsearch::sim

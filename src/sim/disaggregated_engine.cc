#include "sim/disaggregated_engine.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <deque>
#include <memory>

#include "sim/event_queue.h"
#include "sim/online_engine.h"

namespace ppsearch::sim {
namespace {

// The deployment's clients, router, preallocation queues and links around
// its servers' engines, all advanced in one time order.
class PdDeployment {
 public:
  PdDeployment(const DisaggregatedConfig& config, const CostModel& prefill_cost,
               const CostModel& decode_cost, const std::vector<workload::PlannedRequest>& planned,
               int concurrency, const SimOptions& options, DisaggregatedResult* out)
      : config_(config),
        planned_(planned),
        concurrency_(concurrency),
        options_(options),
        out_(out) {
    const int p = std::max(config.prefill_instances, 1);
    const int d = std::max(config.decode_instances, 1);
    for (int i = 0; i < p; ++i) {
      prefill_.push_back(std::make_unique<Server>(this, false, i));
      prefill_.back()->engine = std::make_unique<OnlineEngine>(config.prefill, prefill_cost,
                                                               prefill_.back().get(), options);
    }
    for (int i = 0; i < d; ++i) {
      decode_.push_back(std::make_unique<Server>(this, true, i));
      decode_.back()->engine =
          std::make_unique<OnlineEngine>(config.decode, decode_cost, decode_.back().get(), options);
      decode_.back()->ranks.resize(static_cast<size_t>(std::max(config.decode.dp_size, 1)));
    }
    for (const auto& s : prefill_) servers_.push_back(s.get());
    for (const auto& s : decode_) servers_.push_back(s.get());
    link_free_ns_.assign(static_cast<size_t>(p), 0);
    lookahead_ns_ = config.transfer.handshake_ns + config.transfer.latency_ns +
                    LeastPrefillNs(config.prefill, prefill_cost, planned);
    requests_.resize(planned.size());
    out_->records.resize(planned.size());
    out_->phases.resize(planned.size());
  }

  void Run() {
    const int n = static_cast<int>(planned_.size());
    const int first = concurrency_ > 0 ? std::min(concurrency_, n) : n;
    for (int i = 0; i < first; ++i) QueueSend(planned_[static_cast<size_t>(i)].arrival_ns);
    while (true) {
      const int64_t client_ns = sends_.empty() ? INT64_MAX : sends_.Top().time_ns;
      Server* next = nullptr;
      int64_t next_ns = INT64_MAX, other_ns = INT64_MAX, prefill_ns = INT64_MAX;
      // The two earliest decode servers' next events: when the earliest of
      // all is a decode server, the other decode servers' earliest is the
      // second.
      int64_t decode_first = INT64_MAX, decode_second = INT64_MAX;
      for (Server* s : servers_) {
        const auto t = s->engine->NextEventNs();
        if (!t) continue;
        if (!s->decode) {
          prefill_ns = std::min(prefill_ns, *t);
        } else if (*t < decode_first) {
          decode_second = decode_first;
          decode_first = *t;
        } else {
          decode_second = std::min(decode_second, *t);
        }
        if (*t < next_ns) {
          other_ns = next_ns;
          next_ns = *t;
          next = s;
        } else {
          other_ns = std::min(other_ns, *t);
        }
      }
      if (next == nullptr && client_ns == INT64_MAX) break;
      if (client_ns <= next_ns) {
        const auto e = sends_.Pop();
        Send(e.payload, e.time_ns);
        continue;
      }
      // Every event is taken in time order, and so every finish (a decode
      // stretch ends before one). A decode server's stretch may run past
      // the other decode servers' next events by the lookahead: another
      // server's finish reaches it only through a client's new request,
      // which must be handshaken, prefilled and transferred first. Its
      // preallocation may read this server's KV up to the lookahead late
      // (larger by those steps' tokens: a more cautious preallocation). No
      // stretch runs past a client's send or a prefill server's next event,
      // from which a transfer into it comes.
      int64_t limit = std::min(client_ns, other_ns);
      if (next->decode) {
        const int64_t reach =
            decode_second > INT64_MAX - lookahead_ns_ ? INT64_MAX : decode_second + lookahead_ns_;
        limit = std::min({client_ns, prefill_ns, reach});
      }
      next->engine->Step(limit);
    }
    Finish();
  }

 private:
  struct Rank {  // one DP rank of a decode server: its preallocation queue
    std::deque<int> prealloc;
    int64_t held_tokens = 0;  // preallocated, not yet in the running batch
    int active = 0;           // preallocated and not finished: holding a request slot
  };
  struct Server : EngineListener {
    Server(PdDeployment* d, bool is_decode, int index)
        : owner(d), decode(is_decode), instance(index) {}
    void OnTokens(int ticket, int64_t output_tokens, int64_t client_ns) override {
      if (decode) owner->OnDecodeTokens(requests[ticket], output_tokens, client_ns);
    }
    void OnFinished(int ticket, int64_t client_ns, bool ok) override {
      if (decode)
        owner->OnDecodeFinished(requests[ticket], client_ns, ok);
      else
        owner->OnPrefillFinished(requests[ticket], client_ns, ok);
    }
    PdDeployment* owner;
    bool decode;
    int instance;
    std::unique_ptr<OnlineEngine> engine;
    std::vector<int> requests;  // ticket -> request
    std::vector<Rank> ranks;    // decode servers only
    int in_flight = 0;          // routed here, not finished
    int next_rank = 0;
  };
  struct Request {
    int prefill = -1, decode = -1, rank = -1;
    int64_t prealloc_ns = -1, prefill_start_ns = -1, prefill_end_ns = -1, transfer_done_ns = -1;
    bool sent = false, done = false;
  };

  void QueueSend(int64_t at) { sends_.Push(at, next_to_send_++); }

  int Route(const std::vector<std::unique_ptr<Server>>& pool, int* turn) const {
    const int n = static_cast<int>(pool.size());
    if (config_.router == RouterPolicy::kRoundRobin) {
      const int i = *turn;
      *turn = (*turn + 1) % n;
      return i;
    }
    int best = 0;
    for (int i = 1; i < n; ++i)
      if (pool[i]->in_flight < pool[best]->in_flight) best = i;
    return best;
  }

  void Send(int i, int64_t t) {
    const workload::PlannedRequest& p = planned_[static_cast<size_t>(i)];
    workload::RequestRecord& rec = out_->records[static_cast<size_t>(i)];
    rec.id = p.id;
    rec.send_ns = t;
    rec.input_tokens = p.input_tokens;
    rec.reported_input_tokens = p.input_tokens;
    if (options_.token_times)
      rec.chunk_ns.reserve(static_cast<size_t>(std::max<int64_t>(p.output_tokens, 0)));
    Request& q = requests_[static_cast<size_t>(i)];
    q.sent = true;
    q.prefill = Route(prefill_, &prefill_turn_);
    q.decode = Route(decode_, &decode_turn_);
    Server& d = *decode_[static_cast<size_t>(q.decode)];
    q.rank = d.next_rank;  // the bootstrap room's DP rank: evenly, in turn
    d.next_rank = (d.next_rank + 1) % static_cast<int>(d.ranks.size());
    ++prefill_[static_cast<size_t>(q.prefill)]->in_flight;
    ++d.in_flight;
    d.ranks[static_cast<size_t>(q.rank)].prealloc.push_back(i);
    TryPrealloc(q.decode, q.rank, t);
  }

  // DecodePreallocQueue.pop_preallocated, in order, while the head fits:
  // a request slot (max_running_requests + the extra slots), and
  // `input + reserved` tokens (and its whole length beyond what the running
  // requests could give back) within what the pool has free beyond the
  // active requests' reserved decode tokens.
  void TryPrealloc(int decode, int rank, int64_t t) {
    Server& d = *decode_[static_cast<size_t>(decode)];
    Rank& r = d.ranks[static_cast<size_t>(rank)];
    DecodePool pool;
    pool.max_total_tokens = config_.decode.max_total_tokens;
    pool.slots = config_.decode.max_running_requests + config_.decode_extra_slots;
    pool.reserved_decode_tokens = config_.reserved_decode_tokens;
    while (!r.prealloc.empty()) {
      const int i = r.prealloc.front();
      const workload::PlannedRequest& p = planned_[static_cast<size_t>(i)];
      pool.used_tokens = d.engine->kv_tokens_used(rank);
      pool.held_tokens = r.held_tokens;
      pool.active = r.active;
      const Preallocation now = Preallocate(pool, p.input_tokens, p.output_tokens);
      if (now != Preallocation::kNow) {
        // One that no emptier pool could ever hold would block the queue
        // for good; SGLang aborts it.
        if (now == Preallocation::kNeverFits) {
          r.prealloc.pop_front();
          --prefill_[static_cast<size_t>(requests_[static_cast<size_t>(i)].prefill)]->in_flight;
          Fail(i, t, "request does not fit the decode server's KV cache pool");
          continue;
        }
        return;
      }
      r.prealloc.pop_front();
      r.held_tokens += p.input_tokens;
      ++r.active;
      Request& q = requests_[static_cast<size_t>(i)];
      q.prealloc_ns = t;
      q.prefill_start_ns = t + config_.transfer.handshake_ns;
      Server& pre = *prefill_[static_cast<size_t>(q.prefill)];
      // A prefill server gives the first token and stops.
      const int ticket =
          pre.engine->Submit(std::max(q.prefill_start_ns, pre.engine->now_ns()), p.input_tokens, 1);
      Bind(pre, ticket, i);
    }
  }

  // A lower bound on any prompt's time from its send to a prefill server
  // until its first token: the shortest prompt's ingest and its first
  // chunk alone on the first stage (a batch with more in it costs no less).
  // 0 with DP attention on the prefill servers, whose batches are per rank.
  static int64_t LeastPrefillNs(const SchedulerConfig& prefill, const CostModel& cost,
                                const std::vector<workload::PlannedRequest>& planned) {
    if (planned.empty() || prefill.dp_size > 1) return 0;
    int64_t shortest = INT64_MAX;
    for (const workload::PlannedRequest& p : planned) shortest = std::min(shortest, p.input_tokens);
    const int64_t chunk = prefill.chunked_prefill_size > 0
                              ? std::min(shortest, prefill.chunked_prefill_size)
                              : shortest;
    MicroBatch first;
    first.is_prefill = true;
    first.entries.push_back({0, chunk, 0, chunk == shortest});
    return cost.IngestNs(shortest) + cost.StageCost(0, first).total_ns();
  }

  static void Bind(Server& s, int ticket, int request) {
    if (static_cast<int>(s.requests.size()) <= ticket)
      s.requests.resize(static_cast<size_t>(ticket) + 1, -1);
    s.requests[static_cast<size_t>(ticket)] = request;
  }

  void OnPrefillFinished(int i, int64_t t, bool ok) {
    Request& q = requests_[static_cast<size_t>(i)];
    --prefill_[static_cast<size_t>(q.prefill)]->in_flight;
    q.prefill_end_ns = t;
    const workload::PlannedRequest& p = planned_[static_cast<size_t>(i)];
    if (!ok) {
      Rank& r = decode_[static_cast<size_t>(q.decode)]->ranks[static_cast<size_t>(q.rank)];
      r.held_tokens -= p.input_tokens;
      --r.active;
      Fail(i, t, "request does not fit the prefill server's KV cache pool");
      TryPrealloc(q.decode, q.rank, t);
      return;
    }
    // send_kv_chunk: the prompt's KV over this prefill server's link, after
    // the transfers queued before it.
    const int64_t bytes = config_.transfer.kv_bytes_per_token * p.input_tokens;
    const double rate = std::max(config_.transfer.bytes_per_ns, 1e-9);
    const int64_t wire_ns = static_cast<int64_t>(std::ceil(static_cast<double>(bytes) / rate));
    int64_t& free_ns = link_free_ns_[static_cast<size_t>(q.prefill)];
    const int64_t start = std::max(t, free_ns);
    free_ns = start + wire_ns;
    out_->transfer_bytes += bytes;
    out_->transfer_busy_ns += wire_ns;
    q.transfer_done_ns = free_ns + config_.transfer.latency_ns;
    Server& d = *decode_[static_cast<size_t>(q.decode)];
    const int ticket = d.engine->SubmitPrefilled(std::max(q.transfer_done_ns, d.engine->now_ns()),
                                                 p.input_tokens, p.output_tokens, q.rank);
    Bind(d, ticket, i);
  }

  void OnDecodeTokens(int i, int64_t output_tokens, int64_t t) {
    workload::RequestRecord& rec = out_->records[static_cast<size_t>(i)];
    if (output_tokens == 1) {
      rec.first_token_ns = t;
      // Its KV now counts in the running batch's pool.
      const Request& q = requests_[static_cast<size_t>(i)];
      Rank& r = decode_[static_cast<size_t>(q.decode)]->ranks[static_cast<size_t>(q.rank)];
      r.held_tokens -= rec.input_tokens;
    }
    rec.output_tokens = output_tokens;
    if (options_.token_times) rec.chunk_ns.push_back(t);
  }

  void OnDecodeFinished(int i, int64_t t, bool ok) {
    Request& q = requests_[static_cast<size_t>(i)];
    Rank& r = decode_[static_cast<size_t>(q.decode)]->ranks[static_cast<size_t>(q.rank)];
    --r.active;
    if (!ok) {
      // Refused before it joined a batch: its preallocated KV goes back.
      r.held_tokens -= planned_[static_cast<size_t>(i)].input_tokens;
      Fail(i, t, "request does not fit the decode server's KV cache pool");
      TryPrealloc(q.decode, q.rank, t);
      return;
    }
    --decode_[static_cast<size_t>(q.decode)]->in_flight;
    workload::RequestRecord& rec = out_->records[static_cast<size_t>(i)];
    rec.end_ns = t;
    rec.http_status = 200;
    q.done = true;
    Next(t);
    TryPrealloc(q.decode, q.rank, t);
  }

  void Fail(int i, int64_t t, const std::string& why) {
    Request& q = requests_[static_cast<size_t>(i)];
    --decode_[static_cast<size_t>(q.decode)]->in_flight;
    workload::RequestRecord& rec = out_->records[static_cast<size_t>(i)];
    rec.end_ns = t;
    rec.output_tokens = 0;
    rec.chunk_ns.clear();
    rec.status = workload::RequestStatus::kHttpError;
    rec.http_status = 400;
    rec.error = why;
    q.done = true;
    Next(t);
  }

  // A finished request frees its client: bench_serving's semaphore.
  void Next(int64_t t) {
    last_end_ns_ = std::max(last_end_ns_, t);
    if (concurrency_ > 0 && next_to_send_ < static_cast<int>(planned_.size()))
      QueueSend(std::max(t, planned_[static_cast<size_t>(next_to_send_)].arrival_ns));
  }

  static void AddPool(const std::vector<std::unique_ptr<Server>>& pool, PoolSim* sim) {
    sim->servers = static_cast<int>(pool.size());
    for (const auto& s : pool) {
      const EngineCounters& c = s->engine->counters();
      if (sim->stages.size() < c.stages.size()) sim->stages.resize(c.stages.size());
      for (size_t k = 0; k < c.stages.size(); ++k) {
        StageStats& to = sim->stages[k];
        const StageStats& from = c.stages[k];
        to.compute_ns += from.compute_ns;
        to.gemm_ns += from.gemm_ns;
        to.moe_ns += from.moe_ns;
        to.attention_ns += from.attention_ns;
        to.comm_ns += from.comm_ns;
        to.transfer_ns += from.transfer_ns;
        to.overhead_ns += from.overhead_ns;
        to.micro_batches += from.micro_batches;
        to.allreduce_calls += from.allreduce_calls;
      }
      sim->micro_batches += c.micro_batches;
      sim->stretched_batches += c.stretched_batches;
      sim->peak_kv_tokens = std::max(sim->peak_kv_tokens, c.peak_kv_tokens);
      sim->peak_running_requests = std::max(sim->peak_running_requests, c.peak_running_requests);
      for (const BatchShape& shape : c.prefill_shapes) AddToFront(sim->prefill_shapes, shape);
      sim->peak_decode_batch = std::max(sim->peak_decode_batch, c.peak_decode_batch);
    }
  }

  void Finish() {
    int64_t first_send = INT64_MAX;
    for (size_t i = 0; i < requests_.size(); ++i) {
      const Request& q = requests_[i];
      workload::RequestRecord& rec = out_->records[i];
      if (!q.sent || !q.done) {
        rec.status = workload::RequestStatus::kNotSent;
        continue;
      }
      first_send = std::min(first_send, rec.send_ns);
      RequestPhases& ph = out_->phases[i];
      ph.prefill_instance = q.prefill;
      ph.decode_instance = q.decode;
      if (q.prealloc_ns >= 0) ph.prealloc_wait_ns = q.prealloc_ns - rec.send_ns;
      if (q.prefill_end_ns >= 0) ph.prefill_ns = q.prefill_end_ns - q.prefill_start_ns;
      if (q.transfer_done_ns >= 0) ph.transfer_ns = q.transfer_done_ns - q.prefill_end_ns;
      if (rec.first_token_ns >= 0) ph.decode_join_ns = rec.first_token_ns - q.transfer_done_ns;
    }
    out_->window_ns = first_send == INT64_MAX ? 0 : last_end_ns_ - first_send;
    AddPool(prefill_, &out_->prefill);
    AddPool(decode_, &out_->decode);
    for (PoolSim* pool : {&out_->prefill, &out_->decode})
      for (StageStats& s : pool->stages)
        s.idle_ns = std::max<int64_t>(out_->window_ns * pool->servers - s.busy_ns(), 0);
  }

  const DisaggregatedConfig& config_;
  const std::vector<workload::PlannedRequest>& planned_;
  const int concurrency_;
  const SimOptions options_;
  DisaggregatedResult* out_;
  std::vector<std::unique_ptr<Server>> prefill_, decode_;
  std::vector<Server*> servers_;  // both pools, prefill first
  std::vector<Request> requests_;
  std::vector<int64_t> link_free_ns_;  // per prefill server
  // The least time from a decode server's finish to a transfer into
  // another decode server (handshake, prefill, the transfer's notice).
  int64_t lookahead_ns_ = 0;
  EventQueue<int> sends_;  // the clients' sends
  int next_to_send_ = 0;
  int prefill_turn_ = 0, decode_turn_ = 0;
  int64_t last_end_ns_ = 0;
};

}  // namespace

Preallocation Preallocate(const DecodePool& pool, int64_t input_tokens, int64_t output_tokens) {
  const int64_t reserve = pool.reserved_decode_tokens;
  const int64_t available = pool.max_total_tokens - pool.used_tokens - pool.held_tokens;
  const int64_t allocatable = available - reserve * pool.active;
  const int64_t whole = input_tokens + std::min(output_tokens, kClipMaxNewTokens);
  const bool fits = pool.active < pool.slots && input_tokens + reserve <= allocatable &&
                    whole - pool.used_tokens <= allocatable;
  if (fits) return Preallocation::kNow;
  return pool.active == 0 && pool.used_tokens == 0 ? Preallocation::kNeverFits
                                                   : Preallocation::kWait;
}

DisaggregatedResult SimulateDisaggregated(const DisaggregatedConfig& config,
                                          const CostModel& prefill_cost,
                                          const CostModel& decode_cost,
                                          const std::vector<workload::PlannedRequest>& planned,
                                          int concurrency, const SimOptions& options) {
  DisaggregatedResult result;
  PdDeployment deployment(config, prefill_cost, decode_cost, planned, concurrency, options,
                          &result);
  deployment.Run();
  return result;
}

}  // namespace ppsearch::sim

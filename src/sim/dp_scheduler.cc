#include "sim/dp_scheduler.h"

#include <algorithm>
#include <cassert>
#include <functional>

namespace ppsearch::sim {

DpScheduler::DpScheduler(const SchedulerConfig& config,
                         std::optional<ChunkSizePredictor> chunk_predictor) {
  const int dp = std::max(config.dp_size, 1);
  ranks_.reserve(dp);
  for (int r = 0; r < dp; ++r) ranks_.emplace_back(config, chunk_predictor);
  global_of_.resize(dp);
}

int DpScheduler::AddRequest(int64_t input_tokens, int64_t max_new_tokens, bool prefilled,
                            int chosen_rank) {
  int rank = chosen_rank;
  if (rank < 0) {
    rank = next_rank_;
    next_rank_ = (next_rank_ + 1) % dp_size();
  }
  assert(rank < dp_size());
  const int local = ranks_[rank].AddRequest(input_tokens, max_new_tokens, prefilled);
  const int id = static_cast<int>(where_.size());
  where_.emplace_back(rank, local);
  global_of_[rank].push_back(id);
  return id;
}

void DpScheduler::Enqueue(int request) {
  ranks_[where_[request].first].Enqueue(where_[request].second);
}

const SchedRequest& DpScheduler::request(int id) const {
  return ranks_[where_[id].first].request(where_[id].second);
}

MicroBatch DpScheduler::ToGlobal(int rank, MicroBatch batch) const {
  for (auto& e : batch.entries) e.request = global_of_[rank][e.request];
  return batch;
}

MicroBatch DpScheduler::ToLocal(MicroBatch batch) const {
  for (auto& e : batch.entries) e.request = where_[e.request].second;
  return batch;
}

MicroBatch DpScheduler::Step(const std::function<MicroBatch(int rank)>& part_of) const {
  MicroBatch step;
  bool any = false;
  for (int r = 0; r < dp_size(); ++r) {
    MicroBatch part = ToGlobal(r, part_of(r));
    any = any || !part.empty();
    step.is_prefill = step.is_prefill || part.is_prefill;
    step.entries.insert(step.entries.end(), part.entries.begin(), part.entries.end());
    step.dp_ranks.push_back(std::move(part));
  }
  if (!any) return MicroBatch{};
  return step;
}

MicroBatch DpScheduler::NextBatch(int slot) {
  if (dp_size() == 1) return ranks_.front().NextBatch(slot);
  return Step([&](int r) { return ranks_[r].NextBatch(slot); });
}

MicroBatch DpScheduler::PeekDecode(int slot) const {
  if (dp_size() == 1) return ranks_.front().PeekDecode(slot);
  return Step([&](int r) { return ranks_[r].PeekDecode(slot); });
}

int64_t DpScheduler::ResultsBeforeAFinish(int slot) const {
  int64_t least = INT64_MAX;
  for (const Scheduler& rank : ranks_) least = std::min(least, rank.ResultsBeforeAFinish(slot));
  return least;
}

void DpScheduler::AdvanceDecode(int slot, int64_t launched, int64_t processed, bool visited) {
  for (auto& rank : ranks_) rank.AdvanceDecode(slot, launched, processed, visited);
}

bool DpScheduler::HasWaiting() const {
  return std::any_of(ranks_.begin(), ranks_.end(),
                     [](const Scheduler& s) { return s.HasWaiting(); });
}

bool DpScheduler::AdmitsNothingUntilAFinish() const {
  return std::all_of(ranks_.begin(), ranks_.end(),
                     [](const Scheduler& s) { return s.AdmitsNothingUntilAFinish(); });
}

void DpScheduler::ApplyResult(int slot, const MicroBatch& batch, std::vector<int>* first_token,
                              std::vector<int>* finished) {
  if (batch.dp_ranks.empty()) {
    assert(dp_size() == 1);
    ranks_.front().ApplyResult(slot, batch, first_token, finished);
    return;
  }
  std::vector<int> first, done;
  for (int r = 0; r < dp_size(); ++r) {
    const MicroBatch& part = batch.dp_ranks[r];
    if (part.empty()) continue;  // an idle batch changes nothing
    first.clear();
    done.clear();
    ranks_[r].ApplyResult(slot, ToLocal(part), &first, &done);
    for (int local : first) first_token->push_back(global_of_[r][local]);
    for (int local : done) finished->push_back(global_of_[r][local]);
  }
}

void DpScheduler::TakePrefilledAdmissions(std::vector<int>* admitted, std::vector<int>* finished) {
  admitted->clear();
  finished->clear();
  for (int r = 0; r < dp_size(); ++r) {
    const size_t a0 = admitted->size(), f0 = finished->size();
    ranks_[r].TakePrefilledAdmissions(admitted, finished);
    if (dp_size() == 1) break;  // ids are the rank's own
    for (size_t i = a0; i < admitted->size(); ++i) (*admitted)[i] = global_of_[r][(*admitted)[i]];
    for (size_t i = f0; i < finished->size(); ++i) (*finished)[i] = global_of_[r][(*finished)[i]];
  }
}

bool DpScheduler::Idle() const {
  return std::all_of(ranks_.begin(), ranks_.end(), [](const Scheduler& s) { return s.Idle(); });
}

int DpScheduler::DropHeadWaiting() {
  for (int r = 0; r < dp_size(); ++r)
    if (ranks_[r].HasWaiting()) return global_of_[r][ranks_[r].DropHeadWaiting()];
  assert(false && "DropHeadWaiting with nothing waiting");
  return -1;
}

void DpScheduler::Abort(int request) {
  ranks_[where_[request].first].Abort(where_[request].second);
}

int64_t DpScheduler::kv_tokens_used() const {
  int64_t most = 0;
  for (const auto& s : ranks_) most = std::max(most, s.kv_tokens_used());
  return most;
}

int DpScheduler::running_requests() const {
  int n = 0;
  for (const auto& s : ranks_) n += s.running_requests();
  return n;
}

}  // namespace ppsearch::sim

#include "evidence/validation.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <optional>

namespace ppsearch::evidence {

std::string EvidenceProblem::Text() const { return file + ": " + kind + ": " + detail; }

double SampleDeadlineS(const spec::Spec& spec, int concurrency) {
  if (spec.lifecycle.bench_timeout_s > 0) return spec.lifecycle.bench_timeout_s;
  const auto& w = spec.workload;
  const int waves = (w.requests + w.warmup_requests + concurrency - 1) / std::max(1, concurrency);
  return spec.lifecycle.request_timeout_s * std::max(1, waves) + 60;
}

namespace {

// Counts the records that break one rule and remembers the first of them.
class Tally {
 public:
  void Add(size_t index, std::string example) {
    if (count_++ == 0) example_ = fmt::format("record {}: {}", index + 1, example);
  }
  void Emit(const char* kind, const std::string& file, const std::string& what,
            std::vector<EvidenceProblem>& out) const {
    if (count_ == 0) return;
    out.push_back({kind, file, fmt::format("{} {} (first: {})", count_, what, example_)});
  }

 private:
  size_t count_ = 0;
  std::string example_;
};

// A time field: -1 means "did not happen"; anything else must lie in the window.
bool OutsideWindow(int64_t t_ns, bool may_be_unset, int64_t window_ns) {
  if (may_be_unset && t_ns == -1) return false;
  return t_ns < 0 || (window_ns > 0 && t_ns > window_ns);
}

}  // namespace

std::vector<EvidenceProblem> CheckRecords(const std::vector<workload::RequestRecord>& records,
                                          const RecordLimits& limits, const std::string& file) {
  std::vector<EvidenceProblem> out;
  std::map<int64_t, size_t> first_of_id;
  Tally duplicates, end_before_send, token_outside, outside_window;
  for (size_t i = 0; i < records.size(); ++i) {
    const workload::RequestRecord& r = records[i];
    auto [it, fresh] = first_of_id.emplace(r.id, i);
    if (!fresh)
      duplicates.Add(i, fmt::format("id {} again, first at record {}", r.id, it->second + 1));
    if (r.status == workload::RequestStatus::kNotSent) continue;
    const int64_t window = limits.window_ns;
    if (OutsideWindow(r.send_ns, false, window) || OutsideWindow(r.first_token_ns, true, window) ||
        OutsideWindow(r.end_ns, true, window)) {
      outside_window.Add(i, fmt::format("id {}: send_ns {}, first_token_ns {}, end_ns {}", r.id,
                                        r.send_ns, r.first_token_ns, r.end_ns));
      continue;  // the orderings below mean nothing for such times
    }
    if (r.end_ns >= 0 && r.end_ns < r.send_ns)
      end_before_send.Add(i,
                          fmt::format("id {}: send_ns {} > end_ns {}", r.id, r.send_ns, r.end_ns));
    if (r.first_token_ns >= 0 &&
        (r.first_token_ns < r.send_ns || (r.end_ns >= 0 && r.first_token_ns > r.end_ns)))
      token_outside.Add(i, fmt::format("id {}: first_token_ns {} outside [{}, {}]", r.id,
                                       r.first_token_ns, r.send_ns, r.end_ns));
  }
  duplicates.Emit(kDuplicateRequestId, file, "records repeat an earlier request id", out);
  if (limits.requests_expected > 0 &&
      records.size() > static_cast<size_t>(limits.requests_expected))
    out.push_back({kMoreRecordsThanRequests, file,
                   fmt::format("{} records, but the sample sends {} requests (workload.requests)",
                               records.size(), limits.requests_expected)});
  end_before_send.Emit(kEndBeforeSend, file, "requests end before they were sent", out);
  token_outside.Emit(kFirstTokenOutsideRequest, file,
                     "requests have a first token outside [send, end]", out);
  outside_window.Emit(
      kTimeOutsideWindow, file,
      limits.window_ns > 0
          ? fmt::format("requests have a time below 0 or past the sample's {:.0f} s deadline",
                        limits.window_ns * 1e-9)
          : std::string("requests have a time below 0"),
      out);
  return out;
}

namespace {

bool OutOfRange(const std::optional<double>& mib) {
  return mib && (!std::isfinite(*mib) || *mib < 0 || *mib > kMaxGpuMemoryMib);
}

std::string Reading(const std::optional<double>& mib) {
  return mib ? fmt::format("{}", *mib) : std::string("[N/A]");
}

}  // namespace

std::vector<EvidenceProblem> CheckGpuSnapshot(const std::vector<gpu::GpuMemory>& gpus,
                                              const std::string& file) {
  std::vector<EvidenceProblem> out;
  Tally out_of_range, above_total;
  for (size_t i = 0; i < gpus.size(); ++i) {
    const gpu::GpuMemory& g = gpus[i];
    const std::string example = fmt::format("GPU {}: memory.used {}, memory.total {} MiB", g.index,
                                            Reading(g.used_mib), Reading(g.total_mib));
    if (OutOfRange(g.used_mib) || OutOfRange(g.total_mib))
      out_of_range.Add(i, example);
    else if (g.used_mib && g.total_mib && *g.used_mib > *g.total_mib)
      above_total.Add(i, example);
  }
  out_of_range.Emit(
      kGpuMemoryOutOfRange, file,
      fmt::format("readings are negative, not finite or above {:.0f} MiB", kMaxGpuMemoryMib), out);
  above_total.Emit(kGpuMemoryAboveTotal, file, "GPUs use more memory than they have", out);
  return out;
}

std::vector<EvidenceProblem> CheckBenchSummary(const std::string& text, const std::string& sample,
                                               const std::string& file, BenchSummary* summary) {
  Result<BenchSummary> parsed = BenchSummaryFromText(text);
  if (!parsed.ok()) return {{kBenchSummaryCorrupt, file, parsed.error().message}};
  if (parsed->sample != sample)
    return {{kBenchSummaryCorrupt, file,
             "the summary of sample " + parsed->sample + ", not of " + sample}};
  if (summary != nullptr) *summary = std::move(parsed).value();
  return {};
}

EvidenceProblem UnreadableEvidence(const std::string& path, const std::string& file,
                                   const std::string& error) {
  std::error_code ec;
  const std::filesystem::file_status st = std::filesystem::symlink_status(path, ec);
  const bool special = !ec && std::filesystem::exists(st) && !std::filesystem::is_regular_file(st);
  // The reader's message starts with the full path, which the problem names already.
  const std::string prefix = "cannot read " + path + ": ";
  const std::string why = error.rfind(prefix, 0) == 0 ? error.substr(prefix.size()) : error;
  return {special ? kNotARegularFile : kUnreadableFile, file,
          why + (special ? "; a run writes only regular files, so it is not read" : "")};
}

}  // namespace ppsearch::evidence

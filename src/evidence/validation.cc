#include "evidence/validation.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <optional>
#include <tuple>
#include <utility>

namespace ppsearch::evidence {

std::string EvidenceProblem::Text() const { return file + ": " + kind + ": " + detail; }

double SampleDeadlineS(const spec::Spec& spec, int concurrency) {
  if (spec.lifecycle.bench_timeout_s > 0) return spec.lifecycle.bench_timeout_s;
  const auto& w = spec.workload;
  const int waves = (w.requests + w.warmup_requests + concurrency - 1) / std::max(1, concurrency);
  return spec.lifecycle.request_timeout_s * std::max(1, waves) + 60;
}

int64_t MaxInputTokens(const spec::WorkloadSpec& workload) {
  if (workload.lengths.empty()) return workload.input_tokens;
  int64_t most = 0;
  for (const auto& row : workload.lengths) most = std::max(most, row.input_tokens);
  return most;
}

int64_t MaxOutputTokens(const spec::WorkloadSpec& workload) {
  if (workload.lengths.empty()) return workload.output_tokens;
  int64_t most = 0;
  for (const auto& row : workload.lengths) most = std::max(most, row.output_tokens);
  return most;
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

bool Http2xx(int status) { return status >= 200 && status < 300; }

// The most records in flight at one instant (between send_ns and end_ns; an
// end and a send at the same nanosecond do not overlap), and the first
// record sent while more than `limit` were; nullopt when never more.
std::optional<std::pair<size_t, size_t>> MostInFlight(
    const std::vector<workload::RequestRecord>& records, size_t limit) {
  std::vector<std::tuple<int64_t, int, size_t>> events;  // (time, -1 end / +1 send, record)
  for (size_t i = 0; i < records.size(); ++i) {
    const workload::RequestRecord& r = records[i];
    if (r.status == workload::RequestStatus::kNotSent || r.end_ns < r.send_ns) continue;
    events.emplace_back(r.send_ns, 1, i);
    events.emplace_back(r.end_ns, -1, i);
  }
  std::sort(events.begin(), events.end());  // ends before sends at one time
  size_t now = 0, most = 0, first = 0;
  for (const auto& [t, step, i] : events) {
    now = step > 0 ? now + 1 : now - 1;
    if (now > most) {
      most = now;
      if (most == limit + 1) first = i;
    }
  }
  if (most <= limit) return std::nullopt;
  return std::make_pair(most, first);
}

}  // namespace

std::vector<EvidenceProblem> CheckRecords(const std::vector<workload::RequestRecord>& records,
                                          const RecordLimits& limits, const std::string& file) {
  std::vector<EvidenceProblem> out;
  std::map<int64_t, size_t> first_of_id;
  Tally duplicates, end_before_send, token_outside, outside_window, id_range, length_range,
      status_http, chunks_outside;
  for (size_t i = 0; i < records.size(); ++i) {
    const workload::RequestRecord& r = records[i];
    auto [it, fresh] = first_of_id.emplace(r.id, i);
    if (!fresh)
      duplicates.Add(i, fmt::format("id {} again, first at record {}", r.id, it->second + 1));
    if (r.id < 0 || (limits.requests_expected > 0 && r.id >= limits.requests_expected))
      id_range.Add(i, fmt::format("id {}", r.id));
    if ((limits.max_input_tokens > 0 &&
         (r.input_tokens < 1 || r.input_tokens > limits.max_input_tokens)) ||
        r.output_tokens < 0 ||
        (r.ok() && limits.max_output_tokens > 0 && r.output_tokens > limits.max_output_tokens))
      length_range.Add(i, fmt::format("id {}: input_tokens {}, output_tokens {}", r.id,
                                      r.input_tokens, r.output_tokens));
    if ((r.status == workload::RequestStatus::kOk && !Http2xx(r.http_status)) ||
        (r.status == workload::RequestStatus::kHttpError && Http2xx(r.http_status)))
      status_http.Add(i, fmt::format("id {}: status {} with http_status {}", r.id,
                                     workload::RequestStatusName(r.status), r.http_status));
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
    // The last chunk's offset from the first token, rounded down to whole
    // microseconds (docs/formats.md), cannot pass the stream's end.
    if (!r.chunk_gaps_us.empty()) {
      int64_t last_us = 0;
      for (int64_t gap : r.chunk_gaps_us) last_us += gap;
      const bool streamed = r.first_token_ns >= 0 && r.end_ns >= r.first_token_ns;
      int64_t streamed_us = streamed ? (r.end_ns - r.first_token_ns) / 1000 : 0;
      if (streamed && limits.simulated_stretch && *limits.simulated_stretch > 0)
        streamed_us = static_cast<int64_t>(static_cast<double>(streamed_us) /
                                           std::min(*limits.simulated_stretch, 1.0)) +
                      static_cast<int64_t>(r.chunk_gaps_us.size());
      if (!streamed && !limits.simulated_stretch)
        chunks_outside.Add(
            i, r.first_token_ns < 0
                   ? fmt::format("id {}: {} chunks after a first token that did not come", r.id,
                                 r.chunk_gaps_us.size())
                   : fmt::format("id {}: {} chunks, but the request ended before its first token",
                                 r.id, r.chunk_gaps_us.size()));
      else if (streamed && last_us > streamed_us)
        chunks_outside.Add(i, fmt::format("id {}: chunk_gaps_us add up to {} us, but the stream "
                                          "ended {} us after its first token",
                                          r.id, last_us, (r.end_ns - r.first_token_ns) / 1000));
    }
  }
  duplicates.Emit(kDuplicateRequestId, file, "records repeat an earlier request id", out);
  if (limits.requests_expected > 0 &&
      records.size() > static_cast<size_t>(limits.requests_expected))
    out.push_back({kMoreRecordsThanRequests, file,
                   fmt::format("{} records, but the sample sends {} requests (workload.requests)",
                               records.size(), limits.requests_expected)});
  id_range.Emit(kRequestIdOutOfRange, file,
                limits.requests_expected > 0
                    ? fmt::format("requests have an id outside [0, {}) (workload.requests)",
                                  limits.requests_expected)
                    : std::string("requests have a negative id"),
                out);
  length_range.Emit(
      kLengthOutOfRange, file,
      fmt::format("requests have input_tokens outside [1, {}] or output_tokens outside [0, {}] "
                  "(the longest the workload draws; an ok request's output)",
                  limits.max_input_tokens, limits.max_output_tokens),
      out);
  status_http.Emit(kStatusContradictsHttp, file, "requests have a status their HTTP status denies",
                   out);
  end_before_send.Emit(kEndBeforeSend, file, "requests end before they were sent", out);
  token_outside.Emit(kFirstTokenOutsideRequest, file,
                     "requests have a first token outside [send, end]", out);
  chunks_outside.Emit(kChunksOutsideRequest, file,
                      "requests have streamed chunks after their end (chunk_gaps_us)", out);
  outside_window.Emit(
      kTimeOutsideWindow, file,
      limits.window_ns > 0
          ? fmt::format("requests have a time below 0 or past the sample's {:.0f} s deadline",
                        limits.window_ns * 1e-9)
          : std::string("requests have a time below 0"),
      out);
  if (limits.concurrency > 0)
    if (const auto most = MostInFlight(records, static_cast<size_t>(limits.concurrency)))
      out.push_back({kMoreInFlightThanConcurrency, file,
                     fmt::format("{} requests in flight at once, but the sample's concurrency is "
                                 "{} (first: record {}: id {})",
                                 most->first, limits.concurrency, most->second + 1,
                                 records[most->second].id)});
  return out;
}

namespace {

bool OutOfRange(const std::optional<double>& mib) {
  return mib && (!std::isfinite(*mib) || *mib < 0 || *mib > kMaxGpuMemoryMib);  // NaN: unreadable
}

std::string Reading(const std::optional<double>& mib) {
  return mib ? fmt::format("{}", *mib) : std::string("[N/A]");
}

}  // namespace

std::vector<EvidenceProblem> CheckGpuSnapshot(const std::vector<nvidia_smi::GpuMemory>& gpus,
                                              const std::string& file) {
  std::vector<EvidenceProblem> out;
  Tally out_of_range, above_total;
  for (size_t i = 0; i < gpus.size(); ++i) {
    const nvidia_smi::GpuMemory& g = gpus[i];
    const std::string example =
        g.unreadable.empty() ? fmt::format("GPU {}: memory.used {}, memory.total {} MiB", g.index,
                                           Reading(g.used_mib), Reading(g.total_mib))
                             : fmt::format("GPU {}: {}", g.index, g.unreadable);
    if (OutOfRange(g.used_mib) || OutOfRange(g.total_mib))
      out_of_range.Add(i, example);
    else if (g.used_mib && g.total_mib && *g.used_mib > *g.total_mib)
      above_total.Add(i, example);
  }
  out_of_range.Emit(
      kGpuMemoryOutOfRange, file,
      fmt::format("readings are negative, not finite, not numbers or above {:.0f} MiB",
                  kMaxGpuMemoryMib),
      out);
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

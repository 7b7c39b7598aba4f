#include "evidence/evidence.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <limits>
#include <map>
#include <optional>
#include <sstream>

#include "spec/layout_text.h"
#include "util/did_you_mean.h"
#include "util/files.h"
#include "util/json_text.h"

namespace ppsearch::evidence {
namespace {

workload::RequestStatus StatusFromName(const std::string& name, bool* ok) {
  using workload::RequestStatus;
  *ok = true;
  for (RequestStatus s : {RequestStatus::kOk, RequestStatus::kHttpError, RequestStatus::kTimeout,
                          RequestStatus::kStreamError, RequestStatus::kNotSent})
    if (name == workload::RequestStatusName(s)) return s;
  *ok = false;
  return RequestStatus::kStreamError;
}

}  // namespace

std::string SafePathComponent(const std::string& name) {
  std::string out;
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '_' || c == '-';
    out += ok ? c : '_';
  }
  if (out.empty() || out.front() == '.') out = "_" + out;
  return out;
}

std::string SampleId::str() const {
  return layout.Slug() + "_c" + std::to_string(concurrency) + "_r" + std::to_string(repeat);
}

Result<SampleId> ParseSampleId(const std::string& text) {
  SampleId s;
  char rest = 0;
  const auto layout = spec::ParseSlugPrefix(text);
  if (!layout || std::sscanf(text.c_str() + layout->second, "_c%d_r%d%c", &s.concurrency, &s.repeat,
                             &rest) != 2)
    return MakeError("'" + text +
                     "' is not a sample id (expected e.g. pp2-tp16-ep4_c8_r1 or "
                     "pp1-tp8-ep8-dp8_c8_r1)");
  s.layout = layout->first;
  return s;
}

nlohmann::json RecordToJson(const workload::RequestRecord& r) {
  nlohmann::json j = {{"id", r.id},
                      {"status", workload::RequestStatusName(r.status)},
                      {"http_status", r.http_status},
                      {"send_ns", r.send_ns},
                      {"first_token_ns", r.first_token_ns},
                      {"end_ns", r.end_ns},
                      {"ttft_s", nullptr},
                      {"e2e_s", nullptr},
                      {"input_tokens", r.input_tokens},
                      {"reported_input_tokens", r.reported_input_tokens},
                      {"output_tokens", r.output_tokens},
                      {"error", r.error}};
  // Derived, for people reading the file; readers use the _ns fields.
  if (r.first_token_ns >= 0) j["ttft_s"] = r.ttft_s();
  if (r.end_ns >= 0) j["e2e_s"] = r.e2e_s();
  if (r.server_first_token_unix_s >= 0)
    j["server_first_token_unix_s"] = r.server_first_token_unix_s;
  // Which instance served it, where a layout runs several (absent: the first or only one).
  if (r.instance > 0) j["instance"] = r.instance;
  // Decode timing only where chunks followed the first: a prefill-only
  // record stays as short as before.
  if (!r.chunk_gaps_us.empty()) {
    j["chunk_gaps_us"] = r.chunk_gaps_us;
  } else if (r.chunk_ns.size() > 1) {
    // A simulated record's chunk times, in the file's one form: offsets
    // from the first token rounded down once, so the gaps add up to the
    // last chunk's offset and never past the request's end.
    std::vector<int64_t> gaps;
    int64_t previous_us = 0;
    for (size_t i = 1; i < r.chunk_ns.size(); ++i) {
      const int64_t offset_us = (r.chunk_ns[i] - r.chunk_ns[0]) / 1000;
      gaps.push_back(offset_us - previous_us);
      previous_us = offset_us;
    }
    j["chunk_gaps_us"] = gaps;
  }
  // Counts only where a chunk carried more than one token: the usual stream
  // of one token a chunk needs none.
  if (std::any_of(r.chunk_tokens.begin(), r.chunk_tokens.end(), [](int64_t k) { return k != 1; }))
    j["chunk_tokens"] = r.chunk_tokens;
  return j;
}

namespace {

// spec::kMaxParallelSize instances at most: an index past it is no instance's.
constexpr int64_t kMaxInstanceIndex = 32767;

// An integer field as int64: a float, or an integer past int64's range,
// would be an undefined conversion in nlohmann's get<int64_t>().
Result<int64_t> IntField(const nlohmann::json& j, const char* key, const std::string& where,
                         std::optional<int64_t> fallback) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) {
    if (fallback) return *fallback;
    return MakeError(where + ": malformed request record: missing '" + key + "'");
  }
  if (!it->is_number_integer() ||
      (it->is_number_unsigned() &&
       it->get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())))
    return MakeError(where + ": malformed request record: '" + key + "' must be an integer, got " +
                     it->dump());
  return it->get<int64_t>();
}

// An optional array of integers >= `min`; absent (files written before the
// field existed) reads as empty.
Result<std::vector<int64_t>> IntArrayField(const nlohmann::json& j, const char* key, int64_t min,
                                           const std::string& where) {
  std::vector<int64_t> out;
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return out;
  if (!it->is_array())
    return MakeError(where + ": malformed request record: '" + key + "' must be an array");
  out.reserve(it->size());
  for (const nlohmann::json& v : *it) {
    if (!v.is_number_integer() ||
        (v.is_number_unsigned() &&
         v.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) ||
        v.get<int64_t>() < min)
      return MakeError(where + ": malformed request record: '" + key + "' entry " +
                       std::to_string(out.size()) +
                       " must be an integer >= " + std::to_string(min) + ", got " + v.dump());
    out.push_back(v.get<int64_t>());
  }
  return out;
}

}  // namespace

Result<workload::RequestRecord> RecordFromJson(const nlohmann::json& j, const std::string& where) {
  workload::RequestRecord r;
  if (!j.is_object()) return MakeError(where + ": malformed request record: not a JSON object");
  PPS_ASSIGN_OR_RETURN(r.id, IntField(j, "id", where, std::nullopt));
  PPS_ASSIGN_OR_RETURN(r.send_ns, IntField(j, "send_ns", where, std::nullopt));
  PPS_ASSIGN_OR_RETURN(r.first_token_ns, IntField(j, "first_token_ns", where, std::nullopt));
  PPS_ASSIGN_OR_RETURN(r.end_ns, IntField(j, "end_ns", where, std::nullopt));
  PPS_ASSIGN_OR_RETURN(r.input_tokens, IntField(j, "input_tokens", where, std::nullopt));
  PPS_ASSIGN_OR_RETURN(r.reported_input_tokens, IntField(j, "reported_input_tokens", where, -1));
  PPS_ASSIGN_OR_RETURN(r.output_tokens, IntField(j, "output_tokens", where, std::nullopt));
  PPS_ASSIGN_OR_RETURN(int64_t http, IntField(j, "http_status", where, 0));
  if (http < 0 || http > 999)
    return MakeError(where + ": malformed request record: 'http_status' " + std::to_string(http) +
                     " is not an HTTP status");
  r.http_status = static_cast<int>(http);
  PPS_ASSIGN_OR_RETURN(r.chunk_gaps_us, IntArrayField(j, "chunk_gaps_us", 0, where));
  PPS_ASSIGN_OR_RETURN(r.chunk_tokens, IntArrayField(j, "chunk_tokens", 1, where));
  PPS_ASSIGN_OR_RETURN(int64_t instance, IntField(j, "instance", where, 0));
  if (instance < 0 || instance > kMaxInstanceIndex)
    return MakeError(where + ": malformed request record: 'instance' " + std::to_string(instance) +
                     " is not an instance index");
  r.instance = static_cast<int>(instance);
  if (!r.chunk_tokens.empty() && r.chunk_tokens.size() != r.chunk_gaps_us.size())
    return MakeError(where + ": malformed request record: 'chunk_tokens' has " +
                     std::to_string(r.chunk_tokens.size()) + " entries, 'chunk_gaps_us' " +
                     std::to_string(r.chunk_gaps_us.size()) + " (one per chunk)");
  try {
    r.server_first_token_unix_s = j.value("server_first_token_unix_s", -1.0);
    r.error = j.value("error", std::string());
    bool ok = false;
    r.status = StatusFromName(j.at("status").get<std::string>(), &ok);
    if (!ok)
      return MakeError(where + ": unknown request status '" + j.at("status").get<std::string>() +
                       "'");
  } catch (const nlohmann::json::exception& e) {
    return MakeError(where + ": malformed request record: " + e.what());
  }
  return r;
}

std::string RecordsToJsonl(const std::vector<workload::RequestRecord>& records) {
  std::string out;
  for (const auto& r : records) {
    // Server error text may hold invalid UTF-8; replace it rather than throw.
    out += JsonText(RecordToJson(r)) + "\n";
  }
  return out;
}

Result<std::string> ReadEvidenceFile(const std::string& path) {
  return ReadFile(path, kEvidenceReadOptions);
}

Result<std::vector<workload::RequestRecord>> ReadRecords(const std::string& path) {
  PPS_ASSIGN_OR_RETURN(std::string text, ReadEvidenceFile(path));
  return ParseRecords(text, path);
}

Result<std::vector<workload::RequestRecord>> ParseRecords(const std::string& text,
                                                          const std::string& path) {
  std::vector<workload::RequestRecord> out;
  std::istringstream in(text);
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    if (line.empty()) continue;
    const std::string where = path + ":" + std::to_string(n);
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(line);
    } catch (const nlohmann::json::exception& e) {
      return MakeError(where + ": not valid JSON: " + e.what());
    }
    PPS_ASSIGN_OR_RETURN(workload::RequestRecord r, RecordFromJson(j, where));
    out.push_back(r);
  }
  return out;
}

const char* SampleStateName(SampleState s) {
  switch (s) {
    case SampleState::kStarted:
      return "started";
    case SampleState::kCompleted:
      return "completed";
    case SampleState::kFailed:
      return "failed";
    case SampleState::kInterrupted:
      return "interrupted";
  }
  return "unknown";
}

Status AppendManifest(const RunPaths& paths, const SampleId& sample, SampleState state,
                      const nlohmann::json& extra) {
  nlohmann::json j = {{"ts", UtcNow("%Y-%m-%dT%H:%M:%SZ")},
                      {"sample", sample.str()},
                      {"state", SampleStateName(state)}};
  for (auto it = extra.begin(); it != extra.end(); ++it) j[it.key()] = it.value();
  return AppendLine(paths.manifest(), JsonText(j));
}

namespace {

std::string JoinNames(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

// One manifest line; "" and fills `entry` when it is good, else what is wrong.
std::string ParseManifestLine(const nlohmann::json& j, ManifestEntry& entry) {
  static const std::vector<std::string> states = {"started", "completed", "failed", "interrupted"};
  if (!j.is_object()) return "expected a JSON object, got " + std::string(j.type_name());
  if (!j.contains("sample") || !j["sample"].is_string())
    return "expected a string 'sample' (a sample id such as pp2-tp16-ep4_c8_r1)";
  entry.sample = j["sample"].get<std::string>();
  if (!j.contains("state") || !j["state"].is_string())
    return "sample " + entry.sample + ": expected a string 'state' (" + JoinNames(states) + ")";
  const std::string state = j["state"].get<std::string>();
  bool known = false;
  for (SampleState s : {SampleState::kStarted, SampleState::kCompleted, SampleState::kFailed,
                        SampleState::kInterrupted})
    if (state == SampleStateName(s)) {
      entry.state = s;
      known = true;
    }
  if (!known)
    return "sample " + entry.sample + ": unknown state '" + state + "'" +
           DidYouMean(state, states) + "; expected one of " + JoinNames(states);
  if (j.contains("verdict")) {
    if (!j["verdict"].is_string())
      return "sample " + entry.sample + ": expected a string 'verdict'";
    const std::string verdict = j["verdict"].get<std::string>();
    entry.verdict = ParseVerdict(verdict);
    if (!entry.verdict) {
      const auto& names = VerdictNames();
      return "sample " + entry.sample + ": unknown verdict '" + verdict + "'" +
             DidYouMean(verdict, names) + "; expected one of " + JoinNames(names);
    }
    entry.detail = j.contains("detail") && j["detail"].is_string() ? j["detail"].get<std::string>()
                                                                   : std::string();
  }
  return "";
}

}  // namespace

Result<Manifest> ReadManifestEntries(const RunPaths& paths) {
  Manifest out;
  Result<std::string> text = ReadEvidenceFile(paths.manifest());
  if (!text.ok()) {
    std::error_code ec;
    if (std::filesystem::exists(paths.manifest(), ec)) return text.error();
    return out;  // no manifest yet: nothing done
  }
  out.exists = true;
  std::vector<std::string> lines;
  {
    std::istringstream in(*text);
    for (std::string line; std::getline(in, line);) lines.push_back(line);
  }
  std::map<std::string, size_t> index;
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string& line = lines[i];
    const std::string where = "manifest.jsonl:" + std::to_string(i + 1);
    if (line.empty()) continue;
    nlohmann::json j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded()) {
      if (i + 1 == lines.size()) {
        out.warnings.push_back(where +
                               ": the last line is torn (a crash mid-write?) and was skipped");
      } else {
        out.problems.push_back(where + ": not valid JSON; the line was skipped");
      }
      continue;
    }
    ManifestEntry entry;
    entry.line = static_cast<int>(i + 1);
    if (std::string what = ParseManifestLine(j, entry); !what.empty()) {
      out.problems.push_back(where + ": " + what + "; the line was skipped");
      continue;
    }
    auto it = index.find(entry.sample);
    if (it == index.end()) {
      index[entry.sample] = out.entries.size();
      out.entries.push_back(entry);
      continue;
    }
    ManifestEntry& last = out.entries[it->second];
    if (entry.state == SampleState::kStarted) last.conflicts.clear();  // a rerun starts afresh
    if (entry.verdict && last.verdict && *entry.verdict != *last.verdict)
      last.conflicts.push_back(
          fmt::format("manifest.jsonl:{} says {}/{}, line {} says {}/{}", last.line,
                      SampleStateName(last.state), VerdictName(*last.verdict), entry.line,
                      SampleStateName(entry.state), VerdictName(*entry.verdict)));
    // A later line without a verdict (a "started" of a rerun) clears the old one.
    last.state = entry.state;
    last.line = entry.line;
    last.verdict = entry.verdict;
    last.detail = entry.detail;
  }
  return out;
}

Result<std::vector<std::pair<std::string, SampleState>>> ReadManifest(const RunPaths& paths) {
  PPS_ASSIGN_OR_RETURN(Manifest manifest, ReadManifestEntries(paths));
  std::vector<std::pair<std::string, SampleState>> out;
  for (const ManifestEntry& e : manifest.entries) out.push_back({e.sample, e.state});
  return out;
}

}  // namespace ppsearch::evidence

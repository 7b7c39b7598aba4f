#include "evidence/evidence.h"

#include <chrono>
#include <cstdio>
#include <ctime>
#include <map>
#include <sstream>

#include "util/files.h"

namespace ppsearch::evidence {
namespace {

std::string NowIso() {
  auto now = std::chrono::system_clock::now();
  std::time_t t = std::chrono::system_clock::to_time_t(now);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

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
  return "pp" + std::to_string(layout.pp) + "-tp" + std::to_string(layout.tp) + "-ep" +
         std::to_string(layout.ep) + "_c" + std::to_string(concurrency) + "_r" +
         std::to_string(repeat);
}

Result<SampleId> ParseSampleId(const std::string& text) {
  SampleId s;
  char rest = 0;
  if (std::sscanf(text.c_str(), "pp%d-tp%d-ep%d_c%d_r%d%c", &s.layout.pp, &s.layout.tp,
                  &s.layout.ep, &s.concurrency, &s.repeat, &rest) != 5)
    return MakeError("'" + text + "' is not a sample id (expected e.g. pp2-tp16-ep4_c8_r1)");
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
  return j;
}

Result<workload::RequestRecord> RecordFromJson(const nlohmann::json& j, const std::string& where) {
  workload::RequestRecord r;
  try {
    r.id = j.at("id").get<int64_t>();
    r.send_ns = j.at("send_ns").get<int64_t>();
    r.first_token_ns = j.at("first_token_ns").get<int64_t>();
    r.end_ns = j.at("end_ns").get<int64_t>();
    r.input_tokens = j.at("input_tokens").get<int64_t>();
    r.reported_input_tokens = j.value("reported_input_tokens", int64_t{-1});
    r.output_tokens = j.at("output_tokens").get<int64_t>();
    r.http_status = j.value("http_status", 0);
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
    out += RecordToJson(r).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  }
  return out;
}

Result<std::vector<workload::RequestRecord>> ReadRecords(const std::string& path) {
  PPS_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
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
    } catch (const nlohmann::json::parse_error& e) {
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
  nlohmann::json j = {
      {"ts", NowIso()}, {"sample", sample.str()}, {"state", SampleStateName(state)}};
  for (auto it = extra.begin(); it != extra.end(); ++it) j[it.key()] = it.value();
  return AppendLine(paths.manifest(),
                    j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

Result<std::vector<std::pair<std::string, SampleState>>> ReadManifest(const RunPaths& paths) {
  std::vector<std::pair<std::string, SampleState>> out;
  Result<std::string> text = ReadFile(paths.manifest());
  if (!text.ok()) return out;  // no manifest yet: nothing done
  std::map<std::string, size_t> index;
  std::istringstream in(*text);
  std::string line;
  while (std::getline(in, line)) {
    nlohmann::json j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded() || !j.contains("sample") || !j.contains("state")) continue;  // torn line
    const std::string sample = j["sample"].get<std::string>();
    const std::string state = j["state"].get<std::string>();
    SampleState s = SampleState::kStarted;
    for (SampleState c : {SampleState::kStarted, SampleState::kCompleted, SampleState::kFailed,
                          SampleState::kInterrupted})
      if (state == SampleStateName(c)) s = c;
    auto it = index.find(sample);
    if (it == index.end()) {
      index[sample] = out.size();
      out.push_back({sample, s});
    } else {
      out[it->second].second = s;
    }
  }
  return out;
}

}  // namespace ppsearch::evidence

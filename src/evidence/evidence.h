#pragma once
// The evidence directory of one search, results/<RUN_ID>/, as both the
// simulated and the real engines write it, and what analysis reads back:
//
//   manifest.jsonl            append-only, one line per sample state change
//   metadata/spec.toml        the spec as given
//   metadata/spec.resolved.json  the spec after defaults and --set overrides
//   metadata/run.json         run id, tool version, git sha, engine, image,
//                             hosts, seeds, noise model, calibration, command line
//   metadata/commands.txt     the exact server and benchmark commands per sample
//   metadata/calibration.json the calibration used (simulated engine)
//   bench/<sample>.json       per-sample benchmark summary (bench_summary.h)
//   raw/<sample>.jsonl        per-request records
//   gpu/<sample>/<host>.csv   nvidia-smi CSV after the sample, per node
//   service/<sample>/<host>.log  server log of the sample, per node
//   profile/<sample>/<name>.json  Nsight Systems analysis (ppsearch nsys) per
//                             node or given export, and predicted.json, the
//                             simulator's breakdown of the same layout (profile_files.h)
//   state/servers/<tag>.json  every server the run started and has not seen
//                             stop (server_state_file.h)
//   results.csv, summary.csv, summary.json, report.md   derived (ppsearch report)
//
// Sample ids look like "pp2-tp16-ep4_c8_r1" (repeat numbers start at 1).

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "evidence/verdict.h"
#include "spec/spec.h"
#include "util/files.h"
#include "util/result.h"
#include "workload/request_record.h"

namespace ppsearch::evidence {

constexpr const char* kSchemaVersion = "1";

struct SampleId {
  spec::LayoutSpec layout;
  int concurrency = 0;
  int repeat = 1;  // 1-based

  std::string str() const;  // "pp2-tp16-ep4_c8_r1"
  bool operator==(const SampleId& o) const {
    return layout == o.layout && concurrency == o.concurrency && repeat == o.repeat;
  }
};

Result<SampleId> ParseSampleId(const std::string& text);

// A host name as a single path component: validated spec names pass
// unchanged; anything that could leave the directory ('/', "..", a leading
// '.') is replaced, so no value can write outside the run directory.
std::string SafePathComponent(const std::string& name);

// An adaptive run's trajectory, in metadata/ (evidence/trajectory.h).
inline constexpr const char* kTrajectoryFile = "adaptive.jsonl";

// Every path inside a run directory, each named once here. An accessor
// joins `root` with the file's place in the run; with an empty root it gives
// the place alone ("raw/pp2-tp16-ep4_c8_r1.jsonl"), the name messages and
// evidence problems use. A sample is named by its SampleId, or by its
// manifest name where a reader has only that.
struct RunPaths {
  std::string root;

  std::string manifest() const { return At("manifest.jsonl"); }
  std::string lock() const { return At(".lock"); }

  // metadata/: what the run was started with.
  std::string metadata_dir() const { return At("metadata"); }
  std::string run_json() const { return Metadata("run.json"); }
  std::string spec_toml() const { return Metadata("spec.toml"); }
  std::string spec_resolved_json() const { return Metadata("spec.resolved.json"); }
  std::string commands_txt() const { return Metadata("commands.txt"); }
  std::string calibration_json() const { return Metadata("calibration.json"); }
  std::string trajectory_jsonl() const { return Metadata(kTrajectoryFile); }
  // An imported baseline's copies (analysis/baseline.h).
  std::string baseline_csv() const { return Metadata("baseline.csv"); }
  std::string baseline_run_summary_csv() const { return Metadata("baseline-run-summary.csv"); }

  // What the report writes at the top.
  std::string results_csv() const { return At("results.csv"); }
  std::string summary_csv() const { return At("summary.csv"); }
  std::string summary_json() const { return At("summary.json"); }
  std::string report_md() const { return At("report.md"); }
  std::string report_html() const { return At("report.html"); }

  // Per sample.
  std::string raw_dir() const { return At("raw"); }
  std::string bench_dir() const { return At("bench"); }
  std::string gpu_dir() const { return At("gpu"); }
  std::string service_dir() const { return At("service"); }
  std::string raw(const std::string& sample) const { return At("raw/" + sample + ".jsonl"); }
  std::string raw(const SampleId& s) const { return raw(s.str()); }
  std::string bench(const std::string& sample) const { return At("bench/" + sample + ".json"); }
  std::string bench(const SampleId& s) const { return bench(s.str()); }
  std::string gpu_dir(const std::string& sample) const { return At("gpu/" + sample); }
  std::string gpu(const std::string& sample, const std::string& host) const {
    return gpu_dir(sample) + "/" + SafePathComponent(host) + ".csv";
  }
  std::string gpu(const SampleId& s, const std::string& host) const { return gpu(s.str(), host); }
  std::string service_dir(const std::string& sample) const { return At("service/" + sample); }
  std::string service(const std::string& sample, const std::string& host) const {
    return service_dir(sample) + "/" + SafePathComponent(host) + ".log";
  }
  std::string service(const SampleId& s, const std::string& host) const {
    return service(s.str(), host);
  }
  // The router of a disaggregated deployment, run on `host` beside its
  // server: its log, kept and while it runs.
  std::string router_service(const SampleId& s, const std::string& host) const {
    return service_dir(s.str()) + "/" + SafePathComponent(host) + ".router.log";
  }
  std::string router_live_log(const SampleId& s, const std::string& host) const {
    return At("live/" + s.str() + "/" + SafePathComponent(host) + ".router.log");
  }
  std::string profile_dir() const { return At("profile"); }
  std::string profile(const SampleId& s, const std::string& name) const {
    return At("profile/" + s.str() + "/" + SafePathComponent(name) + ".json");
  }
  // A real server's output while it runs; moved into service/ when the sample ends.
  std::string live_dir() const { return At("live"); }
  std::string live_log(const SampleId& s, const std::string& host) const {
    return At("live/" + s.str() + "/" + SafePathComponent(host) + ".log");
  }
  // An interrupted run's live logs, kept by resume under the time it resumed.
  std::string interrupted_dir() const { return At("interrupted"); }
  // One file per server a run started and has not yet seen stop (resume stops them).
  std::string server_state_dir() const { return At("state/servers"); }
  std::string server_state(const std::string& tag) const {
    return server_state_dir() + "/" + SafePathComponent(tag) + ".json";
  }

 private:
  std::string At(const std::string& place) const {
    if (root.empty()) return place;
    return root.back() == '/' ? root + place : root + "/" + place;
  }
  std::string Metadata(const char* name) const { return At(std::string("metadata/") + name); }
};

// How every file of a run directory is read: a regular file only, never
// through a symbolic link (a link is not evidence the run wrote, and
// following it would quote another file into the report), a FIFO refused
// without blocking.
inline constexpr ReadOptions kEvidenceReadOptions{.follow_links = false};
Result<std::string> ReadEvidenceFile(const std::string& path);

// Per-request records as JSON lines.
nlohmann::json RecordToJson(const workload::RequestRecord& r);
Result<workload::RequestRecord> RecordFromJson(const nlohmann::json& j, const std::string& where);
std::string RecordsToJsonl(const std::vector<workload::RequestRecord>& records);
// ParseRecords on ReadEvidenceFile(path); errors name path:line.
Result<std::vector<workload::RequestRecord>> ReadRecords(const std::string& path);
Result<std::vector<workload::RequestRecord>> ParseRecords(const std::string& text,
                                                          const std::string& path);

// Manifest: {"sample": id, "state": "started"|"completed"|"failed"|"interrupted", "ts": ISO-8601,
// ...}
enum class SampleState { kStarted, kCompleted, kFailed, kInterrupted };
const char* SampleStateName(SampleState state);
Status AppendManifest(const RunPaths& paths, const SampleId& sample, SampleState state,
                      const nlohmann::json& extra = nlohmann::json::object());

// The last state of one sample named in the manifest.
struct ManifestEntry {
  std::string sample;
  SampleState state = SampleState::kStarted;
  std::optional<Verdict> verdict;  // of the last line that carries one; none when none does
  std::string detail;
  int line = 0;  // 1-based manifest line of the last state change
  // Lines that end the sample with another verdict than an earlier line
  // since its last "started" ("manifest.jsonl:3 says completed/ok, line 5
  // says completed/requests_failed"): the last does not silently win.
  std::vector<std::string> conflicts;
};

struct Manifest {
  bool exists = false;
  std::vector<ManifestEntry> entries;  // in the order samples first appear
  // Lines that could not be read, "manifest.jsonl:LINE: what"; the line is skipped.
  std::vector<std::string> problems;
  // A torn last line (a crash mid-write): skipped, and named here.
  std::vector<std::string> warnings;
};

// Reads manifest.jsonl line by line. A missing manifest is an empty one
// (exists = false). Every line that is not a JSON object with a string
// "sample" and a known "state" (and, when present, a known "verdict") is a
// problem naming its line, except an unparseable last line, a warning.
Result<Manifest> ReadManifestEntries(const RunPaths& paths);

// The last state of every sample named in the manifest, from ReadManifestEntries.
Result<std::vector<std::pair<std::string, SampleState>>> ReadManifest(const RunPaths& paths);

}  // namespace ppsearch::evidence

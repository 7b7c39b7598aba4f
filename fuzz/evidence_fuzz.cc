// libFuzzer target: the readers of a run's evidence on arbitrary bytes: the
// manifest (manifest.jsonl in a scratch run directory), raw request records
// (a JSONL file and one JSON record), run.json, a CSV of medians, an
// nvidia-smi memory CSV and a bench summary (run.json and the summary also
// read back from what they write); and the checks of evidence that cannot
// be true (evidence/validation) on what the readers accept. Damaged evidence must
// come back as problems or errors, never as a crash, and what the checks
// pass must give finite, ordered numbers.

#include <unistd.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "evidence/bench_summary.h"
#include "evidence/evidence.h"
#include "evidence/medians_csv.h"
#include "evidence/run_metadata.h"
#include "evidence/validation.h"
#include "nvidia_smi/gpu_memory.h"
#include "stats/stats.h"

namespace {

void Check(bool ok) {
  if (!ok) std::abort();
}

// Plain write, no fsync: WriteFileAtomic's fsyncs would cost most of the run.
void Write(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
  Check(out.good());
}

const std::string& ScratchDir() {
  static const std::string dir = [] {
    std::string d =
        (std::filesystem::temp_directory_path() / ("evidence_fuzz_" + std::to_string(::getpid())))
            .string();
    std::filesystem::create_directories(d);
    return d;
  }();
  return dir;
}

// Records the checks pass: unique ids, at most the requests sent, every
// time within the window and in order, so the metrics are finite and not
// negative (an ok request without a first token is the validity gate's to
// catch, not a time).
void CheckPassedRecords(const std::vector<ppsearch::workload::RequestRecord>& records,
                        const ppsearch::evidence::RecordLimits& limits) {
  if (!ppsearch::evidence::CheckRecords(records, limits, "raw/fuzz.jsonl").empty()) return;
  Check(records.size() <= static_cast<size_t>(limits.requests_expected));
  std::set<int64_t> ids;
  for (const auto& r : records) {
    Check(ids.insert(r.id).second);
    if (r.status == ppsearch::workload::RequestStatus::kNotSent) continue;
    Check(r.send_ns >= 0 && r.send_ns <= limits.window_ns);
    Check(r.end_ns == -1 || (r.end_ns >= r.send_ns && r.end_ns <= limits.window_ns));
    Check(r.first_token_ns == -1 || r.first_token_ns >= r.send_ns);
  }
  const ppsearch::stats::SampleMetrics m = ppsearch::stats::ComputeSampleMetrics(records);
  Check(std::isfinite(m.duration_s) && m.duration_s >= 0);
  Check(std::isfinite(m.input_tps) && m.input_tps >= 0);
  Check(m.requests_completed <= limits.requests_expected);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  const ppsearch::evidence::RunPaths paths{ScratchDir()};

  Write(paths.manifest(), bytes);
  ppsearch::Result<ppsearch::evidence::Manifest> manifest =
      ppsearch::evidence::ReadManifestEntries(paths);
  if (manifest.ok()) {
    for (const auto& entry : manifest->entries) Check(entry.line >= 1);
  }

  const std::string records_path = ScratchDir() + "/records.jsonl";
  Write(records_path, bytes);
  ppsearch::Result<std::vector<ppsearch::workload::RequestRecord>> records =
      ppsearch::evidence::ReadRecords(records_path);
  if (records.ok()) CheckPassedRecords(*records, {8, int64_t{3600} * 1'000'000'000});

  const nlohmann::json j = nlohmann::json::parse(bytes, nullptr, /*allow_exceptions=*/false);
  if (!j.is_discarded()) {
    (void)ppsearch::evidence::RecordFromJson(j, "fuzz:1");
    ppsearch::Result<ppsearch::evidence::RunMetadata> run =
        ppsearch::evidence::RunMetadataFromJson(j, "run.json");
    // What was read must write back as a run.json that reads the same.
    if (run.ok())
      Check(ppsearch::evidence::RunMetadataFromJson(ppsearch::evidence::RunMetadataToJson(*run),
                                                    "run.json")
                .ok());
  }

  // A bench summary read must write back bytes that read the same again.
  ppsearch::Result<ppsearch::evidence::BenchSummary> bench =
      ppsearch::evidence::ParseBenchSummary(bytes, "bench/fuzz.json");
  if (bench.ok()) {
    const std::string text = ppsearch::evidence::BenchSummaryText(*bench);
    ppsearch::Result<ppsearch::evidence::BenchSummary> again =
        ppsearch::evidence::ParseBenchSummary(text, "bench/fuzz.json");
    Check(again.ok() && ppsearch::evidence::BenchSummaryText(*again) == text);
  }

  ppsearch::Result<ppsearch::CsvTable> table = ppsearch::ParseCsv(bytes, "medians.csv");
  if (table.ok()) {
    ppsearch::Result<ppsearch::evidence::MediansCsv> medians =
        ppsearch::evidence::ParseMediansCsv(*table);
    if (medians.ok())
      for (const auto& row : medians->rows)
        Check(row.point.layout.pp >= 1 && row.point.concurrency >= 1 &&
              (!row.measured || row.point.median.input_tps > 0));
  }

  ppsearch::Result<std::vector<ppsearch::nvidia_smi::GpuMemory>> gpus =
      ppsearch::nvidia_smi::ParseGpuMemoryCsv(bytes, "fuzz.csv");
  if (gpus.ok() && ppsearch::evidence::CheckGpuSnapshot(*gpus, "fuzz.csv").empty())
    for (const auto& g : *gpus)
      Check(!g.used_mib ||
            (*g.used_mib >= 0 && *g.used_mib <= ppsearch::evidence::kMaxGpuMemoryMib &&
             (!g.total_mib || *g.used_mib <= *g.total_mib)));
  return 0;
}

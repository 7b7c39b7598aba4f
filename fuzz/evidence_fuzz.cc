// libFuzzer target: the readers of a run's evidence on arbitrary bytes: the
// manifest (manifest.jsonl in a scratch run directory), raw request records
// (a JSONL file and one JSON record), run.json, a CSV of medians, and an
// nvidia-smi memory CSV. Damaged
// evidence must come back as problems or errors, never as a crash.

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "evidence/evidence.h"
#include "evidence/medians_csv.h"
#include "evidence/run_metadata.h"
#include "gpu/gpu_memory.h"

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
  (void)ppsearch::evidence::ReadRecords(records_path);

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

  ppsearch::Result<ppsearch::CsvTable> table = ppsearch::ParseCsv(bytes, "medians.csv");
  if (table.ok()) {
    ppsearch::Result<ppsearch::evidence::MediansCsv> medians =
        ppsearch::evidence::ParseMediansCsv(*table);
    if (medians.ok())
      for (const auto& row : medians->rows)
        Check(row.layout.pp >= 1 && row.concurrency >= 1 &&
              (!row.measured || row.input_tps_median > 0));
  }

  (void)ppsearch::gpu::ParseGpuMemoryCsv(bytes, "fuzz.csv");
  return 0;
}

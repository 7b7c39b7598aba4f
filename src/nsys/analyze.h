#pragma once
// `ppsearch nsys`'s analysis: one or more exports (one per node) read through
// ExportReader, windows chosen, every GPU's kernels streamed through the pure
// analyzers, then summarised.

#include <cstdint>
#include <string>
#include <vector>

#include "nsys/export_rows.h"
#include "nsys/nvtx_pattern.h"
#include "nsys/profile_summary.h"
#include "util/result.h"

namespace ppsearch::nsys {

struct WindowChoice {
  enum class Mode { kForward, kNvtx } mode = Mode::kForward;
  std::string pattern;           // kNvtx: the pattern as given
  NvtxPattern nvtx;              // kNvtx: the pattern compiled, searched in each range's text
  int64_t gap_ns = 1'000'000;    // kForward: an idle gap this long ends a forward pass
  std::string Describe() const;  // "nvtx:prefill" or "forward (gap 1000 us)"
};

// The longest --gap-us: an hour without a kernel ends any forward pass.
inline constexpr int64_t kMaxGapUs = 3'600'000'000;

// "forward" or "nvtx:REGEX"; the regex must compile (RE2 syntax) and the gap
// be 1 to kMaxGapUs microseconds.
Result<WindowChoice> ParseWindowChoice(const std::string& text, int64_t gap_us);

struct ExportAnalysis {
  std::string path;
  std::string product_version, schema_version;  // "" when the export does not say
  int64_t kernel_rows = 0;
  std::vector<GpuWindows> gpus;      // by device id
  std::vector<SkippedRows> skipped;  // rows read but not analysed, by table and reason
  std::vector<std::string> notes;    // the skipped rows described, and other remarks
};

struct ProfileAnalysis {
  WindowChoice window;
  std::vector<ExportAnalysis> exports;
  ProfileSummary summary;
};

// One export; an error when its kernel table is empty (no figure from nothing).
Result<ExportAnalysis> AnalyzeExport(const std::string& path, const WindowChoice& window);
// Each path is one node's export: a file given twice (by any path) is
// refused, as is a set of exports in which no window was found.
Result<ProfileAnalysis> AnalyzeProfiles(const std::vector<std::string>& paths,
                                        const WindowChoice& window);
// The checks of Open (a regular file, an export with plain tables) and at
// least one kernel: what `validate` and `run` check of [profile] file before
// any sample, without reading the rows.
Status CheckExportHasKernels(const std::string& path);
// Two paths that are the same file (after links and `..`), the second named.
Status CheckDistinctExports(const std::vector<std::string>& paths);

}  // namespace ppsearch::nsys

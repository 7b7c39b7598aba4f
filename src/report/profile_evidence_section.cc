#include "report/profile_evidence_section.h"

#include <fmt/format.h>

#include "evidence/evidence.h"
#include "evidence/profile_files.h"
#include "util/format.h"

namespace ppsearch::report {
namespace {

// ", compute by class gemm x%, moe y%, ..." (shares of the window), or "".
std::string ClassesText(const std::optional<std::array<double, nsys::kComputeClasses>>& classes) {
  if (!classes) return "";
  return "; compute by class " + nsys::ClassesText([&classes](nsys::ComputeClass c) {
           return FormatPercent((*classes)[static_cast<int>(c)]);
         });
}

std::string MeasuredText(const nsys::AnalysisSummary& a) {
  return fmt::format(
             "exposed communication {} of the window (median over {} windows on {} GPUs, spread "
             "{}), "
             "overlapped {}, compute only {}, idle {}; {} AllReduce calls per window; compute/"
             "communication overlap {}",
             FormatPercent(a.exposed_share_median), a.windows, a.gpus,
             FormatPercent(a.exposed_share_spread), FormatPercent(a.overlapped_share_median),
             FormatPercent(a.compute_only_share_median), FormatPercent(a.idle_share_median),
             a.allreduce_calls_in_window, a.overlap_words) +
         ClassesText(a.class_share_median);
}

std::string PredictedText(const evidence::PredictedBreakdown& p) {
  return fmt::format(
             "the simulator predicts for {} at C={}: exposed communication {}, pipeline bubble {}, "
             "{} "
             "all-reduces per forward",
             p.layout, p.concurrency, FormatPercent(p.exposed_comm_share),
             FormatPercent(p.bubble_share), p.allreduce_per_forward) +
         ClassesText(p.compute_classes);
}

}  // namespace

Result<std::vector<std::string>> ProfileEvidenceLines(const std::string& run_dir) {
  const evidence::RunPaths paths{run_dir};
  std::vector<std::string> lines;
  for (const std::string& sample : evidence::ProfiledSamples(paths)) {
    PPS_ASSIGN_OR_RETURN(const std::vector<evidence::ProfileFile> files,
                         evidence::ReadSampleProfiles(paths, sample));
    const std::string dir = paths.profile_dir() + "/" + sample + "/";
    std::string predicted;
    for (const evidence::ProfileFile& f : files) {
      if (f.name != evidence::kPredictedProfile) continue;
      PPS_ASSIGN_OR_RETURN(const evidence::PredictedBreakdown p,
                           evidence::ReadPredictedBreakdown(f.analysis, dir + f.name + ".json"));
      predicted = "; " + PredictedText(p);
    }
    for (const evidence::ProfileFile& f : files) {
      if (f.name == evidence::kPredictedProfile) continue;
      PPS_ASSIGN_OR_RETURN(const evidence::MeasuredProfile m,
                           evidence::ReadMeasuredProfile(f.analysis, dir + f.name + ".json"));
      const std::string where = f.name == "file" ? "the export the spec names" : "node " + f.name;
      if (!m.summary) {
        lines.push_back(fmt::format("`{}` ({}): no analysis: {}", sample, where, m.error));
        continue;
      }
      // An analysis of no window (written before `ppsearch nsys` refused
      // one) holds zeros that nothing measured: no figure is quoted.
      if (m.summary->windows == 0) {
        lines.push_back(fmt::format(
            "`{}` ({}): no analysis: the profile held no window (no kernel in it), so it gives "
            "no figure",
            sample, where));
        continue;
      }
      lines.push_back(
          fmt::format("`{}` ({}): {}{}", sample, where, MeasuredText(*m.summary), predicted));
    }
  }
  return lines;
}

}  // namespace ppsearch::report

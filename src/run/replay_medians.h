#pragma once
// Samples synthesized from a CSV of medians (`--engine replay:FILE.csv`).
// Each sample of point (layout, C) is a set of request records, one per
// request of the spec's workload at that repeat's seed (input lengths as the
// simulated engine draws them), timed so that their analysis (stats/) gives
// exactly the row's input_tps_median, ttft_p50_s_median and
// ttft_p95_s_median, then stretched like a simulated repeat by a seeded
// lognormal factor. Its coefficient of variation comes from the row's
// input_tps_spread over its repeats (the expected range of n normal draws
// is 2 * ExpectedMaxOfNormals(n) standard deviations); a file without
// spread, or with one repeat, uses the spec's [sim] noise_cv, and the
// sample's bench summary says which.
//
// What the file does not record is not invented: without a TTFT column
// every request's TTFT is the window's share of a closed loop (Little's
// law: min(C, requests) x mean input / input TPS); records carry their
// first token only (a CSV of medians has no decode figures); a row with
// peak_gpu_mib gives every GPU of every node that used memory (total from
// gpu_total_mib, else peak + headroom_mib, else the hardware profile), and
// without it no snapshot is written, so the memory is unknown and the
// decision excludes the layout (docs/cluster.md, "Replaying a sweep").

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "plan/plan.h"
#include "run/sample_engine.h"
#include "spec/spec.h"
#include "util/result.h"
#include "workload/request_record.h"
#include "workload/workload.h"

namespace ppsearch::run {

// The figures of one row that the records reproduce; unset TTFTs as above.
struct MedianTarget {
  double input_tps = 0;
  std::optional<double> ttft_p50_s, ttft_p95_s;
};

// Records of `requests` (sent by `concurrency` clients) whose input TPS is
// target.input_tps / factor and whose TTFT p50 and p95 are the target's
// times `factor`. The first request is sent at 0, the last completes at the
// window's end; TTFTs are flat up to the median, rise linearly to p95 and
// stay there. Errors (a TTFT longer than the window the throughput allows,
// p95 below p50) say what is wrong with the figures; the caller names the row.
Result<std::vector<workload::RequestRecord>> SynthesizeRecords(
    const std::vector<workload::PlannedRequest>& requests, int concurrency,
    const MedianTarget& target, double factor);

// The engine for a CSV of medians at `path` (absolute), every point of the
// sweep checked once.
Result<std::unique_ptr<SampleEngine>> MakeMediansReplay(const spec::Spec& spec,
                                                        const plan::Plan& plan,
                                                        const std::string& path);

}  // namespace ppsearch::run

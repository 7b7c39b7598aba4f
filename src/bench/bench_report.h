#pragma once
// What `ppsearch bench` prints and writes: an nccl-tests style table (#
// metadata lines, a header of names, a header of units, one row, a verdict
// footer), the same summary as JSON, and one JSON line per request.

#include <nlohmann/json.hpp>
#include <string>

#include "bench/bench_client.h"

namespace ppsearch::bench {

std::string RenderBenchText(const BenchOptions& options, const BenchResult& result);

// The footer verdict, e.g. "40/40 requests ok, 0 errors, 0 prompt-length mismatches".
std::string BenchVerdict(const BenchResult& result);

nlohmann::json BenchSummaryJson(const BenchOptions& options, const BenchResult& result);

// Per-request records are written with evidence::RecordsToJsonl, the same
// JSONL as a run's raw/ files.

}  // namespace ppsearch::bench

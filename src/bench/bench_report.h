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

// With several servers it adds "routing" and "instances" (each server's URL,
// requests sent and ok).
nlohmann::json BenchSummaryJson(const BenchOptions& options, const BenchResult& result);

// Per instance 0..instances-1: {"instance", "requests", "requests_ok"}, the
// requests sent to it by the records' `instance`.
nlohmann::json ServedByInstance(const std::vector<workload::RequestRecord>& records,
                                size_t instances);

// Per server, in instance order: ServedByInstance with each one's "url".
nlohmann::json InstancesJson(const BenchOptions& options, const BenchResult& result);

// Per-request records are written with evidence::RecordsToJsonl, the same
// JSONL as a run's raw/ files.

}  // namespace ppsearch::bench

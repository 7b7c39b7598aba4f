#pragma once
// What `ppsearch bench` prints and writes: an nccl-tests style table (#
// metadata lines, a header of names, a header of units, one row, a verdict
// footer), the same summary as JSON, and one JSON line per request.

#include <nlohmann/json.hpp>
#include <string>

#include "evidence/bench_summary.h"
#include "loadgen/bench_client.h"

namespace ppsearch::loadgen {

std::string RenderBenchText(const BenchOptions& options, const BenchResult& result);

// The footer verdict, e.g. "40/40 requests ok, 0 errors, 0 prompt-length mismatches".
std::string BenchVerdict(const BenchResult& result);

// The load generator's part of a sample's bench summary; with several
// servers it names the routing.
evidence::BenchClientSummary BenchClientSummaryOf(const BenchOptions& options,
                                                  const BenchResult& result);

// What `ppsearch bench --json` prints: BenchClientSummaryOf, and with
// several servers each one's share (BenchInstances).
nlohmann::json BenchSummaryJson(const BenchOptions& options, const BenchResult& result);

// Per instance 0..instances-1: the requests sent to it and those ok, by the
// records' `instance`.
std::vector<evidence::BenchInstance> ServedByInstance(
    const std::vector<workload::RequestRecord>& records, size_t instances);

// Per server, in instance order: ServedByInstance with each one's URL.
std::vector<evidence::BenchInstance> BenchInstances(const BenchOptions& options,
                                                    const BenchResult& result);

// Per-request records are written with evidence::RecordsToJsonl, the same
// JSONL as a run's raw/ files.

}  // namespace ppsearch::loadgen

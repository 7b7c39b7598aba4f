#pragma once
// Bounds on the counts that multiply into a search's size (docs/spec.md,
// "Limits"). Past them a value is a typo, and the samples, request plans and
// rank maps it implies would not fit in memory or in anyone's time. The
// section readers refuse a value past its bound at its key.

#include <cstdint>

namespace ppsearch::spec {

inline constexpr int kMaxRepeats = 100;         // sweep.repeats
inline constexpr int kMaxConcurrency = 65536;   // each sweep.concurrency value
inline constexpr int kMaxLayouts = 4096;        // layouts a sweep expands to
inline constexpr int64_t kMaxSamples = 100000;  // layouts x concurrency points x repeats
inline constexpr int kMaxRequests = 1000000;    // workload.requests, warmup_requests
inline constexpr int64_t kMaxTokens = 1 << 24;  // workload.input_tokens, output_tokens
inline constexpr int kMaxGpusPerNode = 256;     // cluster.gpus_per_node
inline constexpr int kMaxParallelSize = 32768;  // each of pp, tp, ep: pp x tp fits an int
// SGLang's max-running-requests wherever a spec or a search sets it
// ([engine.args], [search] max_running_requests, --max-running-requests):
// a cap below 1 admits no request, and past the largest concurrency a
// sweep may ask for it is a typo.
inline constexpr int kMinRunningRequests = 1;
inline constexpr int kMaxRunningRequests = kMaxConcurrency;
// Values in one list of [search] (and of each `ppsearch search` flag): the
// lists multiply into the candidates every search predicts.
inline constexpr int kMaxSearchValues = 64;
// The least open-loop request rate, requests/s (workload.request_rate,
// [search] request_rate, --request-rate): one request every 1,000 s. Below
// it a sample of a few requests lasts days, and near 1e-10 the arrival
// times overflow the simulator's integer nanoseconds.
inline constexpr double kMinRequestRate = 1e-3;
// The most MiB a memory threshold may name (decision.min_headroom_mib,
// lifecycle.memory_release_mib, preflight_gpu_mib): a pebibyte, past any GPU's
// memory. Past it a value is a typo, and near 1e19 its MiB no longer fit the
// integers the search, the report and the launchers print and compare.
inline constexpr double kMaxMib = 1 << 30;

}  // namespace ppsearch::spec

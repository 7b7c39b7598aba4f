#pragma once
// The replaying engine behind `ppsearch run --engine replay:PATH`: every
// sample is answered from a sweep someone already ran, so a decision policy
// (the spec's [decision], repeats, concurrency levels) can be scored on
// evidence already paid for. PATH is either
//   - a run directory: sample (layout, C, repeat) is that run's own sample
//     of the same id, its request records, bench summary, node logs, GPU
//     snapshots, profiles and engine verdict as written there (node i's
//     files become the spec's host i); a sample that failed there fails
//     here; or
//   - a CSV of medians (a run's summary.csv, data/baseline/*.csv; read by
//     the one reader, evidence/medians_csv.h): each sample is synthesized
//     from its point's row (replay_medians.h).
// Every sample of the sweep is checked once, before the first runs: points
// that PATH does not hold refuse the whole run, each one named.

#include <memory>
#include <optional>
#include <string>

#include "plan/plan.h"
#include "run/sample_engine.h"
#include "spec/spec.h"
#include "util/result.h"

namespace ppsearch::run {

// The engine's spelling on the command line and in a resumed run: "replay:PATH".
inline constexpr const char* kReplayPrefix = "replay:";

// PATH of "replay:PATH"; nullopt when `engine` does not start with the prefix.
std::optional<std::string> ReplayPath(const std::string& engine);

// What a run directory replay hashes (run.json's replay.sha256): the
// SHA-256 of the listing `sha256sum` prints ("<hex>  <relative path>\n")
// of manifest.jsonl, metadata/run.json and every regular file under raw/,
// bench/, service/, gpu/ and profile/, sorted by path as bytes.
Result<std::string> RunDirectoryDigest(const std::string& run_dir);

// The engine for `path` (a run directory or a CSV of medians), checked
// against every sample of the spec's sweep; `plan` supplies the GPU of a
// synthesized snapshot. The engine keeps references to `spec` and `plan`.
Result<std::unique_ptr<SampleEngine>> MakeReplayEngine(const spec::Spec& spec,
                                                       const plan::Plan& plan,
                                                       const std::string& path);

}  // namespace ppsearch::run

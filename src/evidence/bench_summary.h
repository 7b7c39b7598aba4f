#pragma once
// bench/<sample>.json: one sample's benchmark summary, written last so its
// presence means the sample's files are whole. Every engine writes one
// (run/ hands it to the runner in SampleOutput), each with the groups it
// knows; `ppsearch bench --json` prints the load generator's part. The one
// writer and reader of the file, so a key means the same everywhere; the
// keys are in docs/formats.md ("bench/<sample>.json").

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "evidence/evidence.h"
#include "stats/stats.h"
#include "util/result.h"

namespace ppsearch::evidence {

// The simulated engine's pipeline figures of the sample's prediction.
struct BenchSimFigures {
  int pp_max_micro_batch_size = 0;  // the resolved admission cap
  int64_t micro_batches = 0;
  double exposed_comm_share = 0;
  double bubble_share = 0;
};

// What a replayed sample answers from: a past run's sample (`run`, `sample`)
// or a row of a CSV of medians (`file`, `line`).
struct BenchReplayedFrom {
  std::string run, sample;
  std::string file;
  int64_t line = 0;
};

// How a sample synthesized from a CSV of medians was made.
struct BenchSynthesis {
  double noise_cv = 0;
  std::string noise_source;  // where noise_cv came from, a sentence
  // Where the sample's TTFT, decode and GPU memory came from, each a phrase.
  std::string ttft, decode, gpu_memory;
  // The figures (stats::FigureFields names) the records reproduce from the
  // file ("figures_from_file"); what else they show is the synthesis's own.
  // Empty in a summary written before it: input_tps, ttft_p50_s, ttft_p95_s.
  std::vector<std::string> figures_from_file;
};

// The real engine's servers once they answered.
struct BenchServerReady {
  double ready_s = 0;          // from the sample's start to ready (0 on a reused server)
  std::string server_version;  // as the server reported it; "" (null in the file) for none
};

// What the load generator measured, with the options it ran with: the part
// `ppsearch bench --json` prints.
struct BenchClientSummary {
  std::string url, api;
  int concurrency = 0;
  double request_rate = 0;
  int requests = 0;
  int warmup_requests = 0, warmup_ok = 0;
  bool flush_cache = false;
  int64_t input_tokens = 0, output_tokens = 0;
  double range_ratio = 1, output_range_ratio = 1;
  std::string lengths_file;
  int64_t lengths_rows = 0;
  double timeout_s = 0;
  uint64_t seed = 0;
  int64_t min_token_id = 0, vocab_size = 0, shared_prefix_tokens = 0;
  int requests_total = 0, requests_completed = 0, request_errors = 0;
  int prompt_length_mismatches = 0;
  int64_t total_input_tokens = 0, total_output_tokens = 0;
  double duration_s = 0, request_throughput = 0, input_tps = 0, output_tps = 0;
  stats::LatencySummary ttft_s, e2e_s;
  // Decode latencies: none where no completed request had more than one
  // output token (tpot_requests 0) or no ITL value was measured (itl_values
  // 0), where a 0 s figure would be made up; the file then holds null.
  int tpot_requests = 0;
  std::optional<stats::LatencySummary> tpot_s;
  int64_t itl_values = 0;
  std::optional<stats::LatencySummary> itl_s;
  double client_cpu_s = 0;
  std::string routing;  // several servers only; "" otherwise
};

// One instance of a layout of several, and the requests it served.
struct BenchInstance {
  int instance = 0;                               // as in the records' `instance`
  std::optional<std::vector<std::string>> hosts;  // its nodes (a run's samples)
  std::string url;                                // the real engine's; "" for none
  int requests = 0, requests_ok = 0;
};

// One pool of a disaggregated deployment in a sample: its servers (each a
// BenchInstance: hosts and the requests it served) and how loaded it ran.
struct BenchPool {
  std::string role;  // "prefill" | "decode"
  int gpus = 0;      // all of its servers'
  std::vector<BenchInstance> servers;
  double busy_share = 0;  // its GPUs' time at work over the window
  double batch_fill = 0;  // requests held on average / what its servers admit at once
};

// A disaggregated deployment's sample: each pool, where the completed
// requests' TTFT went (means, seconds), the KV moved between the pools and
// which pool held the throughput back ("prefill", "decode", "neither").
struct BenchDisaggregation {
  std::vector<BenchPool> pools;  // prefill, then decode
  double prealloc_wait_s = 0, handshake_s = 0, prefill_s = 0, transfer_s = 0, decode_join_s = 0;
  double transfer_share_of_ttft = 0;
  int64_t transfer_bytes = 0;
  std::string bottleneck;
};

struct BenchSummary {
  std::string sample;             // the sample id
  std::optional<bool> simulated;  // none from a CSV of medians
  // The workload seed; with the real engine the load generator's, which
  // client->seed holds too (the file has one key).
  std::optional<uint64_t> seed;
  std::optional<double> noise_factor;  // the simulated repeat's stretch
  std::optional<BenchSimFigures> sim;
  std::optional<BenchReplayedFrom> replayed_from;
  std::optional<BenchSynthesis> synthesis;
  // The real engine's: what stopping servers said, why GPU memory was still
  // held, snapshots that failed (each omitted when empty or unset).
  std::vector<std::string> stop_notes;
  std::string release_wait;
  std::vector<std::string> snapshot_errors;
  std::string server_version_error;
  std::optional<BenchServerReady> ready;
  std::optional<BenchClientSummary> client;
  std::vector<BenchInstance> instances;               // a layout of several instances
  std::optional<BenchDisaggregation> disaggregation;  // a disaggregated deployment's sample
  std::optional<double> sample_wall_s;                // the real sample's whole time
};

// The load generator's keys, with "instances" when there are any: what
// `ppsearch bench --json` prints.
nlohmann::json BenchClientJson(const BenchClientSummary& client,
                               const std::vector<BenchInstance>& instances);

nlohmann::json BenchSummaryToJson(const BenchSummary& summary);
// The file's bytes: BenchSummaryToJson indented by 2, and a newline.
std::string BenchSummaryText(const BenchSummary& summary);
Status WriteBenchSummary(const RunPaths& paths, const SampleId& id, const BenchSummary& summary);

// The summary in `text`; each key checked for its type, an absent or null
// key left unset (a group is read when any of its keys is there). tpot_s
// and itl_s read as none when their count is 0, whether the file holds
// null there or, as files written before held, zeros. Errors
// say what is wrong: "not valid JSON", "expected a JSON object, got array",
// "key 'sample' must be a string naming the sample", "key 'ttft_s.p50' must
// be a number, got "fast"".
Result<BenchSummary> BenchSummaryFromText(const std::string& text);
// The same with errors led by `file` ("bench/<sample>.json: key ...").
Result<BenchSummary> ParseBenchSummary(const std::string& text, const std::string& file);
// The file of sample `id` in the run directory, read as evidence is
// (evidence.h's ReadEvidenceFile), errors naming its path.
Result<BenchSummary> ReadBenchSummary(const RunPaths& paths, const SampleId& id);

}  // namespace ppsearch::evidence

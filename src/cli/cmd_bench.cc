// ppsearch bench --url URL[,URL...] [--routing POLICY]: the load generator.
// Streams requests to a running SGLang-compatible server (a real engine or
// `ppsearch serve-sim`), or spreads them over several (a layout's instances),
// prints an nccl-tests style summary (or JSON) and optionally writes one JSON
// line per request. Exit: 0 all requests ok, 1 any failed or the server could
// not be used, 2 bad arguments.

#include <cstdlib>
#include <iostream>
#include <memory>

#include "cli/command.h"
#include "evidence/evidence.h"
#include "loadgen/bench_client.h"
#include "loadgen/bench_report.h"
#include "util/files.h"
#include "workload/lengths_file.h"

namespace ppsearch::cli {
namespace {

// The longest prompt or output a lengths file may ask for (bench's own
// --input-tokens bound).
constexpr int64_t kMaxLengthTokens = 10'000'000;

struct BenchCommandOptions {
  loadgen::BenchOptions bench;
  std::string api = "native";
  std::vector<std::string> urls;
  std::string routing = "least-outstanding";
  bool json = false;
  std::string records_path;
  CLI::Option* concurrency_flag = nullptr;
};

Result<ExitCode> RunBenchCommand(BenchCommandOptions& opts) {
  const std::optional<loadgen::Api> api = loadgen::ParseApi(opts.api);
  if (!api) {
    return MakeError(
        "--api must be 'native' (POST /generate) or 'openai' (POST /v1/completions), got '" +
        opts.api + "'");
  }
  opts.bench.api = *api;
  const std::optional<loadgen::Routing> routing = loadgen::ParseRouting(opts.routing);
  if (!routing)
    return MakeError("--routing must be 'least-outstanding' or 'round-robin', got '" +
                     opts.routing + "'");
  opts.bench.routing = *routing;
  opts.bench.url = opts.urls.front();
  opts.bench.more_urls.assign(opts.urls.begin() + 1, opts.urls.end());
  // The server's --api-key, from the environment as SGLang's bench_serving
  // takes it: never on this command line.
  if (const char* key = std::getenv("OPENAI_API_KEY")) opts.bench.api_key = key;
  // An open loop has no in-flight cap unless one is asked for.
  if (opts.bench.request_rate > 0 && opts.concurrency_flag->count() == 0)
    opts.bench.concurrency = 0;
  if (!opts.bench.lengths_file.empty()) {
    Result<std::vector<workload::LengthPair>> lengths =
        workload::ReadLengthsFile(opts.bench.lengths_file, kMaxLengthTokens);
    if (!lengths.ok()) return MakeError("--lengths-file: " + lengths.error().message);
    opts.bench.lengths = std::move(*lengths);
  }
  if (Status s = loadgen::ValidateBenchOptions(opts.bench); !s.ok()) return s.error();
  PPS_RETURN_IF_ERROR(CheckOutputPath("--records", opts.records_path,
                                      {{"the --lengths-file", opts.bench.lengths_file}}));
  Result<loadgen::BenchResult> result = loadgen::RunBench(opts.bench);
  // A server that cannot be used is the machine's failure, not the arguments' (exit 1).
  if (!result.ok()) return MakeError(result.error().message, ErrorKind::kIo);
  if (opts.json) {
    std::cout << loadgen::BenchSummaryJson(opts.bench, *result)
                     .dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
              << "\n";
  } else {
    std::cout << loadgen::RenderBenchText(opts.bench, *result);
  }
  if (!opts.records_path.empty()) {
    if (Status s = WriteFileAtomic(opts.records_path, evidence::RecordsToJsonl(result->records));
        !s.ok())
      return MakeError(s.error().message, ErrorKind::kIo);
  }
  // Failed requests are measurements, printed above; the code says some failed.
  const auto& m = result->metrics;
  return m.requests_completed == m.requests_total ? kExitOk : kExitFailure;
}

}  // namespace

Runner AddBenchCommand(CLI::App& app) {
  auto opts = std::make_shared<BenchCommandOptions>();
  loadgen::BenchOptions& b = opts->bench;
  CLI::App* sub = app.add_subcommand(
      "bench",
      "Load a running SGLang-compatible server with streamed requests and measure TTFT/throughput");
  sub->add_option("--url", opts->urls,
                  "Server base URL, e.g. http://127.0.0.1:30000; several (repeated or "
                  "comma-separated): the load is spread over them by --routing")
      ->required()
      ->delimiter(',');
  sub->add_option("--routing", opts->routing,
                  "With several --url: least-outstanding (the server with the fewest requests "
                  "in flight) or round-robin")
      ->capture_default_str();
  sub->add_option("--api", opts->api, "native (POST /generate) or openai (POST /v1/completions)")
      ->capture_default_str();
  sub->add_option("--model", b.model, "The \"model\" field of OpenAI requests")
      ->capture_default_str();
  sub->add_option("-n,--requests", b.num_requests, "Requests in the sample")->capture_default_str();
  opts->concurrency_flag =
      sub->add_option(
             "-c,--concurrency", b.concurrency,
             "Requests in flight (closed loop); with --request-rate, a cap (default: none)")
          ->capture_default_str();
  sub->add_option("--request-rate", b.request_rate,
                  "Open loop: Poisson arrivals, requests/s (0: closed loop)")
      ->capture_default_str();
  sub->add_option("--input-tokens", b.input_tokens,
                  "Prompt length in tokens (exact: token ids are sent)")
      ->capture_default_str();
  sub->add_option("--output-tokens", b.output_tokens, "Generated tokens per request (ignore_eos)")
      ->capture_default_str();
  sub->add_option(
         "--range-ratio", b.range_ratio,
         "Prompt lengths uniform on [L * ratio, L], as bench_serving's --random-range-ratio")
      ->capture_default_str();
  sub->add_option("--output-range-ratio", b.output_range_ratio,
                  "Output lengths uniform on [L * ratio, L] for L = --output-tokens")
      ->capture_default_str();
  sub->add_option("--lengths-file", b.lengths_file,
                  "CSV with columns input_tokens,output_tokens: each request draws a row "
                  "(seeded); overrides the lengths above");
  sub->add_option("--warmup", b.warmup_requests, "Warm-up requests before the sample, not counted")
      ->capture_default_str();
  sub->add_flag("--flush-cache", b.flush_cache,
                "POST /flush_cache after warm-up, before the sample");
  sub->add_option("--timeout-s", b.timeout_s,
                  "Per-request timeout in seconds, send to end of stream")
      ->capture_default_str();
  sub->add_option("--seed", b.prompt.seed, "Seed of prompts and arrival times")
      ->capture_default_str();
  sub->add_option("--vocab-size", b.prompt.vocab_size, "Prompt ids are below this")
      ->capture_default_str();
  sub->add_option("--min-token-id", b.prompt.min_token_id,
                  "Prompt ids are at least this (skips special tokens)")
      ->capture_default_str();
  sub->add_option("--shared-prefix-tokens", b.prompt.shared_prefix_tokens,
                  "Identical leading tokens in every prompt, for prefix-cache hits on purpose")
      ->capture_default_str();
  sub->add_flag("--json", opts->json, "Print the summary as JSON");
  sub->add_option("--records", opts->records_path, "Write one JSON line per request to this file");
  return [opts] { return RunBenchCommand(*opts); };
}

}  // namespace ppsearch::cli

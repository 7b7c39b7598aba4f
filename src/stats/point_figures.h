#pragma once
// A point's figures: what one sample measured, one prediction says, or a
// run's repeats give as medians. The one record every predictor fills and
// every reporter reads: the search's load points (search::PointFigures),
// each draw of the parameter ensemble (uncertainty::MemberValues), a run's
// predicted points (analysis::PredictedPoint), a run's medians
// (evidence::PointSummary::median) and results.csv's rows all hold or read
// it, filled from a sample's metrics by FiguresOf alone. Memory is not
// here: a prediction's peak comes from the memory plan and a run's from the
// GPUs' readings, each with its own meaning.

#include <span>
#include <string>

#include "stats/stats.h"

namespace ppsearch::stats {

struct Figures {
  double input_tps = 0;
  double output_tps = 0;  // for a one-token workload it counts first tokens
  double request_rps = 0;
  // Requests/s meeting every [decision] SLA limit; the request throughput
  // when no limit is set (SampleMetrics::goodput_rps).
  double goodput_rps = 0;
  double ttft_mean_s = 0;
  double ttft_p50_s = 0;
  double ttft_p95_s = 0;
  double ttft_p99_s = 0;
  double e2e_p50_s = 0;
  double e2e_p99_s = 0;
  // Decode: some completed request generated a second token. The decode
  // figures are 0 without one.
  bool decode = false;
  double tpot_p50_s = 0;
  double tpot_p99_s = 0;
  double itl_p50_s = 0;
  double itl_p99_s = 0;
  // First tokens/s over requests sent/s, over the middle half of each
  // (stats.h); 0 unknown.
  double first_token_pace = 0;
  // Derived from the above by Derive, never measured on their own.
  double input_tps_per_gpu = 0;
  double output_tps_per_gpu = 0;  // output_tps / (pp x tp) GPUs
  // Throughput one user sees while decoding: 1 / tpot_p50_s, tokens/s; 0
  // without a TPOT.
  double output_tps_per_user = 0;
};

// A figure of Figures: its name (the key of every JSON and the stem of
// every CSV column that carries it), where it lives, and whether only a
// decode point has it.
struct FigureField {
  const char* name;
  double Figures::*member;
  bool decode_only = false;
  bool derived = false;  // set by Derive from the others
  // 0 means the sample could not tell (first_token_pace): a median over
  // repeats leaves such repeats out.
  bool zero_unknown = false;
};

// Every figure, in Figures' order.
std::span<const FigureField> FigureFields();
// The field of `member`; null for none.
const FigureField* FieldOf(double Figures::*member);

// Whether `member` is a time, in seconds (its name ends in "_s").
bool IsTime(double Figures::*member);
// The unit a file gives a time figure in.
enum class TimeUnit { kSeconds, kMilliseconds };
// The key of `member` in a file: its FigureFields name, a time's "_s"
// written "_ms" where the file gives it in milliseconds. `search --json`,
// `simulate --json` and results.csv name a point's figures so (summary's
// medians add "_median"): one name per figure.
std::string FigureKey(double Figures::*member, TimeUnit unit = TimeUnit::kSeconds);
// `value` of `member` in that unit.
double FigureIn(double value, TimeUnit unit);

// Sets the derived figures from the others, on `gpus` GPUs.
void Derive(Figures& f, int gpus);

// A sample's figures, on `gpus` GPUs (its world size: TP ranks per stage
// times stages; 0 leaves the per-GPU figures 0).
Figures FiguresOf(const SampleMetrics& m, int gpus);

}  // namespace ppsearch::stats

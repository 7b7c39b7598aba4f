#pragma once
// The charts of report.html and of `ppsearch simulate --html`, from the
// numbers the tables show: input TPS per layout and concurrency (repeats as
// dots, the median as a bar, the baseline outlined, the predicted value as a
// diamond with its interval as a whisker), TTFT p50 and p95, throughput against TTFT p50 with the
// Pareto-optimal points ringed, peak memory per PP stage against the GPU
// total and the decision's headroom limit, the simulator's time breakdown
// per stage as stacked bars, and, for decode, output throughput per GPU
// against throughput per user with the Pareto front ringed; for a
// disaggregated deployment, its TTFT's parts and each pool's load.

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "analysis/prediction.h"
#include "analysis/run.h"
#include "report/pools_section.h"

namespace ppsearch::report {

// Figure names (Block::Figure) and the ids of their svg elements.
inline constexpr const char* kFigureInputTps = "input-tps";
inline constexpr const char* kFigureTtft = "ttft";
inline constexpr const char* kFigureTradeoff = "tradeoff";
inline constexpr const char* kFigureDecodeTradeoff = "decode-tradeoff";
inline constexpr const char* kFigureMemory = "memory";
inline constexpr const char* kFigureBreakdown = "breakdown";

struct ChartPoint {
  spec::LayoutSpec layout;
  int concurrency = 0;
  double input_tps = 0;  // the median of the repeats, or the prediction
  // Unset where the point does not hold it (a replayed file of medians or an
  // import without TTFTs): no bar and no trade-off point, rather than one
  // drawn from a figure nobody measured.
  std::optional<double> ttft_p50_s, ttft_p95_s;
  std::vector<double> input_tps_repeats;  // measured samples; empty for a prediction
  std::vector<double> ttft_p50_repeats;
  std::optional<double> predicted_input_tps;
  std::optional<uncertainty::Interval> predicted_input_tps_interval{};
  // Decode points only: output tokens/s per GPU and per user (1 / TPOT p50),
  // and whether the point is on the Pareto front of the two.
  std::optional<double> output_tps_per_gpu, output_tps_per_user;
  bool decode_pareto = false;
  bool baseline = false;
  bool imported = false;
};

struct ChartMemory {
  spec::LayoutSpec layout;
  std::vector<double> stage_peak_mib;  // by pp_rank; one entry (the peak) without a rank map
  bool imported = false;
};

struct ChartInputs {
  bool measured = true;  // false: every value is a prediction (simulate)
  std::vector<ChartPoint> points;
  std::vector<ChartMemory> memory;
  std::optional<double> gpu_total_mib;
  double min_headroom_mib = 0;
  const analysis::RunPrediction* prediction =
      nullptr;                                       // breakdown; null or empty: no breakdown chart
  const evidence::Trajectory* trajectory = nullptr;  // an adaptive run's; null: none
  std::vector<PoolPoint> pools;  // a disaggregated deployment's load points; empty: none
};

// Sets decode_pareto on the decode points: decide::ParetoOptimal of output
// tokens/s per GPU (more) against TPOT p50 (less, i.e. more per user).
void MarkDecodePareto(std::vector<ChartPoint>& points);

ChartInputs ChartInputsFromRun(const analysis::RunAnalysis& a,
                               const analysis::RunPrediction& prediction);

// Figure name -> svg; a chart without data is left out.
std::map<std::string, std::string> RenderCharts(const ChartInputs& in);

}  // namespace ppsearch::report

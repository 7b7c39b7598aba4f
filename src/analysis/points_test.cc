#include "analysis/points.h"

#include <gtest/gtest.h>

#include "analysis/analysis_testing.h"
#include "evidence/point_columns.h"

namespace ppsearch::analysis {
namespace {

using testing::Layout;
using testing::MakeSample;

// Input TPS 128,000 / d for d = 8, 8.5, 7.5 s: 16,000, 15,058.82, 17,066.67;
// median 16,000, spread (17,066.67 - 15,058.82) / 16,000 = 0.125490.
// TTFT p50 = 4.5 d / 8: 4.5, 4.78125, 4.21875; median 4.5, spread 0.5625 / 4.5 = 0.125.
TEST(AggregatePoints, MediansAndSpreadsOverRepeats) {
  const spec::LayoutSpec l = Layout(8, 4, 4);
  std::vector<SampleAnalysis> samples = {MakeSample(l, 8, 1, 8.0), MakeSample(l, 8, 2, 8.5),
                                         MakeSample(l, 8, 3, 7.5, 0, 81000)};
  std::vector<PointSummary> points = AggregatePoints(samples, {l, Layout(4, 8, 4)}, {8, 16});
  ASSERT_EQ(points.size(), 1u);
  const PointSummary& p = points[0];
  EXPECT_EQ(p.repeats, 3);
  EXPECT_EQ(p.valid_repeats, 3);
  EXPECT_EQ(p.requests_completed, 8);
  EXPECT_EQ(p.requests_total, 8);
  EXPECT_NEAR(p.median.input_tps, 16000, 1e-6);
  EXPECT_NEAR(p.input_tps_spread, (128000 / 7.5 - 128000 / 8.5) / 16000, 1e-12);
  EXPECT_NEAR(p.input_tps_spread, 0.125490, 1e-6);
  EXPECT_NEAR(p.median.ttft_p50_s, 4.5, 1e-9);
  EXPECT_NEAR(p.ttft_p50_s_spread, 0.125, 1e-9);
  EXPECT_DOUBLE_EQ(*p.peak_gpu_mib, 81000);
  EXPECT_DOUBLE_EQ(*p.headroom_mib, 85651 - 81000);
}

// A repeat whose first-token pace is unknown (its requests all sent at
// once: MakeSample's) is left out of the pace's median: over [unknown,
// 0.25, unknown] the median is 0.25, the one repeat that could tell, not
// an unknown that no rule judges.
TEST(AggregatePoints, ARepeatThatCouldNotTellThePaceIsLeftOutOfItsMedian) {
  const spec::LayoutSpec l = Layout(8, 4, 4);
  std::vector<SampleAnalysis> samples = {MakeSample(l, 8, 1, 8.0), MakeSample(l, 8, 2, 8.0),
                                         MakeSample(l, 8, 3, 8.0)};
  ASSERT_EQ(samples[0].metrics.first_token_pace, 0);
  samples[1].metrics.first_token_pace = 0.25;
  EXPECT_DOUBLE_EQ(AggregatePoints(samples, {l}, {8})[0].median.first_token_pace, 0.25);
  samples[1].metrics.first_token_pace = 0;
  EXPECT_EQ(AggregatePoints(samples, {l}, {8})[0].median.first_token_pace, 0);
}

// A point whose samples were synthesized from a CSV of medians holds the
// figures they reproduce from the file (input TPS, what is derived from it,
// the TTFT percentiles the file holds); the rest are unknown, not the
// records' p99s. A repeat that holds less makes its median unknown too.
TEST(AggregatePoints, ASynthesizedPointHoldsOnlyTheFiguresOfItsFile) {
  const spec::LayoutSpec l = Layout(8, 4, 4);
  std::vector<SampleAnalysis> samples = {MakeSample(l, 8, 1, 8.0), MakeSample(l, 8, 2, 8.0)};
  for (SampleAnalysis& s : samples) {
    s.synthesized = true;
    s.figures_from_file = {"input_tps", "ttft_p50_s", "ttft_p95_s"};
  }
  using F = stats::Figures;
  auto known = [](const PointSummary& p, double F::*m) {
    return evidence::ValueOf(*evidence::ColumnOf(m), p).has_value();
  };
  const PointSummary p = AggregatePoints(samples, {l}, {8})[0];
  EXPECT_TRUE(known(p, &F::input_tps));
  EXPECT_TRUE(known(p, &F::ttft_p50_s));
  EXPECT_TRUE(known(p, &F::ttft_p95_s));
  EXPECT_FALSE(known(p, &F::ttft_p99_s));
  EXPECT_FALSE(known(p, &F::e2e_p99_s));
  EXPECT_FALSE(known(p, &F::goodput_rps));
  EXPECT_FALSE(SlaFigures(p).any());
  // A file without TTFT columns: its TTFTs were Little's law's, not its own.
  samples[1].figures_from_file = {"input_tps"};
  const PointSummary bare = AggregatePoints(samples, {l}, {8})[0];
  EXPECT_TRUE(known(bare, &F::input_tps));
  EXPECT_FALSE(known(bare, &F::ttft_p50_s));
  EXPECT_FALSE(known(bare, &F::ttft_p95_s));
  // Measured, every figure is held.
  for (SampleAnalysis& s : samples) s.synthesized = false;
  EXPECT_TRUE(known(AggregatePoints(samples, {l}, {8})[0], &F::ttft_p99_s));
}

// Decode medians over repeats; output TPS per GPU divides by pp x tp = 32.
TEST(AggregatePoints, DecodeMediansWhereRequestsGeneratedMoreThanOneToken) {
  const spec::LayoutSpec l = Layout(8, 4, 4);
  std::vector<SampleAnalysis> samples = {MakeSample(l, 8, 1, 8.0), MakeSample(l, 8, 2, 8.0),
                                         MakeSample(l, 8, 3, 8.0)};
  const double tpot_p50[] = {0.020, 0.030, 0.025}, out_tps[] = {3200, 6400, 4800};
  for (int i = 0; i < 3; ++i) {
    stats::SampleMetrics& m = samples[static_cast<size_t>(i)].metrics;
    m.tpot_requests = 8;
    m.output_tps = out_tps[i];
    m.tpot_s.p50 = tpot_p50[i];
    m.tpot_s.p99 = 2 * tpot_p50[i];
    m.itl_s.p99 = 3 * tpot_p50[i];
  }
  std::vector<PointSummary> points = AggregatePoints(samples, {l}, {8});
  ASSERT_EQ(points.size(), 1u);
  const PointSummary& p = points[0];
  EXPECT_TRUE(p.median.decode);
  EXPECT_DOUBLE_EQ(p.median.output_tps, 4800);
  EXPECT_DOUBLE_EQ(p.median.output_tps_per_gpu, 150);
  EXPECT_DOUBLE_EQ(p.median.tpot_p50_s, 0.025);
  EXPECT_DOUBLE_EQ(p.median.tpot_p99_s, 0.050);
  EXPECT_DOUBLE_EQ(p.median.itl_p99_s, 0.075);
  EXPECT_DOUBLE_EQ(p.median.output_tps_per_user, 1 / 0.025);
  // The SLA figures: medians of the repeats' p99s.
  const decide::SlaValues sla = SlaFigures(p);
  EXPECT_DOUBLE_EQ(*sla[decide::SlaMetric::kTpot], 0.050);
  EXPECT_DOUBLE_EQ(*sla[decide::SlaMetric::kItl], 0.075);
  EXPECT_DOUBLE_EQ(*sla[decide::SlaMetric::kTtft], p.median.ttft_p99_s);
  // One-token samples (EvenRecords) are prefill-only: no decode figures,
  // and no TPOT or ITL to check an SLA on; output TPS counts first tokens
  // (8 tokens in 8 s).
  const PointSummary prefill = AggregatePoints({MakeSample(l, 8, 1, 8.0)}, {l}, {8})[0];
  EXPECT_FALSE(prefill.median.decode);
  EXPECT_DOUBLE_EQ(prefill.median.output_tps, 1);
  EXPECT_FALSE(SlaFigures(prefill)[decide::SlaMetric::kTpot].has_value());
  // TTFTs and e2e latencies 1 ... 8 s: p99 7 + 0.93 = 7.93 s; goodput
  // without a limit is the request throughput, 8 / 8 s.
  EXPECT_NEAR(prefill.median.e2e_p99_s, 7.93, 1e-9);
  EXPECT_DOUBLE_EQ(prefill.median.goodput_rps, 1);
}

TEST(AggregatePoints, OnlyCompletedSamplesCountAndInvalidOnesAreNotValid) {
  const spec::LayoutSpec l = Layout(8, 4, 4);
  std::vector<SampleAnalysis> samples = {MakeSample(l, 8, 1, 8.0), MakeSample(l, 8, 2, 8.0, 2),
                                         MakeSample(l, 8, 3, 4.0)};
  samples[2].state = evidence::SampleState::kFailed;
  std::vector<PointSummary> points = AggregatePoints(samples, {l}, {8});
  ASSERT_EQ(points.size(), 1u);
  EXPECT_EQ(points[0].repeats, 2);
  EXPECT_EQ(points[0].valid_repeats, 1);
  EXPECT_EQ(points[0].requests_completed, 6);
}

TEST(AggregatePoints, ASampleWithImpossibleEvidenceIsInNoMedian) {
  const spec::LayoutSpec l = Layout(8, 4, 4);
  std::vector<SampleAnalysis> samples = {MakeSample(l, 8, 1, 8.0), MakeSample(l, 8, 2, 4.0)};
  samples[1].invalid_evidence.push_back(
      {"duplicate_request_id", "raw/pp8-tp4-ep4_c8_r2.jsonl", "8 records repeat"});
  std::vector<PointSummary> points = AggregatePoints(samples, {l}, {8});
  ASSERT_EQ(points.size(), 1u);
  EXPECT_EQ(points[0].repeats, 1);
  EXPECT_NEAR(points[0].median.input_tps, 16000, 1e-6);  // not the 32,000 of repeat 2
}

// Figures are over the requests that completed: a repeat with none measured
// no throughput or TTFT (not 0 tokens/s in 0 s), so it is in no median; a
// point none of whose repeats completed a request has no medians at all.
TEST(AggregatePoints, ARepeatInWhichNoRequestCompletedMeasuredNoFigure) {
  const spec::LayoutSpec l = Layout(8, 4, 4);
  std::vector<SampleAnalysis> samples = {MakeSample(l, 8, 1, 8.0), MakeSample(l, 8, 2, 8.0, 8),
                                         MakeSample(l, 8, 3, 8.5)};
  ASSERT_EQ(samples[1].metrics.requests_completed, 0);
  EXPECT_FALSE(samples[1].measured_figures());
  const PointSummary p = AggregatePoints(samples, {l}, {8})[0];
  EXPECT_EQ(p.repeats, 3);
  EXPECT_EQ(p.valid_repeats, 2);
  EXPECT_EQ(p.requests_completed, 0);  // the fewest of one repeat, as measured
  EXPECT_TRUE(evidence::HasMedians(p));
  const double median = (16000 + 128000 / 8.5) / 2;
  EXPECT_NEAR(p.median.input_tps, median, 1e-6);
  EXPECT_NEAR(p.input_tps_spread, (16000 - 128000 / 8.5) / median, 1e-12);

  std::vector<PointSummary> none =
      AggregatePoints({MakeSample(l, 8, 1, 8.0, 8), MakeSample(l, 8, 2, 8.0, 8)}, {l}, {8});
  ASSERT_EQ(none.size(), 1u);
  EXPECT_EQ(none[0].repeats, 2);
  EXPECT_FALSE(evidence::HasMedians(none[0]));
  EXPECT_FALSE(evidence::ValueOf(*evidence::ColumnOf(&stats::Figures::ttft_p50_s), none[0]));
  EXPECT_FALSE(evidence::ValueOf(*evidence::ColumnOf(&PointSummary::input_tps_spread), none[0]));
  EXPECT_TRUE(evidence::ValueOf(*evidence::ColumnOf(&PointSummary::repeats), none[0]));
  EXPECT_DOUBLE_EQ(*none[0].peak_gpu_mib, 80000);  // its memory was measured
  // Against a baseline it has no delta.
  PointSummary base = AggregatePoints({MakeSample(l, 8, 1, 8.0)}, {l}, {8})[0];
  base.layout = Layout(1, 32, 4);
  ApplyBaseline(none, {base}, base.layout);
  EXPECT_FALSE(none[0].input_tps_vs_baseline.has_value());
  EXPECT_FALSE(none[0].ttft_p50_vs_baseline.has_value());
}

TEST(ApplyBaseline, DeltasAtTheSameConcurrencyAndImportedRowsAreTheBaseline) {
  PointSummary base;
  base.layout = Layout(1, 32, 4);
  base.concurrency = 8;
  base.median.input_tps = 12800;
  base.median.ttft_p50_s = 5.0;
  base.imported = true;
  PointSummary mine = base;
  mine.imported = false;  // this run's PP1: compared with the import, not marked
  mine.median.input_tps = 16000;
  mine.median.ttft_p50_s = 4.5;
  PointSummary other = mine;
  other.layout = Layout(8, 4, 4);
  other.concurrency = 16;  // no baseline at C=16
  std::vector<PointSummary> points = {mine, other};
  std::vector<PointSummary> rows = {base};
  ApplyBaseline(points, rows, base.layout);
  ApplyBaseline(rows, rows, base.layout);
  EXPECT_TRUE(rows[0].is_baseline);
  EXPECT_FALSE(points[0].is_baseline);
  EXPECT_NEAR(*points[0].input_tps_vs_baseline, 0.25, 1e-12);
  EXPECT_NEAR(*points[0].ttft_p50_vs_baseline, -0.1, 1e-12);
  EXPECT_FALSE(points[1].input_tps_vs_baseline.has_value());
}

// PP2 on 2 nodes x 2 GPUs: node 0 is stage 0, node 1 stage 1. Stage peaks
// 71,000 and 75,000 MiB: spread 4,000.
TEST(AnalyseLayoutMemory, StagePeaksThroughTheRankMap) {
  const spec::LayoutSpec l = Layout(2, 2, 1);
  plan::LayoutPlan lp;
  lp.layout = l;
  for (int rank = 0; rank < 4; ++rank) {
    plan::RankPlacement r;
    r.rank = rank;
    r.node = rank / 2;
    r.local_gpu = rank % 2;
    r.pp_rank = rank / 2;
    lp.ranks.push_back(r);
  }
  lp.tp_groups = {{0, {0, 1}, {0}}, {1, {2, 3}, {1}}};
  SampleAnalysis s = MakeSample(l, 8, 1, 8.0);
  s.gpus = {{"601", 0, 0, 70000, 85651},
            {"601", 0, 1, 71000, 85651},
            {"602", 1, 0, 75000, 85651},
            {"602", 1, 1, 74000, 85651}};
  LayoutMemory m = AnalyseLayoutMemory(l, {s}, &lp);
  EXPECT_DOUBLE_EQ(*m.peak_gpu_mib, 75000);
  EXPECT_DOUBLE_EQ(*m.remaining_mib, 10651);
  EXPECT_DOUBLE_EQ(*m.headroom_mib, 10651);
  EXPECT_EQ(m.peak_where, "host 602 GPU 0 (stage 1)");
  ASSERT_EQ(m.stages.size(), 2u);
  EXPECT_DOUBLE_EQ(m.stages[0].peak_mib, 71000);
  EXPECT_DOUBLE_EQ(m.stages[1].peak_mib, 75000);
  EXPECT_DOUBLE_EQ(*m.stage_spread_mib, 4000);

  LayoutMemory no_plan = AnalyseLayoutMemory(l, {s}, nullptr);
  EXPECT_TRUE(no_plan.stages.empty());
  EXPECT_FALSE(no_plan.stage_spread_mib.has_value());
}

}  // namespace
}  // namespace ppsearch::analysis

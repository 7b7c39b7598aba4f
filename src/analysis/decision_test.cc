#include "analysis/decision.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "analysis/analysis_testing.h"

namespace ppsearch::analysis {
namespace {

using testing::Layout;
using testing::MakeSample;
using testing::SmallSweepSpec;

const spec::LayoutSpec kPp4 = Layout(4, 8, 4);
const spec::LayoutSpec kPp8 = Layout(8, 4, 4);

struct Inputs {
  spec::Spec spec;
  std::vector<SampleAnalysis> samples;
};

// PP4 at 128,000 tokens / 10 s = 12,800 TPS; PP8 at / 8 s = 16,000 TPS.
Inputs Healthy(std::vector<std::string> overrides = {}) {
  Inputs in{SmallSweepSpec(std::move(overrides)), {}};
  for (int r = 1; r <= 2; ++r) {
    in.samples.push_back(MakeSample(kPp4, 8, r, 10.0));
    in.samples.push_back(MakeSample(kPp8, 8, r, 8.0));
  }
  return in;
}

Decision DecideOn(const Inputs& in) {
  std::vector<PointSummary> points =
      AggregatePoints(in.samples, in.spec.sweep.layouts, in.spec.sweep.concurrency);
  std::vector<LayoutMemory> memory;
  for (const auto& l : in.spec.sweep.layouts)
    memory.push_back(AnalyseLayoutMemory(l, in.samples, nullptr));
  return Decide(in.spec, in.samples, points, memory, {"flag warning"});
}

SampleAnalysis& Find(Inputs& in, const spec::LayoutSpec& l, int r) {
  for (auto& s : in.samples)
    if (s.id.layout == l && s.id.repeat == r) return s;
  throw std::logic_error("no sample");
}

const LayoutVerdict& Verdict(const Decision& d, const spec::LayoutSpec& l) {
  for (const auto& v : d.verdicts)
    if (v.layout == l) return v;
  throw std::logic_error("no verdict");
}

TEST(Decide, PrimaryIsTheBestQualifyingLayoutAndFallbackTheRunnerUp) {
  Decision d = DecideOn(Healthy());
  ASSERT_TRUE(d.any_qualifies());
  EXPECT_EQ(*d.primary, kPp8);
  ASSERT_TRUE(d.fallback.has_value());
  EXPECT_EQ(*d.fallback, kPp4);
  EXPECT_DOUBLE_EQ(Verdict(d, kPp8).score, 1.0);
  EXPECT_DOUBLE_EQ(Verdict(d, kPp4).score, 0.8);
  EXPECT_EQ(d.primary_reason, "best input TPS and worst-rank headroom 5,651 MiB (tied for best)");
  EXPECT_EQ(d.fallback_reason,
            "runner-up: 20.00% less input TPS than PP8/TP4/EP4 (geometric mean over the "
            "concurrency levels), worst-rank headroom 5,651 MiB; a different PP/TP shape "
            "(PP4/TP8), so a problem specific to PP8/TP4/EP4 does not take both down");
  EXPECT_EQ(d.flags_not_to_carry_forward, std::vector<std::string>{"flag warning"});
}

TEST(Decide, TtftObjectivePrefersTheLowerTtft) {
  Inputs in = Healthy({"decision.objective=ttft_p50"});
  Decision d = DecideOn(in);
  EXPECT_EQ(*d.primary, kPp8);
  EXPECT_NEAR(Verdict(d, kPp4).score, 0.8, 1e-12);  // TTFT p50 4.5 s vs 5.625 s
}

// TTFT p99 over the 8 evenly spaced TTFTs of each repeat: PP4 (10 s)
// 8.75 + 0.93 x 1.25 = 9.9125 s, PP8 (8 s) 7 + 0.93 = 7.93 s; a limit of
// 9 s sits between them.
TEST(Decide, ALayoutMissingAnSlaAtALevelDoesNotQualify) {
  Decision d = DecideOn(Healthy({"decision.ttft_p99_s=9"}));
  ASSERT_TRUE(d.any_qualifies());
  EXPECT_EQ(*d.primary, kPp8);
  EXPECT_FALSE(d.fallback.has_value());
  const LayoutVerdict& pp4 = Verdict(d, kPp4);
  EXPECT_FALSE(pp4.qualifies);
  ASSERT_EQ(pp4.sla_misses.size(), 1u);
  EXPECT_EQ(pp4.sla_misses[0].concurrency, 8);
  EXPECT_EQ(pp4.sla_misses[0].miss.metric, decide::SlaMetric::kTtft);
  EXPECT_NEAR(pp4.sla_misses[0].miss.value_s, 9.9125, 1e-9);
  EXPECT_NEAR(pp4.sla_misses[0].miss.over(), 9.9125 / 9 - 1, 1e-9);
  ASSERT_EQ(pp4.exclusions.size(), 1u);
  EXPECT_EQ(pp4.exclusions[0].rfind("PP4/TP8/EP4: misses the SLA at C=8: TTFT p99 9.91", 0), 0u)
      << pp4.exclusions[0];
  EXPECT_NE(pp4.exclusions[0].find("> ttft_p99_s 9 s (+10.14%)"), std::string::npos)
      << pp4.exclusions[0];
  EXPECT_TRUE(Verdict(d, kPp8).sla_misses.empty());
  // Equal to the limit meets it.
  EXPECT_TRUE(DecideOn(Healthy({"decision.ttft_p99_s=9.9125"})).fallback.has_value());
}

// A limit on a figure the samples never measured (TPOT of one-token
// answers, here from a lengths-free spec that asks for more tokens than
// the records hold) excludes the layout rather than passing it.
TEST(Decide, AnSlaWithoutAMeasuredFigureExcludesRatherThanPasses) {
  Decision d = DecideOn(Healthy({"workload.output_tokens=64", "decision.tpot_p99_ms=50"}));
  EXPECT_FALSE(d.any_qualifies());
  const LayoutVerdict& pp8 = Verdict(d, kPp8);
  EXPECT_NE(std::find(pp8.exclusions.begin(), pp8.exclusions.end(),
                      "PP8/TP4/EP4: no TPOT p99 was measured at C=8 (no request generated a "
                      "second token), so tpot_p99_ms cannot be checked"),
            pp8.exclusions.end());
}

// Samples synthesized from a CSV of medians hold its input TPS and TTFT
// p50/p95 only: a p99 limit, an end-to-end limit and an output objective
// cannot be judged on them, so each excludes (the figures their records
// happen to show are not the file's); the input TPS objective still ranks.
TEST(Decide, FiguresASynthesizedSampleDoesNotHoldAreNotJudged) {
  auto synthesized = [](Inputs in) {
    for (SampleAnalysis& s : in.samples) {
      s.synthesized = true;
      s.figures_from_file = {"input_tps", "ttft_p50_s", "ttft_p95_s"};
    }
    return in;
  };
  Decision limits =
      DecideOn(synthesized(Healthy({"decision.ttft_p99_s=100", "decision.e2e_p99_s=100"})));
  EXPECT_FALSE(limits.any_qualifies());
  const LayoutVerdict& pp8 = Verdict(limits, kPp8);
  for (const char* line :
       {"PP8/TP4/EP4: no TTFT p99 was measured at C=8 (samples replayed from a file of medians "
        "do not reproduce it), so ttft_p99_s cannot be checked",
        "PP8/TP4/EP4: no E2E latency p99 was measured at C=8 (samples replayed from a file of "
        "medians do not reproduce it), so e2e_p99_s cannot be checked"})
    EXPECT_NE(std::find(pp8.exclusions.begin(), pp8.exclusions.end(), line), pp8.exclusions.end())
        << line;
  Decision output = DecideOn(synthesized(Healthy({"decision.objective=output_tps_per_gpu"})));
  EXPECT_FALSE(output.any_qualifies());
  EXPECT_EQ(
      Verdict(output, kPp4).exclusions,
      std::vector<std::string>{"PP4/TP8/EP4: no output TPS per GPU was measured at C=8 "
                               "(samples replayed from a file of medians do not reproduce "
                               "it), so it cannot be ranked by objective output_tps_per_gpu"});
  Decision input = DecideOn(synthesized(Healthy()));
  ASSERT_TRUE(input.any_qualifies());
  EXPECT_EQ(*input.primary, kPp8);
  // Measured, the same records are judged on every figure.
  EXPECT_TRUE(
      DecideOn(Healthy({"decision.ttft_p99_s=100", "decision.e2e_p99_s=100"})).any_qualifies());
}

// An output objective on a workload whose requests generated one token
// each has nothing to rank by.
TEST(Decide, AnOutputObjectiveWithoutDecodeExcludes) {
  Decision d = DecideOn(Healthy({"decision.objective=output_tps"}));
  EXPECT_FALSE(d.any_qualifies());
  EXPECT_EQ(Verdict(d, kPp8).exclusions,
            std::vector<std::string>{"PP8/TP4/EP4: no output TPS was measured at C=8 (no request "
                                     "generated a second token), so it cannot be ranked by "
                                     "objective output_tps"});
}

TEST(Decide, GoodputObjectiveRanksByRequestsMeetingTheSla) {
  // No limit: goodput is the request throughput, 8 / 10 s against 8 / 8 s.
  Decision d = DecideOn(Healthy({"decision.objective=goodput"}));
  EXPECT_EQ(*d.primary, kPp8);
  EXPECT_NEAR(Verdict(d, kPp4).score, 0.8, 1e-12);
  EXPECT_EQ(d.primary_reason.rfind("best goodput", 0), 0u) << d.primary_reason;
  EXPECT_EQ(d.fallback_reason.rfind("runner-up: 20.00% less goodput than PP8/TP4/EP4", 0), 0u)
      << d.fallback_reason;
}

TEST(Decide, ReasonsNameHeadroomAgainstTheOtherQualifyingLayouts) {
  Inputs in = Healthy();
  Find(in, kPp4, 1) = MakeSample(kPp4, 8, 1, 10.0, 0, /*used_mib=*/75000);
  Find(in, kPp4, 2) = MakeSample(kPp4, 8, 2, 10.0, 0, /*used_mib=*/75000);
  Decision roomier_fallback = DecideOn(in);
  EXPECT_EQ(roomier_fallback.primary_reason,
            "best input TPS with worst-rank headroom 5,651 MiB (PP4/TP8/EP4 keeps 10,651 MiB)");
  Find(in, kPp8, 1) = MakeSample(kPp8, 8, 1, 8.0, 0, /*used_mib=*/70000);
  Find(in, kPp8, 2) = MakeSample(kPp8, 8, 2, 8.0, 0, /*used_mib=*/70000);
  EXPECT_EQ(DecideOn(in).primary_reason,
            "best input TPS and best worst-rank headroom (15,651 MiB)");
}

TEST(Decide, RepeatSpreadAboveTheLimitExcludes) {
  Inputs in = Healthy();
  in.samples[3] = MakeSample(kPp8, 8, 2, 9.0);  // 14,222 vs 16,000 TPS
  Decision d = DecideOn(in);
  EXPECT_EQ(*d.primary, kPp4);
  EXPECT_FALSE(d.fallback.has_value());
  ASSERT_EQ(Verdict(d, kPp8).exclusions.size(), 1u);
  EXPECT_EQ(Verdict(d, kPp8).exclusions[0],
            "PP8/TP4/EP4: input TPS varies by 11.76% across repeats at C=8 (max_repeat_spread "
            "5.00%)");
  EXPECT_EQ(d.primary_reason,
            "the only layout that qualifies; best input TPS with worst-rank headroom 5,651 MiB");
}

// In an open loop each repeat's own arrivals set the spread, so the same
// repeats that exclude in a closed loop are shown, not judged.
TEST(Decide, RepeatSpreadIsNotJudgedInAnOpenLoop) {
  Inputs in = Healthy();
  in.samples[3] = MakeSample(kPp8, 8, 2, 9.0);  // 14,222 vs 16,000 TPS
  in.spec.workload.request_rate = 0.5;
  Decision d = DecideOn(in);
  EXPECT_TRUE(Verdict(d, kPp8).exclusions.empty());
  EXPECT_TRUE(Verdict(d, kPp8).qualifies);
  ASSERT_TRUE(d.fallback.has_value());
}

// A sample whose 8 requests ran one after another, each for a tenth of
// `duration_s`: what a server that keeps one request in flight at a time
// leaves in an open loop that sent them all at once.
SampleAnalysis OneAtATime(const spec::LayoutSpec& layout, int repeat, double duration_s) {
  SampleInputs in;
  in.id = {layout, 8, repeat};
  in.records = testing::EvenRecords(8, 16000, duration_s);
  for (size_t i = 0; i < in.records.size(); ++i) {
    workload::RequestRecord& r = in.records[i];
    r.send_ns = static_cast<int64_t>(static_cast<double>(i) * duration_s / 8 * 1e9);
  }
  in.requests_expected = 8;
  in.gpu = testing::FlatGpus(4, 8, 80000);
  return AnalyseSample(in);
}

// Sent at 100 requests/s, 8 requests that each take 1.25 s complete at
// about 6 requests/s when the server keeps up (8 / (0.08 s + 1.25 s)); PP8
// completed 0.8: it fell behind. No more requests than the cap of 8: none
// waited for a slot, they queued in the server.
TEST(Decide, AnOpenLoopLayoutThatFellBehindItsRateExcludes) {
  Inputs in = Healthy();
  in.spec.workload.request_rate = 100;
  Find(in, kPp8, 1) = OneAtATime(kPp8, 1, 10.0);
  Find(in, kPp8, 2) = OneAtATime(kPp8, 2, 10.0);
  Decision d = DecideOn(in);
  ASSERT_EQ(Verdict(d, kPp8).exclusions.size(), 1u);
  EXPECT_EQ(Verdict(d, kPp8).exclusions[0],
            "PP8/TP4/EP4: fell behind the offered 100.00 requests/s at C<=8: it completed 0.80 "
            "requests/s, where keeping up completes about 6.02 (8 requests over their sends and "
            "an end-to-end p50 of 1.25 s); its requests queued in the server");
  EXPECT_TRUE(Verdict(d, kPp4).qualifies) << "all sent at once, done in 10 s: it kept up";
  in.spec.workload.request_rate = 0;  // a closed loop has no rate to keep up with
  EXPECT_TRUE(DecideOn(in).verdicts.size() == 2 && Verdict(DecideOn(in), kPp8).qualifies);
}

// Sent every 0.1 s, 8 requests that a server serves one at a time, each
// in 0.5 s: they queue in the server, and each one's TTFT counts its wait.
// The completions rule credits the queue as long answers (it completed 2
// requests/s, where keeping up completes about 2.96, 1.48 less the sends'
// spread), and the cap of 8 never fills. Their first tokens came at a fifth
// of the sends' pace.
SampleAnalysis QueuedInTheServer(const spec::LayoutSpec& layout, int repeat) {
  SampleInputs in;
  in.id = {layout, 8, repeat};
  in.records = testing::EvenRecords(8, 16000, 4.0);
  for (size_t i = 0; i < in.records.size(); ++i)
    in.records[i].send_ns = static_cast<int64_t>(i) * 100'000'000;
  in.requests_expected = 8;
  in.gpu = testing::FlatGpus(4, 8, 80000);
  return AnalyseSample(in);
}

TEST(Decide, AnOpenLoopLayoutWhoseRequestsQueuedInTheServerExcludes) {
  Inputs in = Healthy();
  in.spec.workload.request_rate = 10;
  Find(in, kPp8, 1) = QueuedInTheServer(kPp8, 1);
  Find(in, kPp8, 2) = QueuedInTheServer(kPp8, 2);
  Decision d = DecideOn(in);
  ASSERT_EQ(Verdict(d, kPp8).exclusions.size(), 1u);
  EXPECT_EQ(Verdict(d, kPp8).exclusions[0],
            "PP8/TP4/EP4: fell behind the offered 10.00 requests/s at C<=8: its requests queued "
            "in the server, the first tokens of the middle half of the sample coming at a pace "
            "of 0.20 of the sends' (keeping up is at least 0.50 with 8 requests); its TTFT grew "
            "with the queue");
  EXPECT_TRUE(Verdict(d, kPp4).qualifies) << "all sent at once: no pace to keep";
}

TEST(Decide, HeadroomBelowTheMinimumExcludes) {
  Inputs in = Healthy();
  Find(in, kPp8, 2) = MakeSample(kPp8, 8, 2, 8.0, 0, /*used_mib=*/84651);
  Decision d = DecideOn(in);
  EXPECT_EQ(*d.primary, kPp4);
  ASSERT_EQ(Verdict(d, kPp8).exclusions.size(), 1u);
  EXPECT_EQ(Verdict(d, kPp8).exclusions[0],
            "PP8/TP4/EP4: worst-rank headroom 1,000 MiB at host 601 GPU 0 is below "
            "min_headroom_mib 2,048 MiB");
}

TEST(Decide, ASampleThatLostRequestsExcludesItsLayout) {
  Inputs in = Healthy();
  Find(in, kPp8, 2) = MakeSample(kPp8, 8, 2, 8.0, /*errors=*/3);
  Decision d = DecideOn(in);
  EXPECT_EQ(*d.primary, kPp4);
  EXPECT_EQ(Verdict(d, kPp8).exclusions.front(),
            "PP8/TP4/EP4: sample pp8-tp4-ep4_c8_r2 completed 5/8 requests (3 request errors)");
}

TEST(Decide, AnOomLineExcludesUnderExcludeAndIsNotedUnderWarn) {
  const std::string oom =
      "[2026-01-01 00:00:00] Load weight end.\n"
      "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.\n";
  Inputs in = Healthy();
  Find(in, kPp4, 1) = MakeSample(kPp4, 8, 1, 10.0, 0, 80000, oom);
  Decision d = DecideOn(in);
  EXPECT_EQ(*d.primary, kPp8);
  EXPECT_FALSE(d.fallback.has_value());
  EXPECT_EQ(Verdict(d, kPp4).exclusions,
            std::vector<std::string>{
                "PP4/TP8/EP4: CUDA out of memory in service/pp4-tp8-ep4_c8_r1/601.log:2"});

  Inputs warn = Healthy({"decision.failure_policy=warn"});
  Find(warn, kPp4, 1) = MakeSample(kPp4, 8, 1, 10.0, 0, 80000, oom);
  Decision kept = DecideOn(warn);
  EXPECT_TRUE(Verdict(kept, kPp4).qualifies);
  EXPECT_EQ(Verdict(kept, kPp4).notes.size(), 1u);
  EXPECT_EQ(*kept.fallback, kPp4);
}

TEST(Decide, MissingAndFailedSamplesExclude) {
  Inputs in = Healthy();
  in.samples.erase(in.samples.begin());  // pp4 r1 never ran
  Find(in, kPp8, 1).state = evidence::SampleState::kFailed;
  Decision d = DecideOn(in);
  EXPECT_FALSE(d.any_qualifies());
  EXPECT_EQ(d.none_reason, "no layout meets the decision policy");
  EXPECT_EQ(Verdict(d, kPp4).exclusions.front(),
            "PP4/TP8/EP4: sample pp4-tp8-ep4_c8_r1 was not run");
  EXPECT_EQ(Verdict(d, kPp8).exclusions.front(),
            "PP8/TP4/EP4: sample pp8-tp4-ep4_c8_r1 failed (manifest)");
}

}  // namespace
}  // namespace ppsearch::analysis

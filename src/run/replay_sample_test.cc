#include "run/replay_sample.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "analysis/analysis_testing.h"
#include "analysis/run.h"
#include "evidence/bench_summary.h"
#include "evidence/evidence.h"
#include "evidence/point_columns.h"
#include "inputs/search_inputs.h"
#include "run/replay_medians.h"
#include "run/runner.h"
#include "run/sim_sample.h"
#include "stats/stats.h"
#include "util/files.h"
#include "util/sha256.h"

namespace ppsearch::run {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

// The example search, small: PP4/TP8/EP4 and PP8/TP4/EP4 at C=8, 2 repeats
// of 8 requests, into a scratch results directory.
class ReplayTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("ppsearch_replay_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::vector<std::string> Overrides(std::vector<std::string> extra = {}) {
    std::vector<std::string> o = analysis::testing::SmallSweepOverrides();
    o.push_back("experiment.results_dir='" + (dir_ / "results").string() + "'");
    o.insert(o.end(), extra.begin(), extra.end());
    return o;
  }

  inputs::SearchInputs Inputs(std::vector<std::string> extra = {}) {
    Result<spec::Spec> spec =
        spec::LoadSpec(analysis::testing::ExampleSpecPath(), Overrides(extra));
    EXPECT_TRUE(spec.ok()) << spec.error().message;
    Result<inputs::SearchInputs> in = inputs::LoadSearchInputs(*spec);
    EXPECT_TRUE(in.ok()) << in.error().message;
    return *in;
  }

  // Runs the sweep of `in` through `engine` into results/<run_id>.
  std::string Run(const inputs::SearchInputs& in, SampleEngine& engine, const std::string& run_id,
                  std::vector<std::string> extra = {}, const std::string& resume = "") {
    RunOptions o;
    o.spec_path = analysis::testing::ExampleSpecPath();
    o.overrides = Overrides(extra);
    o.run_id = run_id;
    o.resume_dir = resume;
    Result<RunOutcome> out = RunSamples(o, in.spec, in.plan, engine, [](const RunProgress&) {});
    EXPECT_TRUE(out.ok()) << out.error().message;
    return out.ok() ? out->run_dir : "";
  }

  std::string SimRun(const inputs::SearchInputs& in, std::vector<std::string> extra = {}) {
    SimSampleEngine sim(in, cost::Calibration{});
    return Run(in, sim, "sim", extra);
  }

  analysis::RunAnalysis Analyse(const std::string& run_dir) {
    Result<analysis::RunAnalysis> a = analysis::AnalyseRun(run_dir);
    EXPECT_TRUE(a.ok()) << a.error().message;
    return a.ok() ? std::move(a).value() : analysis::RunAnalysis{};
  }

  // Why MakeReplayEngine refuses `path` for the sweep of `in`; "" when it does not.
  static std::string Refusal(const inputs::SearchInputs& in, const std::string& path) {
    Result<std::unique_ptr<SampleEngine>> replay = MakeReplayEngine(in.spec, in.plan, path);
    return replay.ok() ? std::string() : replay.error().message;
  }

  std::string Write(const std::string& name, const std::string& text) {
    const std::string path = (dir_ / name).string();
    EXPECT_TRUE(WriteFileAtomic(path, text).ok());
    return path;
  }

  fs::path dir_;
};

// A source that ran another image or workload cannot stand for this spec's
// samples: its report would name a setup they never ran. The decision and
// the sweep's repeats are the replay's to change.
TEST_F(ReplayTest, ASourceOfAnotherSetupIsRefusedNamingEachDifference) {
  const std::string source = SimRun(Inputs());
  const inputs::SearchInputs other =
      Inputs({"engine.image='local/sglang:other'", "workload.input_tokens=8000"});
  Result<std::unique_ptr<SampleEngine>> replay = MakeReplayEngine(other.spec, other.plan, source);
  ASSERT_FALSE(replay.ok());
  EXPECT_THAT(replay.error().message,
              HasSubstr(source + " ran another setup than this spec in what changes results"));
  EXPECT_THAT(replay.error().message,
              HasSubstr("\n  engine.image: local/sglang:kimi-k3-sm120-flashinfer-mxfp4-phase5 "
                        "there, local/sglang:other here ("));
  EXPECT_THAT(replay.error().message, HasSubstr("\n  workload.input_tokens: "));
  const inputs::SearchInputs stricter = Inputs({"decision.max_repeat_spread=0.01"});
  EXPECT_TRUE(MakeReplayEngine(stricter.spec, stricter.plan, source).ok());
}

TEST_F(ReplayTest, ReplayOfASimulatedRunReproducesItsDecision) {
  const inputs::SearchInputs in = Inputs();
  const std::string source = SimRun(in);
  Result<std::unique_ptr<SampleEngine>> replay = MakeReplayEngine(in.spec, in.plan, source);
  ASSERT_TRUE(replay.ok()) << replay.error().message;
  const std::string replayed = Run(in, **replay, "replay");

  const analysis::RunAnalysis a = Analyse(source), b = Analyse(replayed);
  ASSERT_TRUE(a.decision.primary);
  ASSERT_TRUE(b.decision.primary);
  EXPECT_EQ(b.decision.primary->Label(), a.decision.primary->Label());
  EXPECT_EQ(b.decision.primary_reason, a.decision.primary_reason);
  EXPECT_EQ(b.decision.fallback_reason, a.decision.fallback_reason);
  ASSERT_EQ(b.points.size(), a.points.size());
  for (size_t i = 0; i < a.points.size(); ++i) {
    EXPECT_EQ(b.points[i].median.input_tps, a.points[i].median.input_tps) << i;
    EXPECT_EQ(b.points[i].input_tps_spread, a.points[i].input_tps_spread) << i;
    EXPECT_EQ(b.points[i].median.ttft_p50_s, a.points[i].median.ttft_p50_s) << i;
    EXPECT_EQ(b.points[i].headroom_mib, a.points[i].headroom_mib) << i;
  }
  // The records, logs and snapshots are the source's own.
  const evidence::SampleId id{in.spec.sweep.layouts[1], 8, 2};
  for (const std::string& rel : {"raw/" + id.str() + ".jsonl", "gpu/" + id.str() + "/601.csv",
                                 "service/" + id.str() + "/604.log"})
    EXPECT_EQ(*ReadFile(replayed + "/" + rel), *ReadFile(source + "/" + rel)) << rel;
  EXPECT_EQ(b.evidence.engine, "replay");
  EXPECT_TRUE(b.evidence.simulated);  // the source's samples were predictions
  ASSERT_TRUE(b.evidence.metadata.replay);
  EXPECT_EQ(b.evidence.metadata.replay->kind, "run");
  EXPECT_EQ(b.evidence.metadata.replay->path, source);
  EXPECT_EQ(b.evidence.metadata.replay->sha256, *RunDirectoryDigest(source));
}

TEST_F(ReplayTest, ARunWithoutASampleOfTheSweepIsRefusedNamingEach) {
  const inputs::SearchInputs one = Inputs({"sweep.repeats=1"});
  const std::string source = SimRun(one);
  EXPECT_EQ(Refusal(Inputs(), source),
            source +
                " has no completed or failed sample for 2 of this sweep's samples (in its "
                "manifest.jsonl, with raw/ and bench/ files):\n"
                "  PP4/TP8/EP4 at C=8 repeat 2 (pp4-tp8-ep4_c8_r2)\n"
                "  PP8/TP4/EP4 at C=8 repeat 2 (pp8-tp4-ep4_c8_r2)");
}

// What the source's own report finds wrong with a sample stops the replay
// before its first sample, each problem named: a log folder gone, a link
// where a log belongs, a first token before its send.
TEST_F(ReplayTest, ASourceWhoseReportFindsItsEvidenceWantingIsRefusedBeforeAnySample) {
  const inputs::SearchInputs in = Inputs();
  const std::string source = SimRun(in);
  EXPECT_EQ(Refusal(in, source), "");
  const evidence::SampleId first{in.spec.sweep.layouts[0], 8, 1};
  const evidence::SampleId second{in.spec.sweep.layouts[1], 8, 2};
  fs::remove_all(source + "/service/" + first.str());
  const std::string log = source + "/service/" + second.str() + "/602.log";
  fs::remove(log);
  fs::create_symlink("/etc/hostname", log);
  const std::string raw = source + "/raw/" + second.str() + ".jsonl";
  Result<std::vector<workload::RequestRecord>> records = evidence::ReadRecords(raw);
  ASSERT_TRUE(records.ok());
  workload::RequestRecord& last = records->back();  // a negative TTFT
  last.send_ns = 10;
  last.first_token_ns = 5;
  ASSERT_TRUE(WriteFileAtomic(raw, evidence::RecordsToJsonl(*records)).ok());
  const std::string why = Refusal(in, source);
  EXPECT_THAT(
      why,
      HasSubstr(source + ": 2 of this sweep's samples have evidence that run's own report "
                         "names as missing or impossible; a replay would hand it on as whole:"));
  EXPECT_THAT(why, HasSubstr("\n  service/" + first.str() +
                             "/601.log is missing: node 601's failures could not be audited"));
  EXPECT_THAT(why, HasSubstr("service/" + second.str() + "/602.log: not_a_regular_file"));
  EXPECT_THAT(why, HasSubstr("raw/" + second.str() + ".jsonl: first_token_outside_request"));
}

// Rows no GPU could have measured, or whose samples would be impossible
// evidence, are refused before the first sample, at their line.
TEST_F(ReplayTest, MedianFiguresNoSampleCouldHaveAreRefusedAtTheirLine) {
  const inputs::SearchInputs in = Inputs();
  const std::string header =
      "pp,tp,ep,concurrency,repeats,input_tps_median,input_tps_spread,ttft_p50_s_median,"
      "peak_gpu_mib,gpu_total_mib\n4,8,4,8,3,4100,0.02,3.5,80000,97871\n";
  const std::string fast = Write("fast.csv", header + "8,4,4,8,3,1e12,0.02,1e-9,82000,97871\n");
  EXPECT_THAT(Refusal(in, fast),
              HasSubstr(fast + ":3: PP8/TP4/EP4 at C=8: input_tps_median 1e+12 is not in (0, "));
  const std::string spread = Write("spread.csv", header + "8,4,4,8,3,3900,-0.5,3.9,82000,97871\n");
  EXPECT_EQ(Refusal(in, spread),
            spread + ":3: column 'input_tps_spread': expected a number in [0, 1e+12], got -0.5");
  const std::string peak = Write("peak.csv", header + "8,4,4,8,3,3900,0.02,3.9,99000,97871\n");
  // The reader refuses it, before any synthesis could make a snapshot of it.
  EXPECT_EQ(Refusal(in, peak), peak +
                                   ":3: column 'peak_gpu_mib' (99000) is above column "
                                   "'gpu_total_mib' (97871); expected at most it");
}

// Two layouts with spread and memory, as a run's summary.csv has them.
constexpr const char* kMedians =
    "pp,tp,ep,concurrency,repeats,input_tps_median,input_tps_spread,ttft_p50_s_median,"
    "ttft_p95_s_median,peak_gpu_mib,gpu_total_mib\n"
    "4,8,4,8,3,4100,0.02,3.5,5.25,80000,97871\n"
    "8,4,4,8,3,3900,0.02,3.9,5.5,82000,97871\n";

TEST_F(ReplayTest, ACsvOfMediansGivesItsMediansWithinItsNoise) {
  const inputs::SearchInputs in = Inputs({"sweep.repeats=3"});
  const std::string csv = Write("medians.csv", kMedians);
  Result<std::unique_ptr<SampleEngine>> replay = MakeReplayEngine(in.spec, in.plan, csv);
  ASSERT_TRUE(replay.ok()) << replay.error().message;
  EXPECT_FALSE((*replay)->simulated());
  const analysis::RunAnalysis a = Analyse(Run(in, **replay, "csv", {"sweep.repeats=3"}));
  ASSERT_EQ(a.points.size(), 2u);
  const double file_tps[] = {4100, 3900}, file_p50[] = {3.5, 3.9};
  for (size_t i = 0; i < 2; ++i) {
    const analysis::PointSummary& p = a.points[i];
    EXPECT_EQ(p.valid_repeats, 3);
    // A spread of 2% over 3 repeats is a cv of about 1.15%: medians within 4%.
    EXPECT_NEAR(p.median.input_tps / file_tps[i], 1, 0.04) << i;
    EXPECT_NEAR(p.median.ttft_p50_s / file_p50[i], 1, 0.04) << i;
    EXPECT_GT(p.input_tps_spread, 0) << "the repeats carry the file's noise";
    ASSERT_TRUE(p.headroom_mib);
    EXPECT_EQ(*p.headroom_mib, 97871 - (i == 0 ? 80000 : 82000));
  }
  // Each repeat is exactly the file's figure stretched by its recorded factor.
  for (const analysis::SampleAnalysis& s : a.evidence.samples) {
    const Result<evidence::BenchSummary> bench =
        evidence::ReadBenchSummary(evidence::RunPaths{a.evidence.run_dir}, s.id);
    ASSERT_TRUE(bench.ok()) << bench.error().message;
    ASSERT_TRUE(bench->noise_factor && bench->synthesis);
    const double f = *bench->noise_factor;
    const double tps = s.id.layout.pp == 4 ? 4100 : 3900;
    EXPECT_NEAR(s.metrics.input_tps * f / tps, 1, 1e-6) << s.name;
    EXPECT_NE(f, 1.0);
    EXPECT_THAT(bench->synthesis->noise_source, HasSubstr("0.02 over 3 repeats"));
    // The recorded spread is the noise: the expected range of 3 normal
    // draws is 2 x 0.8694 sigma (Blom: the normal quantile at
    // 2.625 / 3.25), so a 2% range is a cv of 1.15%.
    EXPECT_NEAR(bench->synthesis->noise_cv, 0.02 / (2 * 0.8694), 2e-5);
  }
  ASSERT_TRUE(a.decision.primary);
  EXPECT_EQ(a.decision.primary->pp, 4);
  ASSERT_TRUE(a.evidence.metadata.replay);
  EXPECT_EQ(a.evidence.metadata.replay->kind, "medians");
  EXPECT_EQ(a.evidence.metadata.replay->sha256, Sha256Hex(kMedians));
}

// The file holds no TTFT p99 and no end-to-end latency: limits on them are
// not passed on what the synthesized records happen to show (a p99 flat at
// the p95, one-token latencies), and summary.csv leaves them empty.
// A CSV of medians holds no p99 of repeats and no end-to-end latency: a
// limit on one, or an objective the file lacks, would exclude every layout
// whatever the file says, so the replay is refused before any sample.
TEST_F(ReplayTest, LimitsOrAnObjectiveTheCsvDoesNotHoldAreRefusedBeforeAnySample) {
  const std::string csv = Write("medians.csv", kMedians);
  const inputs::SearchInputs limited =
      Inputs({"decision.ttft_p99_s=1000", "decision.e2e_p99_s=1000"});
  Result<std::unique_ptr<SampleEngine>> replay = MakeReplayEngine(limited.spec, limited.plan, csv);
  ASSERT_FALSE(replay.ok());
  EXPECT_THAT(
      replay.error().message,
      HasSubstr("key 'decision.ttft_p99_s': a limit on TTFT p99 cannot be judged on " + csv +
                ", whose replayed samples hold input_tps, ttft_p50_s, ttft_p95_s "
                "at most\n"));
  EXPECT_THAT(replay.error().message,
              HasSubstr("key 'decision.e2e_p99_s': a limit on E2E latency p99 cannot be judged"));
  EXPECT_THAT(replay.error().message,
              HasSubstr("\nreplay a run directory, or judge by what the file holds"));
  // A TTFT objective on a file with TTFTs replays; on one without, it is refused.
  EXPECT_TRUE(MakeReplayEngine(Inputs({"decision.objective='ttft_p50'"}).spec,
                               Inputs({"decision.objective='ttft_p50'"}).plan, csv)
                  .ok());
  const std::string no_ttft = Write("no-ttft.csv",
                                    "pp,tp,ep,concurrency,input_tps_median\n"
                                    "4,8,4,8,4100\n8,4,4,8,3900\n");
  const inputs::SearchInputs by_ttft = Inputs({"decision.objective='ttft_p50'"});
  replay = MakeReplayEngine(by_ttft.spec, by_ttft.plan, no_ttft);
  ASSERT_FALSE(replay.ok());
  EXPECT_THAT(
      replay.error().message,
      HasSubstr("key 'decision.objective': objective ttft_p50 ranks by TTFT p50, which no row of " +
                no_ttft +
                " holds (its replayed samples hold input_tps at most), "
                "so no layout could be ranked"));
  // A row without it excludes its own layout only: the replay goes on.
  const std::string one_ttft = Write("one-ttft.csv",
                                     "pp,tp,ep,concurrency,input_tps_median,ttft_p50_s_median\n"
                                     "4,8,4,8,4100,3.5\n8,4,4,8,3900,\n");
  EXPECT_TRUE(MakeReplayEngine(by_ttft.spec, by_ttft.plan, one_ttft).ok());
}

// What a synthesized sample does not reproduce is unknown in its points'
// medians (results.csv and checks.json: RunE2e's replay of a CSV).
TEST_F(ReplayTest, FiguresTheCsvDoesNotHoldAreUnknownInItsPoints) {
  const inputs::SearchInputs in = Inputs();
  const std::string csv = Write("medians.csv", kMedians);
  Result<std::unique_ptr<SampleEngine>> replay = MakeReplayEngine(in.spec, in.plan, csv);
  ASSERT_TRUE(replay.ok()) << replay.error().message;
  const analysis::RunAnalysis a = Analyse(Run(in, **replay, "csv"));
  // Unknown, as summary.csv and summary.json write them (ValueOf).
  ASSERT_FALSE(a.points.empty());
  for (const analysis::PointSummary& p : a.points) {
    using F = stats::Figures;
    auto known = [&](double F::*m) { return evidence::ValueOf(*evidence::ColumnOf(m), p); };
    EXPECT_TRUE(known(&F::input_tps));
    EXPECT_TRUE(known(&F::ttft_p95_s));
    EXPECT_FALSE(known(&F::ttft_p99_s));
    EXPECT_FALSE(known(&F::e2e_p99_s));
  }
}

TEST_F(ReplayTest, WithoutPeakMemoryNoSnapshotIsWrittenAndTheLayoutIsExcluded) {
  const inputs::SearchInputs in = Inputs();
  const std::string csv = Write("medians.csv",
                                "pp,tp,ep,concurrency,input_tps_median\n"
                                "4,8,4,8,4100\n8,4,4,8,3900\n");
  Result<std::unique_ptr<SampleEngine>> replay = MakeReplayEngine(in.spec, in.plan, csv);
  ASSERT_TRUE(replay.ok()) << replay.error().message;
  const analysis::RunAnalysis a = Analyse(Run(in, **replay, "csv"));
  EXPECT_FALSE(fs::exists(dir_ / "results/csv/gpu"));
  EXPECT_FALSE(a.decision.primary);
  ASSERT_FALSE(a.decision.verdicts.empty());
  EXPECT_THAT(a.decision.verdicts[0].exclusions,
              ::testing::Contains(HasSubstr("no GPU memory snapshot")));
  // No spread in the file: the spec's noise, said so.
  const Result<evidence::BenchSummary> bench = evidence::ReadBenchSummary(
      evidence::RunPaths{a.evidence.run_dir}, {in.spec.sweep.layouts[0], 8, 1});
  ASSERT_TRUE(bench.ok()) << bench.error().message;
  ASSERT_TRUE(bench->synthesis);
  EXPECT_THAT(bench->synthesis->noise_source, HasSubstr("[sim] noise_cv"));
  EXPECT_EQ(bench->synthesis->noise_cv, in.spec.sim.noise_cv);
  // No TTFT column: the records' TTFTs are Little's law's, so the points
  // hold no TTFT.
  EXPECT_EQ(bench->synthesis->figures_from_file, std::vector<std::string>{"input_tps"});
  ASSERT_FALSE(a.points.empty());
  EXPECT_FALSE(evidence::ValueOf(*evidence::ColumnOf(&stats::Figures::ttft_p50_s), a.points[0]));
  EXPECT_TRUE(evidence::ValueOf(*evidence::ColumnOf(&stats::Figures::input_tps), a.points[0]));
}

TEST_F(ReplayTest, APointMissingFromTheCsvIsRefusedNamingItAndTheFile) {
  const inputs::SearchInputs in = Inputs({"sweep.concurrency=[8,16]"});
  const std::string csv = Write("medians.csv", kMedians);
  EXPECT_EQ(Refusal(in, csv),
            csv +
                " has no row (pp, tp, ep, concurrency) for 2 of this sweep's points:\n"
                "  PP4/TP8/EP4 at C=16\n"
                "  PP8/TP4/EP4 at C=16");
}

TEST_F(ReplayTest, AHostileCsvIsRefusedAtItsLine) {
  const inputs::SearchInputs in = Inputs();
  auto error = [&](const std::string& rows) {
    const std::string csv = Write("bad.csv", "pp,tp,ep,concurrency,input_tps_median\n" + rows);
    const std::string why = Refusal(in, csv);  // "<csv>:<line>: ..." after the path
    return why.size() > csv.size() ? why.substr(csv.size()) : why;
  };
  EXPECT_THAT(error("4,8,4,8,4100\n8,4,4,8,fast\n"),
              HasSubstr(":3: column 'input_tps_median': expected a number"));
  EXPECT_THAT(error("4,8,4,8,-4100\n8,4,4,8,3900\n"),
              HasSubstr(":2: column 'input_tps_median': expected a positive number (tokens/s)"));
  // Figures no sample of this workload can have: a TTFT longer than the window.
  EXPECT_EQ(error("4,8,4,8,4100\n8,4,4,8,3900\n").size(), 0u);
  const std::string csv = Write("ttft.csv",
                                "pp,tp,ep,concurrency,input_tps_median,ttft_p50_s_median\n"
                                "4,8,4,8,4100,3.5\n8,4,4,8,3900,1000\n");
  EXPECT_THAT(Refusal(in, csv),
              HasSubstr(csv + ":3: PP8/TP4/EP4 at C=8: a TTFT of 1000 s does not fit in the"));
}

TEST_F(ReplayTest, AResumedReplayRefusesASourceThatChanged) {
  const inputs::SearchInputs in = Inputs();
  const std::string csv = Write("medians.csv", kMedians);
  Result<std::unique_ptr<SampleEngine>> first = MakeReplayEngine(in.spec, in.plan, csv);
  ASSERT_TRUE(first.ok());
  const std::string run_dir = Run(in, **first, "csv");
  Write("medians.csv", std::string(kMedians) + "4,8,4,16,3,4200,0.02,7,9,80000,97871\n");
  Result<std::unique_ptr<SampleEngine>> second = MakeReplayEngine(in.spec, in.plan, csv);
  ASSERT_TRUE(second.ok());
  RunOptions o;
  o.spec_path = analysis::testing::ExampleSpecPath();
  o.resume_dir = run_dir;
  Result<RunOutcome> out = RunSamples(o, in.spec, in.plan, **second, [](const RunProgress&) {});
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(out.error().message, HasSubstr(csv + " changed since " + run_dir));
}

TEST(SynthesizeRecords, TheirStatisticsAreTheTargetTimesTheFactor) {
  for (size_t n : {1u, 2u, 3u, 4u, 5u, 21u, 40u}) {
    std::vector<workload::PlannedRequest> requests;
    for (size_t i = 0; i < n; ++i)
      requests.push_back({static_cast<int64_t>(i), 1000 + static_cast<int64_t>(i) * 10, 1, 0});
    for (double f : {1.0, 1.05}) {
      Result<std::vector<workload::RequestRecord>> r =
          SynthesizeRecords(requests, 4, {2000, 0.5, 0.8}, f);
      ASSERT_TRUE(r.ok()) << r.error().message;
      const stats::SampleMetrics m = stats::ComputeSampleMetrics(*r);
      EXPECT_EQ(m.requests_completed, static_cast<int>(n));
      EXPECT_NEAR(m.input_tps, 2000 / f, 1e-3) << n;
      if (n >= 2) {
        EXPECT_NEAR(m.ttft_s.p50, 0.5 * f, 1e-8) << n;
      }
      if (n >= 3) {
        EXPECT_NEAR(m.ttft_s.p95, 0.8 * f, 1e-8) << n;
      }
    }
  }
}

TEST(SynthesizeRecords, WithoutTtftTheClosedLoopsShareOfTheWindow) {
  std::vector<workload::PlannedRequest> requests(8, {0, 1000, 1, 0});
  for (int i = 0; i < 8; ++i) requests[i].id = i;
  Result<std::vector<workload::RequestRecord>> r =
      SynthesizeRecords(requests, 2, {1000, {}, {}}, 1);
  ASSERT_TRUE(r.ok());
  // 8000 tokens at 1000 tokens/s: an 8 s window, 2 clients: 2 s each.
  const stats::SampleMetrics m = stats::ComputeSampleMetrics(*r);
  EXPECT_NEAR(m.duration_s, 8, 1e-9);
  EXPECT_NEAR(m.ttft_s.p50, 2, 1e-9);
  EXPECT_NEAR(m.ttft_s.p95, 2, 1e-9);
  EXPECT_FALSE(SynthesizeRecords(requests, 2, {1000, 2.0, 1.0}, 1).ok());  // p95 below p50
}

TEST(ReplayPath, OnlyTheReplayPrefixNamesAPath) {
  EXPECT_EQ(ReplayPath("replay:/r/run"), "/r/run");
  EXPECT_EQ(ReplayPath("replay:"), "");
  EXPECT_FALSE(ReplayPath("sim"));
  EXPECT_FALSE(ReplayPath("replayx"));
}

}  // namespace
}  // namespace ppsearch::run

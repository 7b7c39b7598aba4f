// An adaptive run end to end on the simulated engine: the runner asks the
// adaptive session for each step, the session reads the run directory and
// writes the trajectory, and the analysis reads it back.

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <functional>

#include "adaptive/observe.h"
#include "adaptive/session.h"
#include "analysis/decision.h"
#include "analysis/run.h"
#include "inputs/search_inputs.h"
#include "ppsearch_source_dir.h"
#include "run/replay_sample.h"
#include "run/runner.h"
#include "run/sim_sample.h"
#include "testkit/example_search.h"
#include "util/files.h"

namespace ppsearch::run {
namespace {

namespace fs = std::filesystem;

class AdaptiveRunTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("ppsearch_adaptive_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    inputs_ = testkit::Example();
    inputs_.spec.experiment.results_dir = dir_.string();
    inputs_.spec.lifecycle.reuse_server = true;
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Runs the example's full sweep on the simulated engine.
  Result<RunOutcome> RunFull(const std::string& run_id) {
    RunOptions o;
    o.spec_path = std::string(PPSEARCH_SOURCE_DIR) + "/examples/kimi-k3-pp-search.toml";
    o.run_id = run_id;
    SimSampleEngine engine(inputs_, cost::Calibration());
    return RunSamples(o, inputs_.spec, inputs_.plan, engine, [](const RunProgress&) {});
  }

  // Runs (or resumes) the example adaptively; with `stop_after` >= 0 a stop is
  // asked for as sample stop_after + 1 begins (that one still completes).
  Result<RunOutcome> Run(const std::string& run_id, const std::string& resume = "",
                         int stop_after = -1, SampleEngine* with = nullptr) {
    RunOptions o;
    o.spec_path = std::string(PPSEARCH_SOURCE_DIR) + "/examples/kimi-k3-pp-search.toml";
    o.run_id = run_id;
    o.resume_dir = resume;
    std::atomic<bool> stop{false};
    o.stop = &stop;
    adaptive::Session session(inputs_, cost::Calibration());
    o.next_samples = [&](const evidence::RunPaths& p) { return session.Next(p); };
    SimSampleEngine engine(inputs_, cost::Calibration());
    int seen = 0;
    return RunSamples(o, inputs_.spec, inputs_.plan, with ? *with : engine,
                      [&](const RunProgress&) {
                        if (stop_after >= 0 && seen++ >= stop_after) stop = true;
                      });
  }

  fs::path dir_;
  inputs::SearchInputs inputs_;
};

TEST_F(AdaptiveRunTest, MeasuresFewerSamplesAndEndsWithAMeasuredPrimaryAndFallback) {
  Result<RunOutcome> out = Run("adaptive");
  ASSERT_TRUE(out.ok()) << out.error().message;
  const int full = static_cast<int>(ExpandSamples(inputs_.spec, inputs_.plan).size());
  EXPECT_LT(out->completed, full);
  Result<analysis::RunAnalysis> a = analysis::AnalyseRun(out->run_dir);
  ASSERT_TRUE(a.ok()) << a.error().message;
  ASSERT_TRUE(a->evidence.trajectory.has_value());
  const evidence::Trajectory& t = *a->evidence.trajectory;
  ASSERT_TRUE(t.stop.has_value());
  EXPECT_EQ(t.stop->reason, "settled") << t.stop->message;
  EXPECT_EQ(t.stop->samples_spent, out->completed);
  EXPECT_LT(t.stop->gpu_hours_spent, t.stop->full_sweep_gpu_hours);
  EXPECT_FALSE(a->incomplete());
  EXPECT_EQ(static_cast<int>(a->evidence.not_needed.size()), full - out->completed);
  // The decision rests on the measured layouts, and names the ones the stop did.
  ASSERT_TRUE(a->decision.primary.has_value());
  ASSERT_TRUE(a->decision.fallback.has_value());
  EXPECT_EQ(a->decision.primary->Label(), t.stop->primary);
  EXPECT_EQ(a->decision.fallback->Label(), t.stop->fallback);
  // Every step is recorded with its reason and what it cost.
  ASSERT_FALSE(t.steps.empty());
  EXPECT_EQ(t.steps[0].step, 1);
  EXPECT_EQ(t.steps[0].samples_spent, 0);
  for (const auto& s : t.steps) {
    EXPECT_FALSE(s.reason.empty());
    EXPECT_GT(s.cost_gpu_hours, 0);
    EXPECT_EQ(static_cast<int>(s.samples.size()), inputs_.spec.sweep.repeats);
  }
  // After the first measured layout the calibration is refitted on it.
  EXPECT_TRUE(t.steps[0].calibrated_on.empty());
  EXPECT_FALSE(t.steps.back().calibrated_on.empty());
}

TEST_F(AdaptiveRunTest, AKilledRunResumesWhereItStoppedAndEndsAsAnUninterruptedOne) {
  Result<RunOutcome> whole = Run("whole");
  ASSERT_TRUE(whole.ok()) << whole.error().message;
  Result<RunOutcome> cut = Run("cut", "", 3);
  ASSERT_TRUE(cut.ok()) << cut.error().message;
  EXPECT_TRUE(cut->interrupted);
  EXPECT_EQ(cut->completed, 4);  // one step of 3, and one sample into the next
  Result<RunOutcome> resumed = Run("", cut->run_dir);
  ASSERT_TRUE(resumed.ok()) << resumed.error().message;
  EXPECT_FALSE(resumed->interrupted);
  auto steps = [](const std::string& dir) {
    std::vector<std::string> out;
    Result<evidence::Trajectory> t = evidence::ReadTrajectory(evidence::RunPaths{dir});
    EXPECT_TRUE(t.ok());
    for (const auto& s : t->steps) out.push_back(s.label + " C=" + std::to_string(s.concurrency));
    EXPECT_TRUE(t->stop.has_value());
    return out;
  };
  EXPECT_EQ(steps(cut->run_dir), steps(whole->run_dir));
  Result<analysis::RunAnalysis> a = analysis::AnalyseRun(cut->run_dir);
  Result<analysis::RunAnalysis> b = analysis::AnalyseRun(whole->run_dir);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->decision.primary->Label(), b->decision.primary->Label());
  EXPECT_EQ(a->decision.fallback->Label(), b->decision.fallback->Label());
}

TEST_F(AdaptiveRunTest, ASpentBudgetStopsTheRunAndSaysWhatRemainsUncertain) {
  inputs_.spec.adaptive.budget_samples = 4;  // one step of 3 repeats; a second would pass it
  Result<RunOutcome> out = Run("budget");
  ASSERT_TRUE(out.ok()) << out.error().message;
  EXPECT_EQ(out->completed, 3);
  Result<analysis::RunAnalysis> a = analysis::AnalyseRun(out->run_dir);
  ASSERT_TRUE(a.ok()) << a.error().message;
  ASSERT_TRUE(a->evidence.trajectory && a->evidence.trajectory->stop);
  const evidence::TrajectoryStop& stop = *a->evidence.trajectory->stop;
  EXPECT_EQ(stop.reason, "budget");
  EXPECT_NE(stop.message.find("Stopped on the budget before the choice settled: the next step ("),
            std::string::npos)
      << stop.message;
  EXPECT_NE(stop.budget_detail.find("would take the run to 6 samples, past [adaptive] "
                                    "budget_samples = 4"),
            std::string::npos)
      << stop.budget_detail;
  // What remains open: where the estimated primary and fallback were not measured.
  EXPECT_THAT(stop.uncertain,
              ::testing::UnorderedElementsAre(
                  "PP8/TP4/EP4 (the estimated primary, measured at 1 of 2 load points)",
                  "PP4/TP8/EP4 (the estimated fallback, measured at 0 of 2 load points)"));
  EXPECT_NE(stop.message.find("Still uncertain: " + stop.uncertain[0]), std::string::npos);
  // A budget stop leaves the run incomplete: what it did not measure is missing.
  EXPECT_TRUE(a->incomplete());
  EXPECT_TRUE(a->evidence.not_needed.empty());
}

TEST_F(AdaptiveRunTest, AGpuHourBudgetStopsBeforeTheStepThatWouldPassIt) {
  Result<RunOutcome> whole = Run("whole");
  ASSERT_TRUE(whole.ok()) << whole.error().message;
  Result<evidence::Trajectory> w = evidence::ReadTrajectory(evidence::RunPaths{whole->run_dir});
  ASSERT_TRUE(w.ok() && w->steps.size() >= 2);
  // Room for the first step and half the second.
  const double budget = w->steps[1].gpu_hours_spent + w->steps[1].cost_gpu_hours / 2;
  inputs_.spec.adaptive.budget_gpu_hours = budget;
  Result<RunOutcome> out = Run("gpu_budget");
  ASSERT_TRUE(out.ok()) << out.error().message;
  EXPECT_EQ(out->completed, 3);
  Result<evidence::Trajectory> t = evidence::ReadTrajectory(evidence::RunPaths{out->run_dir});
  ASSERT_TRUE(t.ok() && t->stop);
  EXPECT_EQ(t->stop->reason, "budget");
  EXPECT_LE(t->stop->gpu_hours_spent, budget);
  EXPECT_NE(
      t->stop->budget_detail.find(fmt::format("past [adaptive] budget_gpu_hours = {:g}", budget)),
      std::string::npos)
      << t->stop->budget_detail;
}

// A kill after a step's line was written and before any of its samples
// completed (one had begun): the resumed run measures that step, without
// recording it a second time, and ends as an uninterrupted run does.
TEST_F(AdaptiveRunTest, AKillBeforeAStepsFirstSampleCompletedResumesThatStep) {
  Result<RunOutcome> whole = Run("whole");
  ASSERT_TRUE(whole.ok()) << whole.error().message;
  Result<RunOutcome> cut = Run("cut", "", 2);  // step 1's three samples
  ASSERT_TRUE(cut.ok()) << cut.error().message;
  ASSERT_EQ(cut->completed, 3);
  const evidence::RunPaths paths{cut->run_dir};
  adaptive::Session session(inputs_, cost::Calibration());
  Result<std::vector<evidence::SampleId>> step2 = session.Next(paths);  // writes step 2's line
  ASSERT_TRUE(step2.ok() && !step2->empty());
  ASSERT_TRUE(evidence::AppendManifest(paths, (*step2)[0], evidence::SampleState::kStarted).ok());
  Result<RunOutcome> resumed = Run("", cut->run_dir);
  ASSERT_TRUE(resumed.ok()) << resumed.error().message;
  Result<evidence::Trajectory> a = evidence::ReadTrajectory(paths);
  Result<evidence::Trajectory> b = evidence::ReadTrajectory(evidence::RunPaths{whole->run_dir});
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_EQ(a->steps.size(), b->steps.size());
  for (size_t i = 0; i < a->steps.size(); ++i) {
    EXPECT_EQ(a->steps[i].step, static_cast<int>(i) + 1);
    EXPECT_EQ(a->steps[i].label, b->steps[i].label) << i;
    EXPECT_EQ(a->steps[i].concurrency, b->steps[i].concurrency) << i;
  }
  ASSERT_TRUE(a->stop && b->stop);
  EXPECT_EQ(a->stop->samples_spent, b->stop->samples_spent);
}

// A resume reads a trajectory someone else may have written: steps that
// are not points of the sweep, repeated, out of order or lost, and a stop
// line the policy would not write, are refused by name before anything
// runs; the report leaves such a trajectory out.
TEST_F(AdaptiveRunTest, AResumeRefusesATrajectoryThisRunDidNotWrite) {
  Result<RunOutcome> cut = Run("cut", "", 2);  // step 1's three samples
  ASSERT_TRUE(cut.ok()) << cut.error().message;
  const evidence::RunPaths paths{cut->run_dir};
  const std::string file = paths.trajectory_jsonl();
  Result<std::string> own = ReadFile(file);
  ASSERT_TRUE(own.ok());
  Result<evidence::Trajectory> t = evidence::ReadTrajectory(paths);
  ASSERT_TRUE(t.ok() && t->steps.size() == 1u);
  const evidence::TrajectoryStep first = t->steps[0];
  auto refusal = [&](const std::function<void()>& forge) {
    EXPECT_TRUE(WriteFileAtomic(file, *own).ok());
    forge();
    Result<RunOutcome> resumed = Run("", cut->run_dir);
    return resumed.ok() ? std::string("resumed") : resumed.error().message;
  };
  auto append = [&](evidence::TrajectoryStep s) {
    EXPECT_TRUE(evidence::AppendTrajectoryStep(paths, s).ok());
  };
  evidence::TrajectoryStep again = first;
  again.step = 2;
  EXPECT_EQ(refusal([&] { append(again); }),
            fmt::format("adaptive.jsonl step 2 measures {} at C={} again (step 1 did)", first.label,
                        first.concurrency));
  evidence::TrajectoryStep empty;
  empty.step = 2;
  EXPECT_EQ(refusal([&] { append(empty); }),
            "adaptive.jsonl step 2 measures '' at C=0, not a point of this run's sweep");
  evidence::TrajectoryStep early = first;
  early.step = 3;
  EXPECT_EQ(refusal([&] { append(early); }),
            "adaptive.jsonl step 2 is numbered 3: the steps must be numbered 1, 2, ... in the "
            "order they ran");
  evidence::TrajectoryStop settled;
  settled.reason = "settled";
  EXPECT_EQ(refusal([&] { ASSERT_TRUE(evidence::AppendTrajectoryStop(paths, settled).ok()); }),
            "adaptive.jsonl: the stop line says \"settled\", but this run's evidence does not lead "
            "the policy there (it would measure another point); the line was not written by this "
            "run: remove it to resume");
  EXPECT_EQ(refusal([&] { fs::remove(file); }),
            fmt::format("sample {} ran (manifest.jsonl), but no step of adaptive.jsonl measured "
                        "it: the trajectory has lost steps (a deleted or cut adaptive.jsonl), and "
                        "what chose them cannot be rebuilt",
                        first.samples[0]));
  // The report leaves a forged trajectory out and says why.
  ASSERT_TRUE(WriteFileAtomic(file, *own).ok());
  append(again);
  Result<analysis::RunAnalysis> a = analysis::AnalyseRun(cut->run_dir);
  ASSERT_TRUE(a.ok()) << a.error().message;
  EXPECT_FALSE(a->evidence.trajectory.has_value());
  EXPECT_THAT(a->evidence.warnings,
              ::testing::Contains(::testing::HasSubstr("adaptive.jsonl step 2 measures")));
  // Its own trajectory resumes.
  ASSERT_TRUE(WriteFileAtomic(file, *own).ok());
  Result<RunOutcome> resumed = Run("", cut->run_dir);
  EXPECT_TRUE(resumed.ok()) << resumed.error().message;
}

// A run cut after its first two steps (three samples each), its
// trajectory, and resumes of it with the trajectory replaced by `text`.
class ForgedTrajectoryTest : public AdaptiveRunTest {
 protected:
  void SetUp() override {
    AdaptiveRunTest::SetUp();
    Result<RunOutcome> cut = Run("cut", "", 5);
    ASSERT_TRUE(cut.ok()) << cut.error().message;
    run_dir_ = cut->run_dir;
    file_ = evidence::RunPaths{run_dir_}.trajectory_jsonl();
    Result<std::string> own = ReadFile(file_);
    ASSERT_TRUE(own.ok());
    own_ = *own;
    Result<evidence::Trajectory> t = evidence::ReadTrajectory(evidence::RunPaths{run_dir_});
    ASSERT_TRUE(t.ok() && t->steps.size() == 2u);
    steps_ = t->steps;
    ASSERT_NE(steps_[0].layout + std::to_string(steps_[0].concurrency),
              steps_[1].layout + std::to_string(steps_[1].concurrency));
  }
  // "resumed", or why the resume was refused.
  std::string ResumeWith(const std::string& text) {
    EXPECT_TRUE(WriteFileAtomic(file_, text).ok());
    Result<RunOutcome> resumed = Run("", run_dir_);
    return resumed.ok() ? std::string("resumed") : resumed.error().message;
  }
  // The line the writer writes for `s`.
  std::string Line(const evidence::TrajectoryStep& s) {
    const evidence::RunPaths scratch{(dir_ / "scratch").string()};
    fs::remove_all(scratch.root);
    fs::create_directories(scratch.root + "/metadata");
    EXPECT_TRUE(evidence::AppendTrajectoryStep(scratch, s).ok());
    Result<std::string> text = ReadFile(scratch.trajectory_jsonl());
    return text.ok() ? *text : "";
  }

  std::string run_dir_, file_, own_;
  std::vector<evidence::TrajectoryStep> steps_;
};

// 200,000 empty steps: refused at the first step past the sweep's points,
// before the rest of the file is read.
TEST_F(ForgedTrajectoryTest, MoreStepsThanTheSweepHasPointsAreRefusedAtTheFirstPastThem) {
  const size_t points = inputs_.spec.sweep.layouts.size() * inputs_.spec.sweep.concurrency.size();
  std::string many = own_;
  for (int i = 0; i < 200000; ++i) many += "{\"event\":\"step\"}\n";
  EXPECT_EQ(ResumeWith(many),
            fmt::format("{}:{}: step {} is one more than the sweep has points ({}); a run "
                        "measures each point once",
                        file_, points + 1, points + 1, points));
  Result<analysis::RunAnalysis> a = analysis::AnalyseRun(run_dir_);
  ASSERT_TRUE(a.ok()) << a.error().message;
  EXPECT_FALSE(a->evidence.trajectory.has_value()) << "the report leaves it out";
}

TEST_F(ForgedTrajectoryTest, AStepOfALayoutOrALoadOutsideTheSweepIsRefused) {
  evidence::TrajectoryStep outside = steps_[1];
  outside.step = 3;
  outside.layout = "pp16-tp2-ep1";
  EXPECT_EQ(ResumeWith(own_ + Line(outside)),
            fmt::format("adaptive.jsonl step 3 measures 'pp16-tp2-ep1' at C={}, not a point of "
                        "this run's sweep",
                        outside.concurrency));
  evidence::TrajectoryStep no_load = steps_[1];
  no_load.step = 3;
  no_load.concurrency = 3;
  EXPECT_EQ(ResumeWith(own_ + Line(no_load)),
            fmt::format("adaptive.jsonl step 3 measures '{}' at C=3, not a point of this run's "
                        "sweep",
                        no_load.layout));
}

// Swapped, the numbers say so; swapped and renumbered, the manifest does.
TEST_F(ForgedTrajectoryTest, StepsSwappedOutOfTheOrderTheyRanAreRefused) {
  EXPECT_EQ(ResumeWith(Line(steps_[1]) + Line(steps_[0])),
            "adaptive.jsonl step 1 is numbered 2: the steps must be numbered 1, 2, ... in the "
            "order they ran");
  evidence::TrajectoryStep first = steps_[1], second = steps_[0];
  first.step = 1;
  second.step = 2;
  EXPECT_EQ(ResumeWith(Line(first) + Line(second)),
            fmt::format("adaptive.jsonl step 2 measures {} at C={}, whose samples ran before "
                        "those of step 1 (manifest.jsonl): the steps are not in the order they ran",
                        second.label, second.concurrency));
  Result<analysis::RunAnalysis> a = analysis::AnalyseRun(run_dir_);
  ASSERT_TRUE(a.ok()) << a.error().message;
  EXPECT_FALSE(a->evidence.trajectory.has_value()) << "the report leaves them out";
  EXPECT_EQ(ResumeWith(own_), "resumed") << "its own trajectory resumes";
}

// A run resumed between two steps has no server up, whatever the last
// sample's layout: the first step it chooses counts a start.
TEST_F(AdaptiveRunTest, TheFirstStepAfterAResumeCountsAServerStart) {
  Result<RunOutcome> whole = Run("whole");
  ASSERT_TRUE(whole.ok()) << whole.error().message;
  Result<evidence::Trajectory> w = evidence::ReadTrajectory(evidence::RunPaths{whole->run_dir});
  ASSERT_TRUE(w.ok() && w->steps.size() >= 2);
  // The example stays on its first layout for the second step, on its server.
  ASSERT_EQ(w->steps[1].layout, w->steps[0].layout);
  ASSERT_FALSE(w->steps[1].server_start);
  Result<RunOutcome> cut = Run("cut", "", 2);  // step 1's three samples, then a stop
  ASSERT_TRUE(cut.ok()) << cut.error().message;
  ASSERT_EQ(cut->completed, 3);
  ASSERT_TRUE(Run("", cut->run_dir).ok());
  Result<evidence::Trajectory> r = evidence::ReadTrajectory(evidence::RunPaths{cut->run_dir});
  ASSERT_TRUE(r.ok() && r->steps.size() >= 2);
  EXPECT_TRUE(r->steps[1].server_start) << r->steps[1].reason;
  // At least 32 GPUs x most of the spec's 600 s start (the simulated engine
  // times none) above the same step on a running server.
  EXPECT_GT(r->steps[1].cost_gpu_hours, w->steps[1].cost_gpu_hours + 0.75 * 32 * 600.0 / 3600)
      << r->steps[1].reason;
}

// An engine that timed its server starts (as the real one does, bench
// ready_s): a start of 900 s on the first sample of each layout, 2 s of
// setup on a reused server.
class TimedStartEngine : public SampleEngine {
 public:
  explicit TimedStartEngine(SampleEngine& inner) : inner_(inner) {}
  const char* kind() const override { return inner_.kind(); }
  bool simulated() const override { return inner_.simulated(); }
  Result<SampleOutput> Run(const SampleContext& ctx) override {
    PPS_ASSIGN_OR_RETURN(SampleOutput out, inner_.Run(ctx));
    out.bench.ready = evidence::BenchServerReady{ctx.id.layout == last_ ? 2.0 : 900.0, ""};
    last_ = ctx.id.layout;
    return out;
  }

 private:
  SampleEngine& inner_;
  spec::LayoutSpec last_;
};

TEST_F(AdaptiveRunTest, WhatWasSpentCountsTheMeasuredServerStarts) {
  SimSampleEngine sim(inputs_, cost::Calibration());
  TimedStartEngine timed(sim);
  Result<RunOutcome> out = Run("timed", "", -1, &timed);
  ASSERT_TRUE(out.ok()) << out.error().message;
  Result<analysis::RunAnalysis> a = analysis::AnalyseRun(out->run_dir);
  ASSERT_TRUE(a.ok()) << a.error().message;
  ASSERT_TRUE(a->evidence.trajectory && a->evidence.trajectory->stop);
  const evidence::Trajectory& t = *a->evidence.trajectory;
  // Each sample: its layout's GPUs x (its timed ready_s + its benchmark window).
  double expected = 0;
  for (const analysis::SampleAnalysis& s : a->evidence.samples) {
    ASSERT_TRUE(s.ready_s.has_value()) << s.name;
    expected += s.id.layout.gpus() * (*s.ready_s + s.metrics.duration_s) / 3600;
  }
  EXPECT_NEAR(t.stop->gpu_hours_spent, expected, 1e-9);
  // Two layouts visited, so two 900 s starts on 32 GPUs are in it.
  EXPECT_GT(t.stop->gpu_hours_spent, 2 * 32 * 900.0 / 3600);
  // Once a start was timed, the full sweep's estimate counts 900 s per
  // start instead of the spec's 600 s: four layouts of 32 GPUs, one start
  // each with reuse_server.
  ASSERT_GE(t.steps.size(), 2u);
  EXPECT_NEAR(t.steps[1].full_sweep_gpu_hours - t.steps[0].full_sweep_gpu_hours,
              4 * 32 * 300.0 / 3600, 1.0);
  // The stop line keeps the calibration refitted on every measured point.
  EXPECT_FALSE(t.stop->calibrated_on.empty());
  EXPECT_TRUE(t.stop->calibration.contains("moe_gemm_eff")) << t.stop->calibration.dump();
}

// The threshold the session stops at is the spec's [decision] stop_probability.
TEST_F(AdaptiveRunTest, TheStopThresholdComesFromTheSpec) {
  inputs_.spec.decision.stop_probability = 0.0123;
  Result<RunOutcome> out = Run("threshold");
  ASSERT_TRUE(out.ok()) << out.error().message;
  adaptive::ObserveOptions quick;
  quick.members = 4;
  Result<adaptive::Observation> obs =
      adaptive::Observe(inputs_, cost::Calibration(), out->run_dir, quick);
  ASSERT_TRUE(obs.ok()) << obs.error().message;
  EXPECT_DOUBLE_EQ(obs->problem.stop_probability, 0.0123);
  EXPECT_EQ(obs->samples_spent, out->completed);
}

TEST_F(AdaptiveRunTest, AnAdaptiveReplayOfAFullRunStopsEarlyWithItsDecision) {
  Result<RunOutcome> full = RunFull("full");
  ASSERT_TRUE(full.ok()) << full.error().message;
  RunOptions o;
  o.spec_path = std::string(PPSEARCH_SOURCE_DIR) + "/examples/kimi-k3-pp-search.toml";
  o.run_id = "replayed";
  adaptive::Session session(inputs_, cost::Calibration());
  o.next_samples = [&](const evidence::RunPaths& p) { return session.Next(p); };
  Result<std::unique_ptr<SampleEngine>> engine =
      MakeReplayEngine(inputs_.spec, inputs_.plan, full->run_dir);
  ASSERT_TRUE(engine.ok()) << engine.error().message;
  Result<RunOutcome> replayed =
      RunSamples(o, inputs_.spec, inputs_.plan, **engine, [](const RunProgress&) {});
  ASSERT_TRUE(replayed.ok()) << replayed.error().message;
  EXPECT_LT(replayed->completed, full->completed);
  Result<analysis::RunAnalysis> a = analysis::AnalyseRun(full->run_dir);
  Result<analysis::RunAnalysis> b = analysis::AnalyseRun(replayed->run_dir);
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_TRUE(a->decision.primary && b->decision.primary);
  EXPECT_EQ(b->decision.primary->Label(), a->decision.primary->Label());
  EXPECT_EQ(b->decision.fallback->Label(), a->decision.fallback->Label());
  ASSERT_TRUE(b->evidence.trajectory && b->evidence.trajectory->stop);
  EXPECT_EQ(b->evidence.trajectory->stop->reason, "settled");
}

// A CSV of medians without TTFTs replays records whose TTFTs are Little's
// law's: an adaptive run ranking by TTFT p50 must not read them as measured
// (nor refit on them), but exclude each measured layout saying why.
TEST_F(AdaptiveRunTest, AReplayedFileWithoutTtftsIsNotRankedByTtft) {
  Result<RunOutcome> full = RunFull("full");
  ASSERT_TRUE(full.ok()) << full.error().message;
  Result<analysis::RunAnalysis> a = analysis::AnalyseRun(full->run_dir);
  ASSERT_TRUE(a.ok()) << a.error().message;
  std::string csv = "pp,tp,ep,concurrency,input_tps_median,peak_gpu_mib,gpu_total_mib\n";
  for (const analysis::PointSummary& p : a->points)
    csv +=
        fmt::format("{},{},{},{},{},{},{}\n", p.layout.pp, p.layout.tp, p.layout.ep, p.concurrency,
                    p.median.input_tps, p.peak_gpu_mib.value_or(0), p.gpu_total_mib.value_or(0));
  const std::string path = (dir_ / "medians.csv").string();
  ASSERT_TRUE(WriteFileAtomic(path, csv).ok());
  Result<std::unique_ptr<SampleEngine>> engine = MakeReplayEngine(inputs_.spec, inputs_.plan, path);
  ASSERT_TRUE(engine.ok()) << engine.error().message;
  RunOptions o;
  o.spec_path = std::string(PPSEARCH_SOURCE_DIR) + "/examples/kimi-k3-pp-search.toml";
  o.run_id = "replayed";
  Result<RunOutcome> replayed =
      RunSamples(o, inputs_.spec, inputs_.plan, **engine, [](const RunProgress&) {});
  ASSERT_TRUE(replayed.ok()) << replayed.error().message;

  inputs::SearchInputs by_ttft = inputs_;
  by_ttft.spec.decision.objective = *decide::Objective::FromName("ttft_p50");
  Result<adaptive::Observation> seen =
      adaptive::Observe(by_ttft, cost::Calibration(), replayed->run_dir, {});
  ASSERT_TRUE(seen.ok()) << seen.error().message;
  ASSERT_FALSE(seen->problem.candidates.empty());
  for (const adaptive::CandidateState& c : seen->problem.candidates) {
    EXPECT_TRUE(c.excluded) << c.label;
    EXPECT_THAT(c.why, ::testing::StartsWith("no TTFT p50 was measured at C=")) << c.label;
    EXPECT_THAT(c.why, ::testing::EndsWith(
                           " (samples replayed from a file of medians do not reproduce it), so "
                           "it cannot be ranked by objective ttft_p50"))
        << c.label;
  }
}

// An open loop's repeats each draw their own arrivals, which spread the
// figures beyond max_repeat_spread here; that excludes no candidate.
TEST_F(AdaptiveRunTest, AnOpenLoopsRepeatSpreadExcludesNoCandidate) {
  inputs_.spec.workload.request_rate = 0.15;
  inputs_.spec.decision.objective = *decide::Objective::FromName("ttft_p50");
  Result<RunOutcome> full = RunFull("open");
  ASSERT_TRUE(full.ok()) << full.error().message;
  Result<analysis::RunAnalysis> a = analysis::AnalyseRun(full->run_dir);
  ASSERT_TRUE(a.ok()) << a.error().message;
  const bool spread_over = std::any_of(a->points.begin(), a->points.end(), [&](const auto& p) {
    return p.input_tps_spread > inputs_.spec.decision.max_repeat_spread;
  });
  ASSERT_TRUE(spread_over) << "the case must spread beyond the limit to test anything";
  Result<adaptive::Observation> seen =
      adaptive::Observe(inputs_, cost::Calibration(), full->run_dir, {});
  ASSERT_TRUE(seen.ok()) << seen.error().message;
  int qualified = 0;
  for (const adaptive::CandidateState& c : seen->problem.candidates) {
    EXPECT_THAT(c.why, ::testing::Not(::testing::HasSubstr("spread"))) << c.label;
    qualified += c.excluded ? 0 : 1;
  }
  EXPECT_GE(qualified, 2);
  // The run directory records the example's spec (a closed loop): the
  // decision is taken again under this open one.
  const analysis::Decision d =
      analysis::Decide(inputs_.spec, a->evidence.samples, a->points, a->memory, {});
  for (const analysis::LayoutVerdict& v : d.verdicts)
    for (const std::string& e : v.exclusions)
      EXPECT_THAT(e, ::testing::Not(::testing::HasSubstr("across repeats"))) << e;
}

}  // namespace
}  // namespace ppsearch::run

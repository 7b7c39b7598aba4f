// What `ppsearch run` settles before anything starts: the spec and engine
// of a new run, a resumed run's recorded ones (and what a resume may not
// change), and the refusals of a run that could not start.

#include "run/prepare.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "analysis/run.h"
#include "evidence/evidence.h"
#include "evidence/run_metadata.h"
#include "ppsearch_source_dir.h"
#include "run/runner.h"
#include "run/sim_sample.h"
#include "util/files.h"

namespace ppsearch::run {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

class PrepareRunTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("ppsearch_prepare_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // The example spec, small: one layout, one level, one repeat, results here.
  RunRequest Request() const {
    RunRequest r;
    r.spec_path = std::string(PPSEARCH_SOURCE_DIR) + "/examples/kimi-k3-pp-search.toml";
    r.overrides = {"experiment.results_dir=\"" + dir_.string() + "\"", "sweep.concurrency=[8]",
                   "sweep.repeats=1"};
    return r;
  }

  // A finished run of `request` on the simulated engine; its directory.
  std::string Ran(const RunRequest& request) {
    Result<PreparedRun> p = PrepareRun(request);
    EXPECT_TRUE(p.ok()) << p.error().message;
    RunOptions o;
    o.spec_path = p->spec_path;
    o.overrides = p->overrides;
    o.run_id = p->run_id;
    o.inputs = p->input_records;
    SimSampleEngine engine(p->inputs, cost::Calibration());
    Result<RunOutcome> out =
        RunSamples(o, p->inputs.spec, p->inputs.plan, engine, [](const RunProgress&) {});
    EXPECT_TRUE(out.ok()) << out.error().message;
    return out.ok() ? out->run_dir : "";
  }

  fs::path dir_;
};

TEST_F(PrepareRunTest, ANewRunLoadsTheSpecAndChoosesItsEngine) {
  RunRequest r = Request();
  r.run_id_env = "from-env";
  Result<PreparedRun> p = PrepareRun(r);
  ASSERT_TRUE(p.ok()) << p.error().message;
  // The example names its cluster's launcher: a real run unless told otherwise.
  EXPECT_EQ(p->engine_kind, "sglang");
  EXPECT_EQ(p->run_id, "from-env");
  EXPECT_EQ(p->inputs.spec.sweep.concurrency, std::vector<int>{8});
  EXPECT_TRUE(p->refusals.empty());
  r.engine = "sim";
  r.run_id = "given";
  EXPECT_EQ(PrepareRun(r)->engine_kind, "sim");
  EXPECT_EQ(PrepareRun(r)->run_id, "given");         // --run-id before $RUN_ID
  EXPECT_EQ(ChooseEngine("", spec::Spec{}), "sim");  // no launcher named: the simulator
  r.run_id = "../out";
  Result<PreparedRun> unsafe = PrepareRun(r);
  ASSERT_FALSE(unsafe.ok());
  EXPECT_THAT(unsafe.error().message, HasSubstr("--run-id/RUN_ID '../out' must be"));
  EXPECT_EQ(PrepareRun(RunRequest{}).error().message, "give SPEC, or --resume RUN_DIR");
}

TEST_F(PrepareRunTest, AnAdaptiveRunIsRefusedWhatItCannotChooseOrAfford) {
  RunRequest r = Request();
  r.adaptive = true;
  EXPECT_TRUE(PrepareRun(r)->refusals.empty());
  RunRequest decode = r;
  decode.overrides.push_back("decision.objective=\"output_tps_per_gpu\"");
  const std::vector<std::string> objective = PrepareRun(decode)->refusals;
  ASSERT_EQ(objective.size(), 1u);
  EXPECT_THAT(objective[0], HasSubstr("an adaptive run chooses by the input_tps or ttft_p50 "
                                      "objective, not output_tps_per_gpu"));
  RunRequest budget = r;
  budget.overrides.push_back("sweep.repeats=3");
  budget.overrides.push_back("adaptive.budget_samples=2");
  const std::vector<std::string> small = PrepareRun(budget)->refusals;
  ASSERT_EQ(small.size(), 1u);
  EXPECT_THAT(small[0], HasSubstr("a budget of 2 samples is less than one step"));
  decode.adaptive = false;  // a full run measures any objective
  EXPECT_TRUE(PrepareRun(decode)->refusals.empty());
}

TEST_F(PrepareRunTest, AResumeRunsItsRecordedSpecAndEngineAndChangesNeither) {
  const std::string run_dir = Ran(Request());
  ASSERT_FALSE(run_dir.empty());
  RunRequest resume;
  resume.resume_dir = run_dir;
  resume.run_id_env = "ignored-on-resume";
  Result<PreparedRun> p = PrepareRun(resume);
  ASSERT_TRUE(p.ok()) << p.error().message;
  EXPECT_EQ(p->spec_path, fs::absolute(Request().spec_path).lexically_normal().string());
  EXPECT_EQ(p->overrides, Request().overrides);
  EXPECT_EQ(p->inputs.spec.sweep.concurrency, std::vector<int>{8});
  EXPECT_EQ(p->engine_kind, "sim");
  EXPECT_EQ(p->resume_dir, run_dir);
  EXPECT_EQ(p->run_id, "");
  EXPECT_FALSE(p->adaptive);

  RunRequest engine = resume;
  engine.engine = "sglang";
  EXPECT_EQ(PrepareRun(engine).error().message,
            run_dir + " was run with --engine sim; resume it with the same engine");
  RunRequest adaptive = resume;
  adaptive.adaptive = true;
  EXPECT_THAT(PrepareRun(adaptive).error().message,
              HasSubstr("ran every sample of its sweep; resume it without --adaptive"));
  RunRequest set = resume;
  set.overrides = {"sweep.repeats=2"};
  EXPECT_THAT(PrepareRun(set).error().message, HasSubstr("drop --set (sweep.repeats=2)"));
  RunRequest other = resume;
  other.spec_path = "elsewhere.toml";
  EXPECT_THAT(PrepareRun(other).error().message, HasSubstr("not elsewhere.toml; drop SPEC"));
  RunRequest named = resume;
  named.run_id = "new";
  EXPECT_EQ(PrepareRun(named).error().message,
            "--run-id names a new run; --resume continues " + run_dir);
  RunRequest same = resume;  // repeating what it recorded is no change
  same.spec_path = Request().spec_path;
  same.engine = "sim";
  EXPECT_TRUE(PrepareRun(same).ok());
}

// The samples after a resume come from the calibration those before came
// from: a run started without one is not resumed with one, and one started
// with a calibration is resumed with its copy, or a file of the same content.
TEST_F(PrepareRunTest, AResumeKeepsTheCalibrationItWasStartedWith) {
  const std::string run_dir = Ran(Request());
  ASSERT_FALSE(run_dir.empty());
  const std::string calibration = (dir_ / "c.json").string();
  ASSERT_TRUE(WriteFileAtomic(calibration, "{}\n").ok());
  RunRequest resume;
  resume.resume_dir = run_dir;
  resume.calibration = calibration;
  EXPECT_EQ(PrepareRun(resume).error().message,
            "--resume continues " + run_dir +
                ", which was started without a calibration; drop --calibration (" + calibration +
                ") or start a new run");
  const std::string copy = evidence::RunPaths{run_dir}.calibration_json();
  ASSERT_TRUE(WriteFileAtomic(copy, "{ }\n").ok());
  EXPECT_EQ(PrepareRun(resume).error().message,
            "--resume continues " + run_dir + " with the calibration it was started with (" + copy +
                "), and " + calibration +
                " differs from it; drop --calibration or start a new run");
  ASSERT_TRUE(WriteFileAtomic(calibration, "{ }\n").ok());
  Result<PreparedRun> same = PrepareRun(resume);
  ASSERT_TRUE(same.ok()) << same.error().message;
  EXPECT_EQ(same->calibration, copy);
  resume.calibration.clear();
  EXPECT_EQ(PrepareRun(resume)->calibration, copy);
}

// A run records the model config and hardware profile files it read; a
// resume after an edit of one is refused (its samples would come from
// another model), and a report of the run says the file changed.
TEST_F(PrepareRunTest, AResumeRefusesAModelConfigOrProfileEditedSince) {
  const std::string source = std::string(PPSEARCH_SOURCE_DIR) + "/data/models/kimi-k3/config.json";
  const std::string model = (dir_ / "config.json").string();
  const std::string profile = (dir_ / "measured.toml").string();
  ASSERT_TRUE(WriteFileAtomic(model, *ReadFile(source)).ok());
  ASSERT_TRUE(WriteFileAtomic(profile, "name = \"measured\"\nbase = \"rtx-6000d\"\n").ok());
  RunRequest request = Request();
  request.overrides.push_back("engine.model_config=\"" + model + "\"");
  request.overrides.push_back("cluster.hardware=\"" + profile + "\"");
  const std::string run_dir = Ran(request);
  ASSERT_FALSE(run_dir.empty());
  Result<evidence::RunMetadata> run = evidence::ReadRunMetadata(evidence::RunPaths{run_dir});
  ASSERT_TRUE(run.ok() && run->inputs);
  ASSERT_EQ(run->inputs->size(), 3u);  // the config, the overlay and its base
  EXPECT_EQ((*run->inputs)[0].key, "engine.model_config");
  EXPECT_EQ((*run->inputs)[0].path, model);
  EXPECT_EQ((*run->inputs)[1].path, profile);
  EXPECT_EQ((*run->inputs)[2].key, "cluster.hardware");

  RunRequest resume;
  resume.resume_dir = run_dir;
  ASSERT_TRUE(PrepareRun(resume).ok());
  ASSERT_TRUE(
      WriteFileAtomic(profile, "name = \"measured\"\nbase = \"rtx-6000d\"\nsm_count = 100\n").ok());
  Result<PreparedRun> edited = PrepareRun(resume);
  ASSERT_FALSE(edited.ok());
  EXPECT_THAT(edited.error().message,
              HasSubstr("--resume continues " + run_dir + ", but " + profile +
                        " (cluster.hardware) changed since the run started (SHA-256 "));
  EXPECT_THAT(edited.error().message, HasSubstr("; restore it, or start a new run"));
  Result<analysis::RunAnalysis> report = analysis::AnalyseRun(run_dir);
  ASSERT_TRUE(report.ok()) << report.error().message;
  EXPECT_THAT(::testing::PrintToString(report->warnings),
              HasSubstr(profile + " (cluster.hardware) changed since the run started"));
  std::filesystem::remove(model);
  EXPECT_THAT(PrepareRun(resume).error().message,
              HasSubstr(model + " (engine.model_config) cannot be read now"));
}

}  // namespace
}  // namespace ppsearch::run

#include "run/runner.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <map>

#include "spec/spec_parser.h"
#include "util/files.h"

namespace ppsearch::run {
namespace {

namespace fs = std::filesystem;

// Returns canned evidence and counts calls; fails the samples it is told to.
class FakeEngine : public SampleEngine {
 public:
  const char* kind() const override { return "fake"; }
  bool simulated() const override { return true; }
  Result<SampleOutput> Run(const SampleContext& c) override {
    ran.push_back(c.id.str());
    if (during_run) during_run(c);
    if (c.id.str() == fail_sample) return MakeError("server never became ready");
    SampleOutput out;
    if (c.id.str() == interrupt_sample) {
      // As the real engine answers when the stop flag cut a sample short.
      out.interrupted = true;
      out.detail = "interrupted while its servers started";
      return out;
    }
    if (auto p = preflight.find(c.id.str()); p != preflight.end()) {
      out.verdict = evidence::Verdict::kPreflightFailed;
      out.detail = p->second;
      out.nodes = {{"h1", "", ""}};
      out.bench.sample = c.id.str();
      return out;
    }
    workload::RequestRecord r;
    r.id = 0;
    r.send_ns = 0;
    r.first_token_ns = 10;
    r.end_ns = 20;
    r.input_tokens = 100;
    r.output_tokens = 1;
    r.http_status = 200;
    out.records = {r};
    out.nodes = {{"h1", "log\n", "0, GPU-x, G, 1, 2\n"}};
    out.bench.sample = c.id.str();
    return out;
  }
  std::vector<std::string> ran;
  std::string fail_sample;
  std::string interrupt_sample;                  // comes back interrupted
  std::map<std::string, std::string> preflight;  // sample -> why its preflight failed
  std::function<void(const SampleContext&)> during_run;
};

class RunnerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("ppsearch_runner_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
    spec_path_ = (dir_ / "spec.toml").string();
    ASSERT_TRUE(
        WriteFileAtomic(spec_path_,
                        "[experiment]\nname = \"t\"\nresults_dir = \"out\"\n"
                        "[cluster]\nhosts = [\"h1\"]\ngpus_per_node = 4\n"
                        "[engine]\nmodel_path = \"/m\"\nmodel_config = \"x.json\"\n"
                        "[sweep]\nlayouts = [{pp = 1, tp = 4, ep = 1}, {pp = 2, tp = 2, ep = 1}]\n"
                        "concurrency = [1, 2]\nrepeats = 2\n"
                        "[workload]\ninput_tokens = 100\nrequests = 4\n")
            .ok());
    auto spec = spec::LoadSpec(spec_path_);
    ASSERT_TRUE(spec.ok()) << spec.error().message;
    spec_ = *spec;
    for (const auto& l : spec_.sweep.layouts) {
      plan::LayoutPlan lp;
      lp.layout = l;
      plan_.layouts.push_back(lp);
    }
  }
  void TearDown() override { fs::remove_all(dir_); }

  RunOptions Options() {
    RunOptions o;
    o.spec_path = spec_path_;
    o.command_line = "ppsearch run spec.toml";
    return o;
  }

  fs::path dir_;
  std::string spec_path_;
  spec::Spec spec_;
  plan::Plan plan_;
};

TEST_F(RunnerTest, RunsEverySampleAndWritesEvidence) {
  FakeEngine engine;
  int progress_calls = 0;
  auto out =
      RunSamples(Options(), spec_, plan_, engine, [&](const RunProgress&) { ++progress_calls; });
  ASSERT_TRUE(out.ok()) << out.error().message;
  EXPECT_EQ(out->total, 8);
  EXPECT_EQ(out->completed, 8);
  EXPECT_EQ(progress_calls, 8);
  evidence::RunPaths paths{out->run_dir};
  for (const std::string& f :
       {paths.run_json(), paths.spec_toml(), paths.spec_resolved_json(), paths.commands_txt()})
    EXPECT_TRUE(fs::exists(f)) << f;
  evidence::SampleId id{spec_.sweep.layouts[1], 2, 2};
  EXPECT_EQ(id.str(), "pp2-tp2-ep1_c2_r2");
  EXPECT_TRUE(fs::exists(paths.raw(id)));
  EXPECT_TRUE(fs::exists(paths.bench(id)));
  EXPECT_TRUE(fs::exists(paths.gpu(id, "h1")));
  EXPECT_TRUE(fs::exists(paths.service(id, "h1")));
  auto records = evidence::ReadRecords(paths.raw(id));
  ASSERT_TRUE(records.ok());
  EXPECT_EQ(records->size(), 1u);
  auto manifest = evidence::ReadManifest(paths);
  ASSERT_TRUE(manifest.ok());
  EXPECT_EQ(manifest->size(), 8u);
}

TEST_F(RunnerTest, ResumeRunsOnlyWhatIsNotCompleted) {
  std::atomic<bool> stop{false};
  FakeEngine first;
  RunOptions o = Options();
  o.stop = &stop;
  int n = 0;
  auto out = RunSamples(o, spec_, plan_, first, [&](const RunProgress&) {
    if (++n == 4) stop = true;  // Ctrl-C while the 4th sample runs
  });
  ASSERT_TRUE(out.ok());
  EXPECT_TRUE(out->interrupted);
  EXPECT_EQ(out->completed, 4);
  // A crash after "started" of the next sample leaves a torn manifest line too.
  ASSERT_TRUE(
      AppendLine(evidence::RunPaths{out->run_dir}.manifest(), "{\"sample\": \"pp2-tp2").ok());

  FakeEngine second;
  RunOptions r = Options();
  r.resume_dir = out->run_dir;
  auto resumed = RunSamples(r, spec_, plan_, second, [](const RunProgress&) {});
  ASSERT_TRUE(resumed.ok()) << resumed.error().message;
  EXPECT_EQ(resumed->skipped, 4);
  EXPECT_EQ(resumed->completed, 4);
  std::vector<std::string> all = first.ran;
  all.insert(all.end(), second.ran.begin(), second.ran.end());
  std::sort(all.begin(), all.end());
  EXPECT_EQ(std::adjacent_find(all.begin(), all.end()), all.end()) << "a sample ran twice";
  EXPECT_EQ(all.size(), 8u);
}

// A sample the stop flag cut short is neither evidence nor a failure: the
// manifest says interrupted, none of its files is written, the run stops
// there, and a resume runs it again.
TEST_F(RunnerTest, AnInterruptedSampleIsNotRecordedAndTheResumeRunsIt) {
  FakeEngine first;
  first.interrupt_sample = "pp1-tp4-ep1_c2_r1";
  auto out = RunSamples(Options(), spec_, plan_, first, [](const RunProgress&) {});
  ASSERT_TRUE(out.ok()) << out.error().message;
  EXPECT_TRUE(out->interrupted);
  EXPECT_EQ(out->completed, 2);
  EXPECT_EQ(first.ran.size(), 3u) << "nothing runs after the interrupted sample";
  const evidence::RunPaths paths{out->run_dir};
  const evidence::SampleId cut{spec_.sweep.layouts[0], 2, 1};
  ASSERT_EQ(cut.str(), first.interrupt_sample);
  EXPECT_FALSE(fs::exists(paths.raw(cut)));
  EXPECT_FALSE(fs::exists(paths.bench(cut)));
  auto manifest = evidence::ReadManifestEntries(paths);
  ASSERT_TRUE(manifest.ok());
  ASSERT_EQ(manifest->entries.size(), 3u);
  EXPECT_EQ(manifest->entries[2].sample, cut.str());
  EXPECT_EQ(manifest->entries[2].state, evidence::SampleState::kInterrupted);
  EXPECT_FALSE(manifest->entries[2].verdict.has_value()) << "no verdict: it did not end";
  EXPECT_TRUE(manifest->problems.empty());
  EXPECT_NE(
      ReadFile(paths.manifest())->find("\"detail\":\"interrupted while its servers started\""),
      std::string::npos);

  FakeEngine second;
  RunOptions r = Options();
  r.resume_dir = out->run_dir;
  auto resumed = RunSamples(r, spec_, plan_, second, [](const RunProgress&) {});
  ASSERT_TRUE(resumed.ok()) << resumed.error().message;
  EXPECT_FALSE(resumed->interrupted);
  EXPECT_EQ(resumed->skipped, 2);
  EXPECT_EQ(resumed->completed, 6);
  ASSERT_FALSE(second.ran.empty());
  EXPECT_EQ(second.ran[0], cut.str());
  EXPECT_TRUE(fs::exists(paths.bench(cut)));
}

TEST_F(RunnerTest, FailedSampleIsRecordedAndTheSweepGoesOn) {
  FakeEngine engine;
  engine.fail_sample = "pp1-tp4-ep1_c2_r1";
  auto out = RunSamples(Options(), spec_, plan_, engine, [](const RunProgress&) {});
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(out->completed, 7);
  auto manifest = evidence::ReadManifest(evidence::RunPaths{out->run_dir});
  ASSERT_TRUE(manifest.ok());
  int failed = 0;
  for (const auto& [s, st] : *manifest) failed += st == evidence::SampleState::kFailed;
  EXPECT_EQ(failed, 1);
}

TEST_F(RunnerTest, ResumeOfANonRunDirectoryIsAnError) {
  FakeEngine engine;
  RunOptions o = Options();
  o.resume_dir = dir_.string();
  auto out = RunSamples(o, spec_, plan_, engine, [](const RunProgress&) {});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.error().message,
            dir_.string() + ": not a ppsearch run directory (no metadata/run.json)");
}

// The same preflight cause twice in a row stops the run with that cause;
// what was collected stays, and the run can be resumed.
TEST_F(RunnerTest, TheSameFailedPreflightTwiceInARowStopsTheRun) {
  FakeEngine engine;
  const std::string busy = "h1: GPU memory is held by another process: pid 7 (python3)";
  engine.preflight = {{"pp1-tp4-ep1_c1_r2", "h1: port 30000 is already in use"},
                      {"pp1-tp4-ep1_c2_r1", busy},
                      {"pp1-tp4-ep1_c2_r2", busy}};
  auto out = RunSamples(Options(), spec_, plan_, engine, [](const RunProgress&) {});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.error().kind, ErrorKind::kIncomplete);
  EXPECT_NE(out.error().message.find("pp1-tp4-ep1_c2_r1 and pp1-tp4-ep1_c2_r2 failed preflight "
                                     "for the same cause, which will not go away by itself: " +
                                     busy),
            std::string::npos)
      << out.error().message;
  // A different cause in between did not stop it; nothing ran after the second.
  EXPECT_EQ(engine.ran, (std::vector<std::string>{"pp1-tp4-ep1_c1_r1", "pp1-tp4-ep1_c1_r2",
                                                  "pp1-tp4-ep1_c2_r1", "pp1-tp4-ep1_c2_r2"}));
  fs::path run;
  for (const auto& e : fs::directory_iterator(dir_ / "out")) run = e.path();
  auto manifest = evidence::ReadManifest(evidence::RunPaths{run.string()});
  ASSERT_TRUE(manifest.ok());
  EXPECT_EQ(manifest->size(), 4u);
}

// Deleting the lock file does not release the run directory: the lock is on
// the directory itself.
TEST_F(RunnerTest, DeletingTheLockFileDoesNotLetASecondProcessIn) {
  FakeEngine engine;
  Result<RunOutcome> second = MakeError("not run");
  engine.during_run = [&](const SampleContext& c) {
    if (c.id.str() != "pp1-tp4-ep1_c1_r2") return;
    fs::remove(c.paths->lock());
    FakeEngine other;
    RunOptions r = Options();
    r.resume_dir = c.paths->root;
    second = RunSamples(r, spec_, plan_, other, [](const RunProgress&) {});
    EXPECT_TRUE(other.ran.empty()) << "the second process ran samples";
  };
  auto out = RunSamples(Options(), spec_, plan_, engine, [](const RunProgress&) {});
  ASSERT_TRUE(out.ok()) << out.error().message;
  EXPECT_EQ(out->completed, 8);
  ASSERT_FALSE(second.ok());
  EXPECT_NE(second.error().message.find("is in use by another ppsearch process"), std::string::npos)
      << second.error().message;
}

// A run directory deleted during a sample: the run stops with an I/O error
// instead of recreating the directory and running on.
TEST_F(RunnerTest, ARunDirectoryDeletedMidRunStopsTheRun) {
  FakeEngine engine;
  engine.during_run = [&](const SampleContext& c) {
    if (c.id.str() == "pp1-tp4-ep1_c1_r2") fs::remove_all(c.paths->root);
  };
  auto out = RunSamples(Options(), spec_, plan_, engine, [](const RunProgress&) {});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.error().kind, ErrorKind::kIo);
  EXPECT_NE(out.error().message.find("was deleted or replaced"), std::string::npos)
      << out.error().message;
  EXPECT_EQ(engine.ran.size(), 2u);
  EXPECT_TRUE(fs::is_empty(dir_ / "out")) << "the run directory was recreated";
}

}  // namespace
}  // namespace ppsearch::run

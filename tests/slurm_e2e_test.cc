// The slurm launcher against a real Slurm cluster on this machine
// (slurm_cluster_fixture.h): munged, slurmctld and four slurmd, one per
// rehearsal node n0..n3 on 127.0.0.1..4. The search runs inside a real
// allocation (salloc), each node's server as a real `srun` step on that
// node's slurmd; `--slurm-submit` goes through real sbatch and the job runs
// the whole search; a killed runner's steps are found with squeue and ended
// with scancel by the resume. Without root or the Debian packages the
// cluster cannot start and these tests skip, saying what failed.

#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <cstdlib>
#include <regex>
#include <thread>

#include "real_run_fixture.h"
#include "slurm_cluster_fixture.h"

namespace ppsearch::testing {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

const char* const kHosts[] = {"n0", "n1", "n2", "n3"};

// The job id in a client's "... job N" line ("" if none).
std::string JobId(const std::string& text, const std::string& before) {
  std::smatch m;
  if (std::regex_search(text, m, std::regex(before + " ([0-9]+)"))) return m[1];
  return "";
}

class SlurmTest : public RealRunTest {
 protected:
  void TearDown() override {
    ::unsetenv("SLURM_JOB_ID");
    RealRunTest::TearDown();
  }
};

class SlurmClusterTest : public SlurmTest {
 protected:
  void SetUp() override {
    SlurmTest::SetUp();
    ::unsetenv("SLURM_JOB_ID");  // an allocation this test runs in belongs to another cluster
    std::vector<SlurmNode> nodes;
    for (int i = 0; i < 4; ++i) nodes.push_back({kHosts[i], "127.0.0." + std::to_string(i + 1)});
    const std::string why = cluster_.Start(nodes);
    if (!why.empty()) GTEST_SKIP() << "no Slurm cluster on this machine: " << why;
  }
  void TearDown() override {
    StopDaemons(runners_, 0);
    cluster_.Stop();
    SlurmTest::TearDown();
  }

  // A job holding the four nodes and their GPUs, as `salloc` gives one;
  // its id, or "" (with a failure) when it is not granted in time.
  std::string Allocate() {
    const ShellResult r =
        Shell("salloc --no-shell --immediate=20 --nodes=4 --exclusive --gres=gpu:8", 30);
    const std::string job = JobId(r.out, "Granted job allocation");
    EXPECT_FALSE(job.empty()) << r.out;
    return job;
  }

  // "JobState ExitCode" of a job slurmctld still knows, once it has ended
  // (bounded wait); what scontrol said if it does not end in time.
  std::string EndOfJob(const std::string& job, int limit_s) {
    const auto deadline = Clock::now() + std::chrono::seconds(limit_s);
    std::string said;
    while (Clock::now() < deadline) {
      said = Shell("scontrol show job " + job, 10).out;
      std::smatch state, code;
      if (std::regex_search(said, state, std::regex("JobState=([A-Z_]+)")) &&
          std::regex_search(said, code, std::regex("ExitCode=([0-9:]+)"))) {
        const std::string s = state[1];
        if (s != "PENDING" && s != "RUNNING" && s != "CONFIGURING" && s != "COMPLETING")
          return s + " " + code[1].str();
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    return "still running after " + std::to_string(limit_s) + " s: " + said;
  }

  // The names of the job's running steps.
  std::vector<std::string> StepNames(const std::string& job) {
    const ShellResult r = Shell("squeue --steps --noheader --format=%j --jobs=" + job, 10);
    if (r.status != 0) return {"(squeue failed: " + r.out + ")"};
    std::vector<std::string> names;
    std::istringstream in(r.out);
    for (std::string name; in >> name;) names.push_back(name);
    return names;
  }

  // The serve-sim processes that a step of `job` runs on `host`'s slurmd
  // (srun's own command line names serve-sim too, but only a step's tasks
  // carry SLURMD_NODENAME).
  std::vector<pid_t> StepServers(const std::string& host, const std::string& job) {
    std::vector<pid_t> out;
    for (pid_t p : ProcessesMentioning({"serve-sim", gpu_dir_ + "/" + host + " "})) {
      std::string env(1, '\n');
      env += ReadBinary("/proc/" + std::to_string(p) + "/environ");
      std::replace(env.begin(), env.end(), '\0', '\n');
      if (env.find("\nSLURMD_NODENAME=" + host + "\n") != std::string::npos &&
          env.find("\nSLURM_JOB_ID=" + job + "\n") != std::string::npos)
        out.push_back(p);
    }
    return out;
  }

  // `ppsearch run SPEC` inside a new allocation of the four nodes, as a
  // user would with salloc; its one sample must be ok. The job's id.
  std::string RunOneOkSampleInAnAllocation(const std::string& spec) {
    CommandResult r = RunCommand("salloc --immediate=20 --nodes=4 --exclusive --gres=gpu:8 " +
                                 bin_ + " run " + spec);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    const std::string job = JobId(r.err, "Granted job allocation");
    EXPECT_FALSE(job.empty()) << r.err;
    const auto v = Verdicts(RunDir());
    EXPECT_EQ(v.size(), 1u);
    for (const auto& [sample, j] : v) EXPECT_EQ(j["verdict"], "ok") << sample << j.dump();
    return job;
  }

  // How many steps of `job` this node's slurmd launched.
  int StepsLaunched(const std::string& node, const std::string& job) {
    const std::string log = ReadText(cluster_.NodeLog(node));
    int n = 0;
    for (size_t at = 0; (at = log.find("launch task StepId=" + job + ".", at)) != std::string::npos;
         ++at)
      ++n;
    return n;
  }

  LocalSlurmCluster cluster_;
  std::vector<pid_t> runners_;
};

TEST_F(SlurmClusterTest, EachNodeIsOneSrunStepInsideTheAllocation) {
  const std::string spec = WriteSpec("pp = [8]\nconcurrency = [8]\nrepeats = 1", "", "", "slurm",
                                     "[cluster.slurm]\nsrun_args = [\"--mpi=none\"]\n");
  const std::string job = RunOneOkSampleInAnAllocation(spec);
  ASSERT_FALSE(HasFailure());
  const auto v = Verdicts(RunDir());
  // Each node's own slurmd started its server and its nvidia-smi query.
  for (const char* host : kHosts)
    EXPECT_GE(StepsLaunched(host, job), 2) << host << ":\n" << ReadText(cluster_.NodeLog(host));
  const std::string commands = ReadText(RunDir() / "metadata" / "commands.txt");
  EXPECT_NE(commands.find("n3: srun --nodes=1 --ntasks=1 --nodelist=n3 --overlap --job-name="),
            std::string::npos)
      << commands;
  EXPECT_NE(commands.find("--mpi=none --kill-on-bad-exit=1"), std::string::npos) << commands;
  EXPECT_EQ(EndOfJob(job, 10), "COMPLETED 0:0") << "salloc released the allocation";
  EXPECT_TRUE(LeftoverServers().empty());
}

// A disaggregated deployment in an allocation: each pool's server is a step
// on its node, and the router a second step on the first prefill node
// (srun --overlap), all ended when the sample ends.
TEST_F(SlurmClusterTest, ADisaggregatedDeploymentsServersAndRouterAreSrunSteps) {
  const std::string spec = WritePdSpec("concurrency = [8]\nrepeats = 1", "", "[\"n0\"]", 1, "slurm",
                                       "[cluster.slurm]\nsrun_args = [\"--mpi=none\"]\n");
  const std::string job = RunOneOkSampleInAnAllocation(spec);
  ASSERT_FALSE(HasFailure());
  const auto v = Verdicts(RunDir());
  // n0: its prefill server, the router and the GPU query; n1: its decode
  // server and the query; n2 runs nothing but the checks.
  EXPECT_GE(StepsLaunched("n0", job), 3) << ReadText(cluster_.NodeLog("n0"));
  EXPECT_GE(StepsLaunched("n1", job), 2) << ReadText(cluster_.NodeLog("n1"));
  const std::string sample = v.begin()->first;
  EXPECT_NE(ReadText(RunDir() / "service" / sample / "n0.router.log").find("Starting router on"),
            std::string::npos);
  const std::string commands = ReadText(RunDir() / "metadata" / "commands.txt");
  EXPECT_NE(commands.find("n0 (router): srun --nodes=1 --ntasks=1 --nodelist=n0 --overlap "
                          "--job-name="),
            std::string::npos)
      << commands;
  EXPECT_EQ(EndOfJob(job, 10), "COMPLETED 0:0") << "salloc released the allocation";
  EXPECT_TRUE(LeftoverServers().empty());
  EXPECT_TRUE(LeftoverRouters().empty());
}

TEST_F(SlurmTest, OutsideAnAllocationItSaysHowToGetOne) {
  ::unsetenv("SLURM_JOB_ID");
  const std::string spec = WriteSpec("pp = [8]\nconcurrency = [8]\nrepeats = 1", "", "", "slurm");
  CommandResult r = Run("run " + spec);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("SLURM_JOB_ID is not set"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--slurm-submit"), std::string::npos) << r.err;
}

TEST_F(SlurmClusterTest, SlurmSubmitWritesAJobScriptThatRunsTheWholeSearch) {
  const std::string spec =
      WriteSpec("pp = [4, 8]\nconcurrency = [8]\nrepeats = 1", "", "", "slurm",
                "[cluster.slurm]\npartition = \"gpu\"\ntime_limit = \"04:00:00\"\n"
                "sbatch_args = [\"--gres=gpu:8\"]\n");
  CommandResult r = Run("run " + spec + " --slurm-submit --run-id k3-night");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string job = JobId(r.out, "Submitted batch job");
  ASSERT_FALSE(job.empty()) << r.out;
  const fs::path script = fs::path(results_) / "k3-night.sbatch";
  const std::string text = ReadText(script);
  for (const char* line :
       {"#SBATCH --nodes=4\n", "#SBATCH --nodelist=n0,n1,n2,n3\n", "#SBATCH --partition=gpu\n",
        "#SBATCH --time=04:00:00\n", "#SBATCH --gres=gpu:8\n", "#SBATCH --ntasks-per-node=1\n"})
    EXPECT_NE(text.find(line), std::string::npos) << line << text;
  EXPECT_NE(text.find(" run " + spec + " --engine sglang --run-id k3-night\n"), std::string::npos)
      << text;

  // The job runs the search from its first node, each server an srun step.
  EXPECT_EQ(EndOfJob(job, 60), "COMPLETED 0:0")
      << ReadText(fs::path(results_) / "k3-night.sbatch.out");
  EXPECT_NE(ReadText(cluster_.NodeLog("n0")).find("Launching batch job " + job), std::string::npos);
  const fs::path run = fs::path(results_) / "k3-night";
  const auto v = Verdicts(run);
  EXPECT_EQ(v.size(), 2u) << ReadText(run / "manifest.jsonl");
  for (const auto& [sample, j] : v) EXPECT_EQ(j["verdict"], "ok") << sample << " " << j.dump();
  for (const char* host : kHosts) EXPECT_GE(StepsLaunched(host, job), 2) << host;
  EXPECT_NE(ReadText(fs::path(results_) / "k3-night.sbatch.out").find("run directory:"),
            std::string::npos);
  EXPECT_TRUE(LeftoverServers().empty());
}

TEST_F(SlurmClusterTest, KilledRunnerThenResumeCancelsItsStepsWithScancel) {
  const std::string job = Allocate();
  ASSERT_FALSE(job.empty());
  ::setenv("SLURM_JOB_ID", job.c_str(), 1);
  const std::string spec =
      WriteSpec("pp = [8]\nconcurrency = [8]\nrepeats = 2", "", "", "slurm", "", 20);
  const std::string out_file = (dir_ / "killed.out").string();
  pid_t runner = StartDaemon({bin_, "run", spec}, out_file);
  ASSERT_GT(runner, 0);
  runners_.push_back(runner);

  // Bounded wait: one sample done, the next one's four servers running in
  // their steps.
  fs::path run;
  std::vector<fs::path> state_files;
  auto servers_up = [&] {
    for (const char* host : kHosts)
      if (StepServers(host, job).size() != 1) return false;
    return true;
  };
  bool ready = false;
  const auto deadline = Clock::now() + std::chrono::seconds(60);
  while (!ready && Clock::now() < deadline && ::waitpid(runner, nullptr, WNOHANG) == 0) {
    run = RunDir();
    state_files.clear();
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(run / "state" / "servers", ec))
      if (e.path().extension() == ".json") state_files.push_back(e.path());
    ready = !run.empty() && CountState(run, "pp8-tp4-ep4_c8_r1", "completed") == 1 &&
            state_files.size() == 4 && servers_up();
    if (!ready) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ::kill(runner, SIGKILL);
  ::waitpid(runner, nullptr, 0);
  runners_.clear();
  ASSERT_TRUE(ready) << "the runner ended or stalled before its second sample's servers ran in "
                        "their steps:\n"
                     << ReadText(out_file);

  // The runner is gone; its servers still run, in the steps it named.
  std::vector<std::string> tags;
  for (const auto& f : state_files) {
    const auto j = nlohmann::json::parse(ReadText(f), nullptr, false);
    ASSERT_TRUE(j.is_object() && j.value("slurm_job", "") == job) << ReadText(f);
    tags.push_back(j.value("tag", ""));
  }
  const std::vector<std::string> steps = StepNames(job);
  for (const auto& tag : tags)
    EXPECT_NE(std::find(steps.begin(), steps.end(), tag), steps.end()) << tag;
  EXPECT_TRUE(servers_up());

  CommandResult resumed = Run("run --resume " + run.string());
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err << resumed.out;
  for (const auto& tag : tags)
    EXPECT_NE(resumed.err.find("stopped Slurm step '" + tag + "'"), std::string::npos)
        << resumed.err;
  EXPECT_TRUE(StepNames(job).empty()) << "steps outlived the resume";
  // The servers and the killed runner's srun clients (whose command lines
  // name serve-sim too) end with their steps.
  const auto end = Clock::now() + std::chrono::seconds(5);
  while (!LeftoverServers().empty() && Clock::now() < end)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_TRUE(LeftoverServers().empty());
  EXPECT_TRUE(!fs::exists(run / "state" / "servers") || fs::is_empty(run / "state" / "servers"));
  EXPECT_EQ(CountState(run, "pp8-tp4-ep4_c8_r2", "completed"), 1);
  EXPECT_EQ(CountState(run, "pp8-tp4-ep4_c8_r1", "completed"), 1);
}

}  // namespace
}  // namespace ppsearch::testing

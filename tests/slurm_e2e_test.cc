// The slurm launcher against recorded srun/squeue/scancel/sbatch behaviour:
// stand-ins on PATH that log their arguments and do what Slurm would do on
// one machine (srun runs its command as the single task on the named node;
// sbatch answers "Submitted batch job N"). Debian's slurm-wlm daemons are not
// started here (see docs/cluster.md, "Launchers").

#include <cstdlib>

#include "real_run_fixture.h"

namespace ppsearch::testing {
namespace {

namespace fs = std::filesystem;

class SlurmTest : public RealRunTest {
 protected:
  void SetUp() override {
    RealRunTest::SetUp();
    bin_dir_ = dir_ / "slurm-bin";
    fs::create_directories(bin_dir_);
    log_ = (dir_ / "slurm.log").string();
    Script("srun",
           "echo \"srun $*\" >> \"$FAKE_SLURM_LOG\"\n"
           "while [ $# -gt 0 ]; do case \"$1\" in --*) shift;; *) break;; esac; done\n"
           "exec \"$@\"\n");
    Script("squeue", "echo \"squeue $*\" >> \"$FAKE_SLURM_LOG\"\n");
    Script("scancel", "echo \"scancel $*\" >> \"$FAKE_SLURM_LOG\"\n");
    Script("sbatch",
           "echo \"sbatch $*\" >> \"$FAKE_SLURM_LOG\"\necho \"Submitted batch job 77\"\n");
    const char* path = std::getenv("PATH");
    old_path_ = path ? path : "";
    ::setenv("PATH", (bin_dir_.string() + ":" + old_path_).c_str(), 1);
    ::setenv("FAKE_SLURM_LOG", log_.c_str(), 1);
  }
  void TearDown() override {
    ::setenv("PATH", old_path_.c_str(), 1);
    ::unsetenv("SLURM_JOB_ID");
    RealRunTest::TearDown();
  }
  void Script(const std::string& name, const std::string& body) {
    const fs::path p = bin_dir_ / name;
    std::ofstream(p) << "#!/bin/sh\n" << body;
    fs::permissions(p, fs::perms::owner_all | fs::perms::group_read | fs::perms::others_read);
  }

  fs::path bin_dir_;
  std::string log_;
  std::string old_path_;
};

TEST_F(SlurmTest, EachNodeIsOneSrunStepInsideTheAllocation) {
  ::setenv("SLURM_JOB_ID", "42", 1);
  const std::string spec = WriteSpec("pp = [8]\nconcurrency = [8]\nrepeats = 1", "", "", "slurm",
                                     "[cluster.slurm]\nsrun_args = [\"--mpi=none\"]\n");
  CommandResult r = Run("run " + spec);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto v = Verdicts(RunDir());
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v.begin()->second["verdict"], "ok") << v.begin()->second.dump();
  const std::string log = ReadText(log_);
  for (const char* host : {"n0", "n1", "n2", "n3"}) {
    EXPECT_NE(log.find(std::string("srun --nodes=1 --ntasks=1 --nodelist=") + host +
                       " --overlap --job-name=ppsearch-"),
              std::string::npos)
        << log;
  }
  EXPECT_NE(log.find("--mpi=none --kill-on-bad-exit=1"), std::string::npos) << log;
  EXPECT_NE(log.find("--job-name=ppsearch-query --mpi=none --quiet"), std::string::npos)
      << "nvidia-smi runs as a step on each node";
  EXPECT_NE(ReadText(RunDir() / "metadata" / "commands.txt").find("n3: srun --nodes=1"),
            std::string::npos);
  EXPECT_TRUE(LeftoverServers().empty());
}

TEST_F(SlurmTest, OutsideAnAllocationItSaysHowToGetOne) {
  ::unsetenv("SLURM_JOB_ID");
  const std::string spec = WriteSpec("pp = [8]\nconcurrency = [8]\nrepeats = 1", "", "", "slurm");
  CommandResult r = Run("run " + spec);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("SLURM_JOB_ID is not set"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--slurm-submit"), std::string::npos) << r.err;
}

TEST_F(SlurmTest, SlurmSubmitWritesAJobScriptThatRunsTheWholeSearch) {
  const std::string spec =
      WriteSpec("pp = [4, 8]\nconcurrency = [8]\nrepeats = 1", "", "", "slurm",
                "[cluster.slurm]\npartition = \"gpu\"\ntime_limit = \"04:00:00\"\n"
                "sbatch_args = [\"--gres=gpu:8\"]\n");
  CommandResult r = Run("run " + spec + " --slurm-submit --run-id k3-night");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("Submitted batch job 77"), std::string::npos) << r.out;
  const fs::path script = fs::path(results_) / "k3-night.sbatch";
  EXPECT_NE(ReadText(log_).find("sbatch " + script.string()), std::string::npos);
  const std::string text = ReadText(script);
  for (const char* line :
       {"#SBATCH --nodes=4\n", "#SBATCH --nodelist=n0,n1,n2,n3\n", "#SBATCH --partition=gpu\n",
        "#SBATCH --time=04:00:00\n", "#SBATCH --gres=gpu:8\n", "#SBATCH --ntasks-per-node=1\n"})
    EXPECT_NE(text.find(line), std::string::npos) << line << text;
  EXPECT_NE(text.find(" run " + spec + " --engine sglang --run-id k3-night\n"), std::string::npos)
      << text;
  EXPECT_FALSE(fs::exists(fs::path(results_) / "k3-night")) << "the job makes the run directory";
}

}  // namespace
}  // namespace ppsearch::testing

// The checks a new user (or a hostile evidence directory) meets first,
// through the built binary: validate runs every offline check, unknown
// commands get a suggestion, directories are called directories, damaged
// evidence never aborts `report`, an archived (read-only) run is still
// reported.

#include <unistd.h>

#include <fstream>

#include "cli_fixture.h"

namespace ppsearch::testing {
namespace {

namespace fs = std::filesystem;

constexpr const char* kSpec = "examples/kimi-k3-pp-search.toml";

class ChecksE2e : public CliTest {
 protected:
  // The only run directory under `results`.
  fs::path RunDir(const fs::path& results) {
    fs::path found;
    for (const auto& e : fs::directory_iterator(results)) found = e.path();
    return found;
  }
  void Append(const fs::path& path, const std::string& bytes) {
    std::ofstream out(path, std::ios::app | std::ios::binary);
    out << bytes;
  }
};

TEST_F(ChecksE2e, ValidateRunsThePlannerChecks) {
  CommandResult ok = Run(std::string("validate ") + kSpec);
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_NE(ok.out.find(": ok (4 layouts x 2 concurrency x 3 repeats = 24 samples)"),
            std::string::npos);

  CommandResult model = Run(std::string("validate ") + kSpec + " --set engine.model_config='" +
                            (dir_ / "none.json").string() + "'");
  EXPECT_EQ(model.exit_code, 2);
  EXPECT_NE(model.err.find((dir_ / "none.json").string()), std::string::npos) << model.err;

  CommandResult hw = Run(std::string("validate ") + kSpec + " --set cluster.hardware=rtx-9999");
  EXPECT_EQ(hw.exit_code, 2);
  EXPECT_NE(hw.err.find("rtx-9999"), std::string::npos) << hw.err;

  CommandResult layout =
      Run(std::string("validate ") + kSpec + " --set sweep.pp=[2] --set sweep.tp=[8]");
  EXPECT_EQ(layout.exit_code, 2) << layout.err;
  EXPECT_NE(layout.err.find("PP2/TP8/EP4 uses 16 GPUs but the cluster has 32"), std::string::npos)
      << layout.err;

  CommandResult context =
      Run(std::string("validate ") + kSpec + " --set workload.input_tokens=10000000");
  EXPECT_EQ(context.exit_code, 2);
  EXPECT_NE(context.err.find("cannot serve requests of 10,000,000 input + 1 output tokens: the "
                             "context length is 1,048,576"),
            std::string::npos)
      << context.err;
  CommandResult simulate =
      Run(std::string("simulate ") + kSpec + " --set workload.input_tokens=10000000");
  EXPECT_EQ(simulate.exit_code, 2) << simulate.out;
}

TEST_F(ChecksE2e, UnknownCommandGetsADidYouMean) {
  CommandResult r = Run("valdate examples/kimi-k3-pp-search.toml");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err.rfind("error: unknown command 'valdate' (did you mean 'validate'?); commands: "
                        "validate, plan,",
                        0),
            0u)
      << r.err;
}

TEST_F(ChecksE2e, ADirectoryGivenAsAFileIsSaidToBeOne) {
  CommandResult spec = Run("validate " + dir_.string());
  EXPECT_EQ(spec.exit_code, 2);
  EXPECT_EQ(spec.err,
            "error: cannot read " + dir_.string() + ": is a directory, expected a regular file\n");
  CommandResult calibration =
      Run(std::string("simulate ") + kSpec + " --calibration " + dir_.string());
  EXPECT_EQ(calibration.exit_code, 2);
  EXPECT_NE(calibration.err.find("is a directory"), std::string::npos) << calibration.err;
}

TEST_F(ChecksE2e, CalibrateDoesNotCreateTheOutputDirectory) {
  const std::string out = (dir_ / "no/such/dir/c.json").string();
  CommandResult r = Run(std::string("calibrate ") + kSpec +
                        " --measured data/baseline/pp1-tp32-ep4.csv -o " + out);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "error: -o " + out + ": the directory " + (dir_ / "no/such/dir").string() +
                       " does not exist\n");
  EXPECT_FALSE(fs::exists(dir_ / "no"));
}

// Bytes that are not UTF-8 in a node's log: the report is still written and
// the exit code is the usual one.
TEST_F(ChecksE2e, ReportSurvivesInvalidUtf8AndNamesMissingEvidence) {
  const fs::path results = dir_ / "r";
  CommandResult run =
      Run(std::string("run ") + kSpec + " --engine sim --set experiment.results_dir='" +
          results.string() + "' --set sweep.pp=[8]");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const fs::path dir = RunDir(results);
  Append(dir / "service/pp8-tp4-ep4_c8_r1/601.log", "NCCL error \xff\xfe\n");
  fs::remove(dir / "gpu/pp8-tp4-ep4_c16_r2/603.csv");
  CommandResult rep = Run("report " + dir.string() + " --json");
  EXPECT_EQ(rep.exit_code, 4) << rep.err;
  EXPECT_EQ(rep.err.find("internal error"), std::string::npos) << rep.err;
  const std::string md = ReadText(dir / "report.md");
  EXPECT_NE(md.find("NCCL failure in service/pp8-tp4-ep4_c8_r1/601.log:"), std::string::npos) << md;
  EXPECT_NE(md.find("gpu/pp8-tp4-ep4_c16_r2/603.csv is missing"), std::string::npos) << md;
  EXPECT_NE(ReadText(dir / "results.csv").find(",log_findings\n"), std::string::npos);
}

// An archived run on a read-only mount: `report` prints the report, writes
// nothing, says so in one line on stderr and exits as the report would. As
// root chmod does not stop writes, so the run directory is bind-mounted
// read-only in a mount namespace of its own (unshare -m); elsewhere it is
// made read-only with chmod.
TEST_F(ChecksE2e, ReportOnAReadOnlyRunPrintsWithoutWriting) {
  const fs::path results = dir_ / "r";
  CommandResult run =
      Run(std::string("run ") + kSpec + " --engine sim --set experiment.results_dir='" +
          results.string() + "' --set sweep.pp=[8] --set sweep.repeats=1");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const std::string dir = RunDir(results).string();
  fs::remove(dir + "/report.md");
  const std::string report = bin_ + " report " + dir;
  const CommandResult r =
      RunShell(::geteuid() == 0
                   ? "unshare -m sh -c 'mount --bind " + dir + " " + dir +
                         " && mount -o remount,bind,ro " + dir + " || exit 97; exec " + report + "'"
                   : "chmod -R a-w " + dir + " && " + report + "; rc=$?; chmod -R u+w " + dir +
                         "; exit $rc");
  if (r.exit_code == 97)
    GTEST_SKIP() << "no read-only bind mount here (unshare -m, mount): " << r.err;
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("PP / TP / EP"), std::string::npos) << r.out;
  const std::string note = "note: " + dir + " cannot be written (" +
                           (::geteuid() == 0 ? "Read-only file system" : "Permission denied") +
                           "): results.csv, summary.csv, summary.json, report.md and report.html "
                           "were not rewritten\n";
  EXPECT_NE(r.err.find(note), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir + "/report.md"));
}

}  // namespace
}  // namespace ppsearch::testing

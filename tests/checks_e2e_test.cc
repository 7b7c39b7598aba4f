// The checks a new user (or a hostile evidence directory) meets first,
// through the built binary: validate runs every offline check, unknown
// commands get a suggestion, directories are called directories, damaged
// evidence never aborts `report`, an archived (read-only) run is still
// reported.

#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <fstream>
#include <utility>

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
  // Run(), stopped after `seconds` (coreutils' timeout): a command that
  // would block gives exit code 124 instead of hanging the test.
  CommandResult RunWithin(int seconds, const std::string& args) {
    const std::string bin = bin_;
    bin_ = "timeout -k 5 " + std::to_string(seconds) + " " + bin;
    CommandResult result = Run(args);
    bin_ = bin;
    return result;
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

  // The local files run reads before its first sample, both at once.
  const std::string none = (dir_ / "none").string();
  CommandResult files = Run(std::string("validate ") + kSpec + " --set 'engine.patches=[\"" + none +
                            ".patch\"]' --set 'cluster.sudo.steps=[\"stop\"]' --set " +
                            "cluster.sudo.password_file='" + none + "'");
  EXPECT_EQ(files.exit_code, 2) << files.out;
  EXPECT_NE(files.err.find("key 'engine.patches[0]': cannot hash the file it names: "),
            std::string::npos)
      << files.err;
  EXPECT_NE(files.err.find("cannot read the sudo password file (cluster.sudo.password_file): "),
            std::string::npos)
      << files.err;
  EXPECT_NE(files.err.find(": 2 errors"), std::string::npos) << files.err;
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

// Inputs named by mistake: a device that never ends, a FIFO nobody writes
// to, a file far larger than any input. Each is refused at once, saying what
// it is; none is read into memory and none blocks (each command is stopped
// after 30 s, which reads as exit code 124).
TEST_F(ChecksE2e, InputsThatAreNotRegularFilesOrTooLargeAreRefusedAtOnce) {
  const std::string fifo = (dir_ / "fifo").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const std::string big = (dir_ / "big.csv").string();
  std::ofstream(big) << "pp,tp,ep,concurrency,input_tps_median\n";
  fs::resize_file(big, (uint64_t{512} << 20) + 1);  // sparse: no disk space used
  const std::pair<std::string, std::string> inputs[] = {
      {"/dev/zero", "is a character device, expected a regular file"},
      {fifo, "is a FIFO, expected a regular file"},
      {big, "larger than 512 MiB, the most ppsearch reads from one file"}};
  const fs::path results = dir_ / "results";
  for (const auto& [path, what] : inputs) {
    const std::string cannot = "cannot read " + path + ": " + what;
    CommandResult calibration =
        RunWithin(30, std::string("simulate ") + kSpec + " --calibration " + path);
    EXPECT_EQ(calibration.exit_code, 2) << path;
    EXPECT_EQ(calibration.err, "error: " + cannot + "\n");

    const std::string baseline = " --set baseline.import_csv='" + path + "'";
    CommandResult validate = RunWithin(30, std::string("validate ") + kSpec + baseline);
    EXPECT_EQ(validate.exit_code, 2) << path;
    EXPECT_NE(validate.err.find("key 'baseline.import_csv': " + cannot), std::string::npos)
        << validate.err;
    CommandResult run =
        RunWithin(30, std::string("run ") + kSpec + " --engine sim" + baseline +
                          " --set experiment.results_dir='" + results.string() + "'");
    EXPECT_EQ(run.exit_code, 2) << path;
    EXPECT_NE(run.err.find("error: --set baseline.import_csv=" + path +
                           ": key 'baseline.import_csv': " + cannot + "\n"),
              std::string::npos)
        << run.err;
    EXPECT_FALSE(fs::exists(results)) << "refused before a run directory exists";

    CommandResult compare = RunWithin(30, "compare data/baseline/pp1-tp32-ep4.csv " + path);
    EXPECT_EQ(compare.exit_code, 2) << path;
    EXPECT_EQ(compare.err, "error: B: " + cannot + "\n");

    CommandResult model = RunWithin(30, "model " + path);
    EXPECT_EQ(model.exit_code, 2) << path;
    EXPECT_EQ(model.err, "error: " + cannot + "\n");
    CommandResult model_config = RunWithin(
        30, std::string("validate ") + kSpec + " --set engine.model_config='" + path + "'");
    EXPECT_EQ(model_config.exit_code, 2) << path;
    EXPECT_NE(model_config.err.find("error: " + cannot + "\n"), std::string::npos)
        << model_config.err;
  }
}

// A run id names a directory and is a word of a job script's command line:
// one that reads as an option, or too long for a file name with the suffixes
// a run adds, is refused before anything is written.
TEST_F(ChecksE2e, RunIdIsAShortNameThatIsNoOption) {
  const std::string results = " --set experiment.results_dir='" + (dir_ / "r").string() + "'";
  const std::string rule =
      "' must be letters, digits, '.', '_' or '-', starting with a letter or digit, at most 128 "
      "characters (it names the run directory)\n";
  CommandResult option = Run(std::string("run ") + kSpec + " --engine sim --run-id=-rf" + results);
  EXPECT_EQ(option.exit_code, 2);
  EXPECT_EQ(option.err, "error: --run-id/RUN_ID '-rf" + rule);
  CommandResult long_id = Run(std::string("run ") + kSpec + " --engine sim --run-id " +
                              std::string(300, 'a') + results);
  EXPECT_EQ(long_id.exit_code, 2);
  EXPECT_EQ(long_id.err,
            "error: --run-id/RUN_ID '" + std::string(80, 'a') + "... (300 bytes)" + rule);
  EXPECT_FALSE(fs::exists(dir_ / "r"));
  // A name whose default run id would be too long refuses a run without
  // --run-id, and validate says so; with one, the run goes on.
  const std::string name = " --set experiment.name=" + std::string(128, 'n');
  CommandResult unnamed = Run(std::string("run ") + kSpec + " --engine sim" + name + results);
  EXPECT_EQ(unnamed.exit_code, 2);
  EXPECT_NE(unnamed.err.find("expected at most 108 characters for a run without --run-id, got "
                             "128"),
            std::string::npos)
      << unnamed.err;
  EXPECT_FALSE(fs::exists(dir_ / "r"));
  EXPECT_EQ(Run(std::string("validate ") + kSpec + name).exit_code, 2);
  CommandResult named = Run(std::string("run ") + kSpec + " --engine sim --run-id short" + name +
                            " --set 'sweep.pp=[4]' --set 'sweep.concurrency=[8]' --set "
                            "sweep.repeats=1" +
                            results);
  EXPECT_EQ(named.exit_code, 0) << named.err;
  EXPECT_TRUE(fs::exists(dir_ / "r" / "short" / "summary.csv"));
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
  // The verdict cell; the (empty, one-token) decode columns, dp and goodput follow it.
  EXPECT_NE(ReadText(dir / "results.csv").find(",log_findings,,,,,,,1,"), std::string::npos);
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
      RunCommand(::geteuid() == 0 ? "unshare -m sh -c 'mount --bind " + dir + " " + dir +
                                        " && mount -o remount,bind,ro " + dir +
                                        " || exit 97; exec " + report + "'"
                                  : "chmod -R a-w " + dir + " && " + report +
                                        "; rc=$?; chmod -R u+w " + dir + "; exit $rc");
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

// What the planner warns of one layout reaches the report's checks: the
// example names no SGLang version, so its PP8 memory follows the state-pool
// rule of 0.5.17 and later, and the report says so; with the version named,
// it does not.
TEST_F(ChecksE2e, TheReportCarriesThePlannersLayoutWarnings) {
  const std::string warning =
      "Layout warning: --set sweep.pp=[8]: key 'sweep.pp[0]': PP8/TP4/EP4 "
      "sizes its linear-attention state pool as SGLang 0.5.17 and later do";
  for (const std::string version : {"", "0.5.18"}) {
    const fs::path results = dir_ / ("r" + version);
    CommandResult run =
        Run(std::string("run ") + kSpec + " --engine sim --set experiment.results_dir='" +
            results.string() + "' --set sweep.pp=[8] --set sweep.repeats=1" +
            (version.empty() ? "" : " --set engine.version=" + version));
    ASSERT_EQ(run.exit_code, 0) << run.err;
    std::ifstream in(RunDir(results) / "report.md");
    const std::string report((std::istreambuf_iterator<char>(in)),
                             std::istreambuf_iterator<char>());
    EXPECT_EQ(report.find(warning) != std::string::npos, version.empty()) << report;
  }
}

}  // namespace
}  // namespace ppsearch::testing

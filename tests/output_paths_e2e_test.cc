// What every command refuses before it writes or simulates anything,
// through the built binary: an output path that is a FIFO or device (the
// rename would replace it), an output that names one of the command's own
// inputs, and values that once passed `validate` or `search` only to fail
// or mislead later.

#include <sys/stat.h>

#include <fstream>

#include "cli_fixture.h"

namespace ppsearch::testing {
namespace {

namespace fs = std::filesystem;

constexpr const char* kSpec = "examples/kimi-k3-pp-search.toml";

class OutputPathsE2e : public CliTest {
 protected:
  std::string Fifo() {
    const std::string path = (dir_ / "out.fifo").string();
    EXPECT_EQ(::mkfifo(path.c_str(), 0600), 0);
    return path;
  }
  static bool IsFifo(const std::string& path) {
    struct stat st {};
    return ::lstat(path.c_str(), &st) == 0 && S_ISFIFO(st.st_mode);
  }
};

TEST_F(OutputPathsE2e, AnOutputThatIsAFifoOrDeviceIsRefusedAndLeftAsItIs) {
  const std::string fifo = Fifo();
  const std::string refused =
      ": is a FIFO, expected a regular file or a new path; ppsearch does not replace it\n";
  const std::vector<std::pair<std::string, std::string>> commands = {
      {std::string("search ") + kSpec + " --pp 4 --html " + fifo, "--html"},
      {std::string("search ") + kSpec + " --pp 4 --emit-spec " + fifo, "--emit-spec"},
      {std::string("simulate ") + kSpec + " --trace " + fifo, "--trace"},
      {std::string("simulate ") + kSpec + " --html " + fifo, "--html"},
      {std::string("calibrate ") + kSpec + " --measured x.csv -o " + fifo, "-o"},
      {"nsys x.sqlite -o " + fifo, "-o"},
      {"bench --url http://127.0.0.1:9 -n 1 --records " + fifo, "--records"},
  };
  for (const auto& [args, flag] : commands) {
    CommandResult r = Run(args);
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.err;
    EXPECT_EQ(r.err, "error: " + flag + " " + fifo + refused) << args;
    EXPECT_TRUE(IsFifo(fifo)) << args;
  }
}

// A file that cannot be written is an I/O failure, exit 1, from every
// command, found before any work: here a regular file stands where the
// output's directory would be (tests run as root, which a read-only
// directory would not stop).
TEST_F(OutputPathsE2e, AnOutputThatCannotBeWrittenExitsOneFromEveryCommand) {
  const std::string file = (dir_ / "a-file").string();
  std::ofstream(file) << "not a directory\n";
  const std::string cannot =
      ": " + file + " is a file, so the directory " + file + " cannot be created to hold it\n";
  const std::vector<std::pair<std::string, std::string>> commands = {
      {std::string("simulate ") + kSpec + " --html ", "--html"},
      {std::string("simulate ") + kSpec + " --trace ", "--trace"},
      {std::string("calibrate ") + kSpec + " --measured x.csv -o ", "-o"},
      {std::string("search ") + kSpec + " --pp 4 --html ", "--html"},
      {std::string("search ") + kSpec + " --pp 4 --emit-spec ", "--emit-spec"},
      {"nsys x.sqlite -o ", "-o"},
      {"bench --url http://127.0.0.1:9 -n 1 --records ", "--records"},
  };
  for (const auto& [args, flag] : commands) {
    const std::string out = file + "/out";
    CommandResult r = Run(args + out);
    EXPECT_EQ(r.exit_code, 1) << args << "\n" << r.err;
    EXPECT_EQ(r.err, "error: " + flag + " " + out + cannot) << args;
  }
  // A run whose results directory cannot be made: the same code.
  CommandResult run = Run(std::string("run ") + kSpec +
                          " --engine sim --set 'experiment.results_dir=\"" + file + "/results\"'");
  EXPECT_EQ(run.exit_code, 1) << run.err;
  EXPECT_NE(run.err.find(file + "/results"), std::string::npos) << run.err;
}

TEST_F(OutputPathsE2e, AnOutputThatNamesOneOfTheCommandsInputsIsRefused) {
  // A copy of the spec: refused before it is read, so its relative paths
  // need not resolve from here.
  const std::string spec = (dir_ / "spec.toml").string();
  fs::copy_file(kSpec, spec);
  const std::string before = ReadText(spec);
  CommandResult self = Run("search " + spec + " --emit-spec " + spec);
  EXPECT_EQ(self.exit_code, 2) << self.err;
  EXPECT_EQ(self.err, "error: --emit-spec " + spec + ": is the spec (" + spec +
                          "); an output must not replace one of the command's own inputs\n");
  EXPECT_EQ(ReadText(spec), before);

  const std::string measured = (dir_ / "medians.csv").string();
  std::ofstream(measured) << "layout,concurrency\n";
  CommandResult calibrate =
      Run(std::string("calibrate ") + kSpec + " --measured " + measured + " -o " + measured);
  EXPECT_EQ(calibrate.exit_code, 2) << calibrate.err;
  EXPECT_EQ(calibrate.err, "error: -o " + measured + ": is a --measured file (" + measured +
                               "); an output must not replace one of the command's own inputs\n");
  EXPECT_EQ(ReadText(measured), "layout,concurrency\n");

  const std::string page = (dir_ / "page").string();
  CommandResult both =
      Run(std::string("search ") + kSpec + " --pp 4 --emit-spec " + page + " --html " + page);
  EXPECT_EQ(both.exit_code, 2) << both.err;
  EXPECT_EQ(both.err, "error: --emit-spec " + page + ": is the --html page (" + page +
                          "); an output must not replace one of the command's own inputs\n");
  EXPECT_FALSE(fs::exists(page));
}

// Values that passed validate (or search) and failed or misled later.
TEST_F(OutputPathsE2e, ValuesThatCannotMeanAnythingAreRefusedByValidate) {
  CommandResult backend =
      Run(std::string("validate ") + kSpec + " --set engine.args.moe-a2a-backend=evil");
  EXPECT_EQ(backend.exit_code, 2);
  EXPECT_NE(backend.err.find("key 'engine.args.moe-a2a-backend': \"evil\" is not an SGLang "
                             "moe-a2a-backend (none, deepep,"),
            std::string::npos)
      << backend.err;
  for (const char* mrr : {"0", "-1", "2147483648"}) {
    CommandResult r =
        Run(std::string("validate ") + kSpec + " --set engine.args.max-running-requests=" + mrr);
    EXPECT_EQ(r.exit_code, 2) << mrr;
    EXPECT_NE(r.err.find("key 'engine.args.max-running-requests': expected a whole number in "
                         "[1, 65536] (requests a scheduler runs at once), got " +
                         std::string(mrr)),
              std::string::npos)
        << r.err;
  }
  CommandResult zero = Run(std::string("validate ") + kSpec + " --set profile.file=/dev/zero");
  EXPECT_EQ(zero.exit_code, 2);
  EXPECT_NE(zero.err.find("key 'profile.file': /dev/zero is not a regular file; expected an "
                          "Nsight Systems SQLite export"),
            std::string::npos)
      << zero.err;
  const std::string text = (dir_ / "notes.sqlite").string();
  std::ofstream(text) << "not a database, but long enough to read sixteen bytes of\n";
  CommandResult not_sqlite = Run(std::string("validate ") + kSpec + " --set profile.file=" + text);
  EXPECT_EQ(not_sqlite.exit_code, 2);
  EXPECT_NE(not_sqlite.err.find("key 'profile.file': " + text + " is not an SQLite database"),
            std::string::npos)
      << not_sqlite.err;
  CommandResult concurrency = Run(std::string("search ") + kSpec + " --pp 4 --concurrency 65537 " +
                                  "--emit-spec " + (dir_ / "run.toml").string());
  EXPECT_EQ(concurrency.exit_code, 2);
  EXPECT_EQ(concurrency.err, "error: --concurrency: expected values <= 65536, got 65537\n");
  CommandResult rate = Run(std::string("search ") + kSpec + " --pp 4 --request-rate 1e-308");
  EXPECT_EQ(rate.exit_code, 2);
  EXPECT_EQ(rate.err, "error: --request-rate: expected requests/s >= 0.001, got 1e-308\n");
}

// A [profile] file that is no export once failed only after the first
// sample had started; run refuses it first (here ahead of the layouts that
// the backend makes invalid, so nothing could start either way).
TEST_F(OutputPathsE2e, RunRefusesAProfileFileThatIsNoExportBeforeAnySample) {
  const std::string text = (dir_ / "notes.sqlite").string();
  std::ofstream(text) << "not a database, but long enough to read sixteen bytes of\n";
  CommandResult r = Run(std::string("run ") + kSpec +
                        " --set engine.args.moe-a2a-backend=deepep --set profile.file=" + text);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("error: --set profile.file=" + text + ": key 'profile.file': " + text +
                       " is not an SQLite database; expected an Nsight Systems SQLite export "
                       "(nsys export --type sqlite)\n"),
            std::string::npos)
      << r.err;
}

// Six dimensions' product once ran past 300 s with no output.
TEST_F(OutputPathsE2e, ASearchPastItsEstimatedBoundIsRefusedAtOnce) {
  std::string values;
  for (int v = 1; v <= 64; ++v) {
    if (!values.empty()) values += ',';
    values += std::to_string(v);
  }
  CommandResult r = Run(std::string("search ") + kSpec + " --concurrency " + values +
                        " --max-running-requests " + values + " --chunked-prefill-size 1");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("error: the search would predict "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("past --max-search-s 300; narrow it"), std::string::npos) << r.err;
  CommandResult chunk = Run(std::string("search ") + kSpec +
                            " --pp 4 --chunked-prefill-size 1 --concurrency 8 --max-search-s 0.1");
  EXPECT_EQ(chunk.exit_code, 2) << chunk.err;
  EXPECT_NE(chunk.err.find("past --max-search-s 0.1; narrow it"), std::string::npos) << chunk.err;
}

}  // namespace
}  // namespace ppsearch::testing

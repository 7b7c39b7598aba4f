// `ppsearch probe` end to end on this machine: the local launcher runs the
// probe's script with Debian's CPU PyTorch (python3-torch, installed by
// scripts/setup.sh --tests), so the plumbing (script on standard input,
// worker processes for the collectives, the JSON back, the overlay) is
// real; the figures are a CPU's. The ssh launcher's probe is in
// ssh_e2e_test.cc.

#include <filesystem>
#include <fstream>

#include "cli_fixture.h"

namespace ppsearch::testing {
namespace {

namespace fs = std::filesystem;

constexpr const char* kPython = "/usr/bin/python3";

class ProbeE2e : public CliTest {
 protected:
  void SetUp() override {
    CliTest::SetUp();
    // setup.sh --tests installs it: a missing torch is a broken setup, not a skip.
    ASSERT_EQ(std::system((std::string(kPython) + " -c 'import torch' 2>/dev/null").c_str()), 0)
        << kPython << " cannot import torch: run scripts/setup.sh --tests (python3-torch)";
    const std::string cwd = fs::current_path().string();
    std::ofstream(dir_ / "spec.toml")
        << "[experiment]\nname = \"probe\"\nresults_dir = \"" << (dir_ / "results").string()
        << "\"\n\n[cluster]\nhosts = [\"localhost\"]\ngpus_per_node = 8\nhardware = "
           "\"h200\"\nlauncher = \"local\"\n\n[engine]\nkind = \"sglang\"\nmodel_path = "
           "\"/models/dsv3\"\nmodel_config = \""
        << cwd
        << "/data/models/deepseek-v3/config.json\"\n\n[sweep]\nlayouts = [{pp = 1, tp = 8}]\n"
           "concurrency = [8]\n\n[workload]\ninput_tokens = 1024\noutput_tokens = 8\n"
           "requests = 32\n";
  }

  std::string Spec() const { return (dir_ / "spec.toml").string(); }
  std::string Quick() const {
    return std::string(" --python ") + kPython + " --quick --tokens 32 --shapes 2 --seconds 0.05";
  }
};

TEST_F(ProbeE2e, MeasuresThisMachineAndWritesAProfileEveryCommandTakes) {
  const std::string out = (dir_ / "measured.toml").string();
  CommandResult r = Run("probe " + Spec() + Quick() + " -o " + out);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("# device cpu, torch"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("localhost"), std::string::npos);
  EXPECT_NE(r.out.find("all_reduce"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("skipped on localhost: kernel launch floor"), std::string::npos);
  // The burst's GEMM was timed again after --quick's one short gap.
  EXPECT_NE(r.out.find("tensor budget (median node): "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("; 1 series after gaps up to "), std::string::npos) << r.out;
  const std::string text = ReadText(out);
  EXPECT_NE(text.find("name = \"measured\"\nbase = \"h200\""), std::string::npos) << text;
  EXPECT_NE(text.find("MEASURED ON THE CPU"), std::string::npos);
  EXPECT_NE(text.find("bf16_tflops = "), std::string::npos);
  EXPECT_NE(text.find("[[intra_allreduce]]\ngroup_size = 2\n"), std::string::npos);
  // Relative to the spec, as other paths in it.
  r = Run("validate " + Spec() + " --set cluster.hardware=measured.toml");
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  // The CPU's rates are its own: the prediction on them is not the h200's.
  const CommandResult measured =
      Run("simulate " + Spec() + " --set cluster.hardware=measured.toml --json");
  ASSERT_EQ(measured.exit_code, 0) << measured.err;
  const CommandResult shipped = Run("simulate " + Spec() + " --json");
  ASSERT_EQ(shipped.exit_code, 0) << shipped.err;
  EXPECT_NE(measured.out, shipped.out);
}

TEST_F(ProbeE2e, APythonThatCannotRunIsNamedWithItsHost) {
  CommandResult r = Run("probe " + Spec() + " --python /nonexistent/python3 --quick");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("probe on localhost: `/nonexistent/python3`"), std::string::npos) << r.err;
}

TEST_F(ProbeE2e, AnOutputThatIsNotAProfileFileIsRefusedBeforeAnyWork) {
  CommandResult r = Run("probe " + Spec() + Quick() + " -o /dev/null");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  r = Run("probe " + Spec() + Quick() + " -o " + (dir_ / "x.json").string());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("expected a .toml file"), std::string::npos) << r.err;
  r = Run("probe " + Spec() + Quick() + " -o " + Spec());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_FALSE(fs::exists(dir_ / "results"));
}

}  // namespace
}  // namespace ppsearch::testing

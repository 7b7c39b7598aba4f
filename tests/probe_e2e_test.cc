// `ppsearch probe` end to end on this machine: the local launcher runs the
// probe's script with Debian's CPU PyTorch (python3-torch, installed by
// scripts/setup.sh --tests), so the plumbing (script on standard input,
// worker processes for the collectives, the JSON back, the overlay) is
// real; the figures are a CPU's. The ssh launcher's probe is in
// ssh_e2e_test.cc.

#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <thread>

#include "cli_fixture.h"
#include "process_fixture.h"

namespace ppsearch::testing {
namespace {

namespace fs = std::filesystem;

constexpr const char* kPython = "/usr/bin/python3";

class ProbeE2e : public CliTest {
 protected:
  void SetUp() override {
    CliTest::SetUp();
    tmp_ = dir_ / "tmp";
    fs::create_directories(tmp_);
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

  // Whatever a test started and left: every process that has this test's
  // TMPDIR in its environment (ppsearch, the node's python, its workers).
  void TearDown() override {
    KillAll([this] { return Ours(); });
    CliTest::TearDown();
  }

  std::vector<pid_t> Ours() const {
    // ProcessesWhose shows the environment's NULs as spaces.
    return ProcessesWhose("environ", {"TMPDIR=" + tmp_.string() + " "});
  }

  // `ppsearch ARGS...` in the background, TMPDIR set to this test's own
  // (where the node's python saves its script), stderr to err.txt.
  pid_t StartProbe(const std::vector<std::string>& args) {
    std::vector<std::string> words = {bin_};
    words.insert(words.end(), args.begin(), args.end());
    const std::string tmpdir = tmp_.string(), err = (dir_ / "err.txt").string();
    std::vector<char*> argv;
    for (auto& w : words) argv.push_back(w.data());
    argv.push_back(nullptr);
    const pid_t pid = ::fork();
    if (pid == 0) {
      ::setenv("TMPDIR", tmpdir.c_str(), 1);
      ::freopen("/dev/null", "w", stdout);
      ::freopen(err.c_str(), "w", stderr);
      ::execv(argv[0], argv.data());
      ::_exit(127);
    }
    return pid;
  }

  // The child's exit code (128 + signal when killed), or nullopt after `seconds`.
  static std::optional<int> WaitCode(pid_t pid, double seconds) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    while (std::chrono::steady_clock::now() < deadline) {
      int status = 0;
      if (::waitpid(pid, &status, WNOHANG) == pid)
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return std::nullopt;
  }

  std::vector<fs::path> SavedScripts() const {
    std::vector<fs::path> out;
    for (const auto& e : fs::directory_iterator(tmp_))
      if (e.path().filename().string().rfind("ppsearch-probe-", 0) == 0) out.push_back(e.path());
    return out;
  }

  // Polls `done` every 50 ms for at most `seconds` (times the machine's load).
  template <typename Done>
  static bool WaitFor(Done done, double seconds) {
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds * LoadFactor());
    while (!done()) {
      if (std::chrono::steady_clock::now() > deadline) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return true;
  }

  fs::path tmp_;

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
  // Every option as given: run again, it measures the same.
  EXPECT_NE(text.find("# Measured by `ppsearch probe " + Spec() + " --output " + out +
                      " --python /usr/bin/python3 --tokens 32 --shapes 2 --seconds 0.05 --quick`"),
            std::string::npos)
      << text;
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

// SIGTERM once killed ppsearch alone (exit 143, silent): the node's python,
// in a session of its own, and its collective workers ran on, and its saved
// script stayed in /tmp. Now the probe stops them all, the script removes
// its copy, and ppsearch says so and exits 3 (interrupted), writing nothing.
TEST_F(ProbeE2e, AnInterruptStopsTheNodesProcessesAndWritesNothing) {
  const std::string out = (dir_ / "t.toml").string();
  const pid_t pid = StartProbe({"probe", Spec(), "--python", kPython, "--tokens", "32", "--shapes",
                                "2", "--seconds", "2", "--no-cross", "-o", out});
  ASSERT_GT(pid, 0);
  // The script is saved (its handlers are set); then, best, its workers run.
  ASSERT_TRUE(WaitFor([&] { return !SavedScripts().empty(); }, 60)) << "the probe never started";
  WaitFor([&] { return Ours().size() >= 3; }, 30);  // ppsearch, python, a worker
  std::vector<std::pair<pid_t, unsigned long long>> started;
  for (pid_t p : Ours())
    if (p != pid) started.emplace_back(p, StartTicks(p));
  ASSERT_FALSE(started.empty());
  ::kill(pid, SIGTERM);
  const std::optional<int> code = WaitCode(pid, 30 * LoadFactor());
  ASSERT_TRUE(code.has_value()) << "ppsearch did not end after SIGTERM";
  const std::string err = ReadText(dir_ / "err.txt");
  EXPECT_EQ(*code, 3) << err;
  EXPECT_NE(err.find("error: probe interrupted by SIGTERM (interrupted while probing localhost): "
                     "the nodes' probes were stopped; nothing was written (-o " +
                     out + ")"),
            std::string::npos)
      << err;
  EXPECT_FALSE(fs::exists(out));
  EXPECT_TRUE(SavedScripts().empty()) << SavedScripts().front();
  for (const auto& [p, ticks] : started) EXPECT_FALSE(AliveSince(p, ticks)) << "pid " << p;
}

// The first node of the cross phase failed at once (its port was taken);
// the second waited for it until the rendezvous timed out (120 s). Now the
// first failure stops the phase, and is the one reported.
TEST_F(ProbeE2e, TheCrossPhaseStopsAtTheFirstNodeThatFails) {
  std::string spec = ReadText(Spec());
  spec.replace(spec.find("hosts = [\"localhost\"]"), 21,
               "hosts = [{name = \"n1\", address = \"127.0.0.1\"}, {name = \"n2\", address = "
               "\"127.0.0.2\"}]");
  std::ofstream(dir_ / "two.toml") << spec;
  // The rendezvous port, taken: the first node's store cannot bind it, and the
  // second node's connection is accepted but never answered.
  const int port = FreePort();
  const int taken = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_ANY);
  const int one = 1;
  ::setsockopt(taken, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  ASSERT_EQ(::bind(taken, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  ASSERT_EQ(::listen(taken, 16), 0);
  const pid_t pid = StartProbe({"probe", (dir_ / "two.toml").string(), "--python", kPython,
                                "--quick", "--tokens", "32", "--shapes", "1", "--seconds", "0.05",
                                "--port", std::to_string(port), "--timeout", "300"});
  ASSERT_GT(pid, 0);
  ASSERT_TRUE(WaitFor(
      [&] { return ReadText(dir_ / "err.txt").find("between nodes") != std::string::npos; }, 120))
      << ReadText(dir_ / "err.txt");
  const auto cross_start = std::chrono::steady_clock::now();
  const std::optional<int> code = WaitCode(pid, 200);
  ::close(taken);
  ASSERT_TRUE(code.has_value());
  const double cross_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - cross_start).count();
  EXPECT_EQ(*code, 1);  // the nodes' figures kept, the missing link a failure
  // The rendezvous would have waited 120 s for the node that failed.
  EXPECT_LT(cross_s, 60 * std::min(LoadFactor(), 1.9)) << ReadText(dir_ / "err.txt");
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
  // A file where -o's directory would be: refused before measuring, not
  // after minutes of it with "cannot create directory f: Not a directory",
  // and with the code of a file that cannot be written (1), as every command.
  std::ofstream(dir_ / "f") << "a file\n";
  const std::string in_file = (dir_ / "f" / "x.toml").string();
  r = Run("probe " + Spec() + Quick() + " -o " + in_file);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("error: -o " + in_file + ": " + (dir_ / "f").string() + " is a file"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("probe: localhost"), std::string::npos) << "measured first: " << r.err;
  EXPECT_FALSE(fs::exists(dir_ / "results"));
}

}  // namespace
}  // namespace ppsearch::testing

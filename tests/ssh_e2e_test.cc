// The ssh launcher against a real OpenSSH server: the fixture starts Debian's
// /usr/sbin/sshd as a non-daemon child on a free port, listening on
// 127.0.0.1..127.0.0.4 (the rehearsal's four "nodes" n0..n3), with its own
// host key and a client key authorized for the current user. The spec is the
// rehearsal example (examples/kimi-k3-rehearsal.toml) with cluster.launcher =
// "ssh", private ports, state directories and results directory, and a
// smaller sweep. Every wait is bounded; TearDown kills what the test left.

#include <pwd.h>
#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>
#include <vector>

#include "cli_fixture.h"
#include "process_fixture.h"

namespace ppsearch::testing {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr const char* kSshd = "/usr/sbin/sshd";
const char* const kSshHosts[] = {"n0", "n1", "n2", "n3"};

// A TOML basic string holding `s` exactly.
std::string Toml(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

// A local user who needs a password for sudo: useradd (home under `dir`),
// chpasswd, and a sudoers drop-in checked with `visudo -cf` that also puts
// `dir`/bin first on sudo's secure_path (where a test's stand-in container
// runtime lies). The destructor ends the user's processes (by pid), then
// removes the user, its home and the drop-in, however the test ended.
class SudoUser {
 public:
  static std::unique_ptr<SudoUser> Make(const fs::path& dir, std::string* why) {
    auto user = std::unique_ptr<SudoUser>(new SudoUser);
    user->name_ = "ppsudo" + std::to_string(::getpid());
    user->password_ = "pw-" + std::to_string(::getpid()) + "-Qx7#v9 z";
    user->dropin_ = "/etc/sudoers.d/ppsearch-test-" + user->name_;
    const std::string home = (dir / ("home-" + user->name_)).string();
    if (std::system(("useradd -m -d " + home + " -s /bin/sh " + user->name_).c_str()) != 0) {
      *why = "useradd " + user->name_ + " failed";
      return nullptr;
    }
    user->created_ = true;
    // chpasswd reads NAME:PASSWORD on stdin: the password stays off command lines.
    const fs::path pw_input = dir / "chpasswd.in";
    { std::ofstream(pw_input) << user->name_ << ":" << user->password_ << "\n"; }
    const int set = std::system(("chpasswd < " + pw_input.string()).c_str());
    fs::remove(pw_input);
    if (set != 0) {
      *why = "chpasswd failed";
      return nullptr;
    }
    {
      std::ofstream d(user->dropin_);
      d << "Defaults:" << user->name_ << " secure_path=\"" << (dir / "bin").string()
        << ":/usr/sbin:/usr/bin:/sbin:/bin\"\n"
        << "Defaults:" << user->name_ << " !lecture\n"
        << user->name_ << " ALL=(ALL) ALL\n";
    }
    fs::permissions(user->dropin_, fs::perms::owner_read | fs::perms::group_read);
    if (std::system(("visudo -cf " + user->dropin_ + " >/dev/null").c_str()) != 0) {
      *why = "visudo -cf " + user->dropin_ + " refused the drop-in";
      return nullptr;
    }
    return user;
  }

  ~SudoUser() {
    if (created_) {
      const uid_t uid = Uid();
      for (int round = 0; round < 20 && uid != 0; ++round) {
        std::vector<pid_t> left = ProcessesOf(uid);
        if (left.empty()) break;
        for (pid_t p : left) ::kill(p, SIGKILL);
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      }
      // -f: a session the runner opened may still be closing.
      std::system(("userdel -r -f " + name_ + " 2>/dev/null").c_str());
    }
    std::error_code ec;
    fs::remove(dropin_, ec);
  }

  const std::string& name() const { return name_; }
  const std::string& password() const { return password_; }

 private:
  SudoUser() = default;

  uid_t Uid() const {
    const passwd* pw = ::getpwnam(name_.c_str());
    return pw == nullptr ? 0 : pw->pw_uid;
  }

  // Live processes whose real uid is `uid`.
  static std::vector<pid_t> ProcessesOf(uid_t uid) {
    std::vector<pid_t> out;
    for (const auto& e : fs::directory_iterator("/proc")) {
      const std::string name = e.path().filename().string();
      if (name.find_first_not_of("0123456789") != std::string::npos) continue;
      std::istringstream status(ReadBinary(e.path() / "status"));
      for (std::string line; std::getline(status, line);) {
        if (line.rfind("Uid:", 0) != 0) continue;
        std::istringstream ids(line.substr(4));
        uid_t real = 0;
        if (ids >> real && real == uid) out.push_back(std::stoi(name));
        break;
      }
    }
    return out;
  }

  std::string name_;
  std::string password_;
  std::string dropin_;
  bool created_ = false;
};

struct SpecParts {
  std::string hosts;  // the cluster.hosts array; empty: n0..n3 on 127.0.0.1..4
  std::string pp = "[4, 8]";
  std::string concurrency = "[8]";
  int repeats = 1;
  int requests = 16;
  int time_scale = 100;
  std::string command_prefix;  // TOML array items before "{ppsearch}"
  std::string command_suffix;  // TOML array items after serve-sim's own flags
  std::string engine_env;      // lines of [engine.env]
  std::string engine_args;     // extra lines of [engine.args]
  std::string ssh_extra;       // extra lines of [cluster.ssh]
  std::string engine_extra;    // extra lines of [engine]
  std::string sudo_table;      // a [cluster.sudo] table, whole
};

class SshE2e : public CliTest {
 protected:
  void SetUp() override {
    CliTest::SetUp();
    if (!fs::exists(kSshd))
      GTEST_SKIP() << kSshd << " is missing: install openssh-server (scripts/setup.sh)";
    if (std::system("command -v ssh >/dev/null && command -v ssh-keygen >/dev/null") != 0)
      GTEST_SKIP() << "the OpenSSH client (ssh, ssh-keygen) is missing";
    unique_ = dir_.filename().string();
    const std::vector<int> ports = FreePorts(3);
    ssh_port_ = ports[0];
    server_port_ = ports[1];
    dist_port_ = ports[2];
    std::error_code ec;  // sshd's privilege separation directory
    fs::create_directories("/run/sshd", ec);
    for (const char* h : kSshHosts) fs::create_directories(dir_ / "gpu" / h);
    const std::string d = dir_.string();
    ASSERT_EQ(std::system(("ssh-keygen -q -t ed25519 -N '' -f " + d + "/host_key").c_str()), 0);
    ASSERT_EQ(std::system(("ssh-keygen -q -t ed25519 -N '' -f " + d + "/client_key").c_str()), 0);
    fs::copy_file(dir_ / "client_key.pub", dir_ / "authorized_keys");
    {
      std::ofstream c(dir_ / "sshd_config");
      c << "Port " << ssh_port_ << "\n";
      for (int i = 1; i <= 4; ++i) c << "ListenAddress 127.0.0." << i << ":" << ssh_port_ << "\n";
      c << "HostKey " << d << "/host_key\n"
        << "AuthorizedKeysFile " << d << "/authorized_keys\n"
        << "PidFile " << d << "/sshd.pid\n"
        << "StrictModes no\n"
           "PasswordAuthentication no\n"
           "KbdInteractiveAuthentication no\n"
           "PermitRootLogin prohibit-password\n"
           "UsePAM no\n"
           "LogLevel ERROR\n"
           "PermitUserEnvironment no\n"
           "PrintMotd no\n";
    }
    // sshd re-executes itself: argv[0] must be its absolute path.
    sshd_ = StartDaemon({kSshd, "-D", "-e", "-f", d + "/sshd_config"}, d + "/sshd.log");
    ASSERT_GE(sshd_, 0);
    const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                             std::chrono::duration<double>(10 * LoadFactor()));
    bool up = false;
    while (!up && Clock::now() < deadline) {
      up = true;
      for (int i = 1; i <= 4; ++i) up = up && CanConnect("127.0.0." + std::to_string(i), ssh_port_);
      if (::waitpid(sshd_, nullptr, WNOHANG) == sshd_) {
        sshd_ = -1;
        FAIL() << "sshd exited: " << ReadText(dir_ / "sshd.log");
      }
      if (!up) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    ASSERT_TRUE(up) << "sshd did not listen on port " << ssh_port_
                    << " within 10 s: " << ReadText(dir_ / "sshd.log");
  }

  void TearDown() override {
    // The runner's servers and ssh clients name a path under dir_ (state
    // directories, the client key), sshd names its config, and the control
    // masters of a killed runner its control directory ("ssh: PATH [mux]").
    std::vector<std::string> marks = {dir_.string()};
    for (pid_t runner : runners_)
      marks.push_back("/tmp/ppsearch-ssh-" + std::to_string(runner) + "/");
    KillAll([&] {
      std::vector<pid_t> left;
      for (const auto& m : marks)
        for (pid_t p : ProcessesMentioning({m})) left.push_back(p);
      return left;
    });
    StopDaemons({sshd_}, 0);
    for (pid_t runner : runners_) fs::remove_all("/tmp/ppsearch-ssh-" + std::to_string(runner));
    for (const auto& p : fs::directory_iterator("/tmp"))
      if (p.path().filename().string().rfind(unique_ + "-", 0) == 0 && !unique_.empty())
        fs::remove_all(p.path());
    CliTest::TearDown();
  }

  std::string Results() const { return (dir_ / "results").string(); }

  // The rehearsal example, reaching its nodes over ssh through this sshd.
  std::string WriteSpec(const SpecParts& p, const std::string& file = "spec.toml") {
    const std::string cwd = fs::current_path().string();
    const std::string d = dir_.string();
    std::string hosts = p.hosts;
    if (hosts.empty())
      hosts =
          "[\n  {name = \"n0\", address = \"127.0.0.1\"},\n  {name = \"n1\", address = "
          "\"127.0.0.2\"},\n  {name = \"n2\", address = \"127.0.0.3\"},\n  {name = \"n3\", "
          "address = \"127.0.0.4\"},\n]";
    std::ostringstream s;
    s << "[experiment]\nname = \"kimi3-pp-rehearsal\"\nresults_dir = " << Toml(Results())
      << "\n\n[cluster]\nhosts = " << hosts
      << "\ngpus_per_node = 8\nhardware = \"rtx-6000d\"\nlauncher = \"ssh\"\n"
      << "server_port = " << server_port_ << "\ndist_init_port = " << dist_port_ << "\n"
      << "nvidia_smi = [\"{ppsearch}\", \"smi-sim\", \"--state-dir\", " << Toml(d + "/gpu/{host}")
      << "]\n\n[cluster.ssh]\nkey = " << Toml(d + "/client_key") << "\nport = " << ssh_port_
      << "\noptions = [\"StrictHostKeyChecking=no\", \"UserKnownHostsFile=/dev/null\", "
         "\"LogLevel=ERROR\"]\n"
      << p.ssh_extra << "\n"
      << p.sudo_table << "\n"
      << "[engine]\nkind = \"sglang\"\ncommand = [" << p.command_prefix
      << "\"{ppsearch}\", \"serve-sim\", \"--time-scale\", \"" << p.time_scale
      << "\", \"--model-config\", " << Toml(cwd + "/data/models/kimi-k3/config.json")
      << ", \"--hardware\", \"rtx-6000d\", \"--gpu-state-dir\", " << Toml(d + "/gpu/{host}")
      << p.command_suffix << "]\nmodel_path = \"/models/kimi-k3\"\nmodel_config = "
      << Toml(cwd + "/data/models/kimi-k3/config.json") << "\n"
      << p.engine_extra << "\n"
      << "[engine.args]\nmoe-runner-backend = \"flashinfer_mxfp4\"\nmoe-a2a-backend = \"none\"\n"
         "chunked-prefill-size = 8192\ndisable-radix-cache = true\ntrust-remote-code = true\n"
         "watchdog-timeout = 3600\n"
      << p.engine_args << "\n";
    if (!p.engine_env.empty()) s << "[engine.env]\n" << p.engine_env << "\n";
    s << "[sweep]\npp = " << p.pp << "\ntp = \"auto\"\nep = [4]\nconcurrency = " << p.concurrency
      << "\nrepeats = " << p.repeats << "\n\n"
      << "[workload]\ninput_tokens = 16000\noutput_tokens = 1\nrequests = " << p.requests
      << "\nseed = 20240601\n\n"
      << "[baseline]\nlayout = {pp = 1, tp = 32, ep = 4}\nimport_csv = "
      << Toml(cwd + "/data/baseline/pp1-tp32-ep4-x100.csv") << "\n\n"
      << "[decision]\nobjective = \"input_tps\"\nmin_headroom_mib = 2048\n"
         // About the lifecycle over ssh: serve-sim's throughput on a busy
         // 2-core machine varies more between repeats than 5%.
         "max_repeat_spread = 1.0\nfailure_policy = \"exclude\"\n\n"
      // The waits scale with the machine's load (LoadFactor).
      << "[lifecycle]\nstart_timeout_s = " << std::ceil(60 * LoadFactor())
      << "\npoll_interval_s = 0.1\nrequest_timeout_s = " << std::ceil(120 * LoadFactor())
      << "\nstop_grace_s = 10\nmemory_release_timeout_s = 20\n"
      // A reach check once met a loaded sshd past the default 10 s.
      << "check_timeout_s = " << std::ceil(20 * LoadFactor()) << "\n";
    const fs::path path = dir_ / file;
    std::ofstream(path) << s.str();
    return path.string();
  }

  // The only run directory under results/ (empty if none yet).
  fs::path RunDir() const {
    fs::path found;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(Results(), ec)) found = e.path();
    return found;
  }

  static std::vector<nlohmann::json> Manifest(const fs::path& run) {
    std::vector<nlohmann::json> lines;
    std::istringstream in(ReadText(run / "manifest.jsonl"));
    for (std::string line; std::getline(in, line);) {
      nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
      if (!j.is_discarded()) lines.push_back(j);
    }
    return lines;
  }

  // The serve-sim processes this test's servers left (they name its state directory).
  std::vector<pid_t> ServeSimsLeft(double wait_s) const {
    const auto deadline = Clock::now() + std::chrono::duration<double>(wait_s * LoadFactor());
    std::vector<pid_t> left;
    do {
      left = ProcessesMentioning({"serve-sim", (dir_ / "gpu").string()});
      if (left.empty()) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    } while (Clock::now() < deadline);
    return left;
  }

  // /tmp/ppsearch-ssh-PID: the control directories of ppsearch runs.
  static std::set<fs::path> ControlDirs() {
    std::set<fs::path> dirs;
    for (const auto& e : fs::directory_iterator("/tmp"))
      if (e.path().filename().string().rfind("ppsearch-ssh-", 0) == 0) dirs.insert(e.path());
    return dirs;
  }

  std::string unique_;
  int ssh_port_ = 0;
  int server_port_ = 0;
  int dist_port_ = 0;
  pid_t sshd_ = -1;
  std::vector<pid_t> runners_;
};

TEST_F(SshE2e, WholeSearchOverSshLeavesTheSameEvidence) {
  const std::string spec = WriteSpec({});
  CommandResult r = Run("run " + spec);
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  const fs::path run = RunDir();
  ASSERT_FALSE(run.empty());
  std::map<std::string, std::string> verdicts;
  for (const auto& j : Manifest(run))
    if (j.value("state", "") == "completed")
      verdicts[j.value("sample", "")] = j.value("verdict", "");
  ASSERT_EQ(verdicts.size(), 2u) << ReadText(run / "manifest.jsonl");
  for (const auto& [sample, verdict] : verdicts) {
    EXPECT_EQ(verdict, "ok") << sample << ": " << ReadText(run / "manifest.jsonl");
    EXPECT_TRUE(fs::exists(run / "raw" / (sample + ".jsonl"))) << sample;
    EXPECT_TRUE(fs::exists(run / "bench" / (sample + ".json"))) << sample;
    for (const char* host : kSshHosts) {
      EXPECT_TRUE(fs::exists(run / "service" / sample / (std::string(host) + ".log")))
          << sample << " " << host;
      EXPECT_TRUE(fs::exists(run / "gpu" / sample / (std::string(host) + ".csv")))
          << sample << " " << host;
    }
    EXPECT_NE(ReadText(run / "service" / sample / "n0.log")
                  .find("The server is fired up and ready to roll!"),
              std::string::npos)
        << sample;
  }
  EXPECT_TRUE(fs::exists(run / "report.md"));
  const std::string commands = ReadText(run / "metadata" / "commands.txt");
  EXPECT_NE(commands.find("# launcher: ssh"), std::string::npos) << commands;
  EXPECT_NE(commands.find("n0: ssh -n -T"), std::string::npos) << commands;
  EXPECT_NE(commands.find("-p " + std::to_string(ssh_port_) + " -- 127.0.0.4"), std::string::npos)
      << commands;
  EXPECT_TRUE(ServeSimsLeft(5).empty()) << "serve-sim processes outlived the run";
}

// A disaggregated deployment over ssh: each pool's server and the router
// (a second process on the first prefill node) started through ssh, the
// benchmark through the router, every process stopped at the end.
TEST_F(SshE2e, ADisaggregatedDeploymentRunsOverSshWithItsRouter) {
  const std::string cwd = fs::current_path().string();
  const std::string d = dir_.string();
  const std::vector<int> ports = FreePorts(2);
  std::ostringstream s;
  s << "[experiment]\nname = \"pd-ssh\"\nresults_dir = " << Toml(Results()) << "\n"
    << "[cluster]\nhosts = [{name = \"n0\", address = \"127.0.0.1\"}, {name = \"n1\", "
       "address = \"127.0.0.2\"}, {name = \"n2\", address = \"127.0.0.3\"}]\n"
    << "gpus_per_node = 8\nhardware = \"h200\"\nlauncher = \"ssh\"\n"
    << "server_port = " << server_port_ << "\ndist_init_port = " << dist_port_ << "\n"
    << "nvidia_smi = [\"{ppsearch}\", \"smi-sim\", \"--state-dir\", " << Toml(d + "/gpu/{host}")
    << ", \"--total-mib\", \"143771\"]\n"
    << "[cluster.ssh]\nkey = " << Toml(d + "/client_key") << "\nport = " << ssh_port_
    << "\noptions = [\"StrictHostKeyChecking=no\", \"UserKnownHostsFile=/dev/null\", "
       "\"LogLevel=ERROR\"]\n"
    << "[engine]\nkind = \"sglang\"\ncommand = [\"{ppsearch}\", \"serve-sim\", \"--time-scale\", "
       "\"10\", \"--model-config\", "
    << Toml(cwd + "/data/models/deepseek-v3/config.json")
    << ", \"--hardware\", \"h200\", \"--gpu-state-dir\", " << Toml(d + "/gpu/{host}") << "]\n"
    << "model_path = \"/models/deepseek-v3\"\nmodel_config = "
    << Toml(cwd + "/data/models/deepseek-v3/config.json") << "\n"
    << "[engine.disaggregation]\nbootstrap_port = " << ports[0] << "\nrouter_port = " << ports[1]
    << "\nrouter_command = [\"{ppsearch}\", \"router-sim\"]\n"
    << "[sweep]\nconcurrency = [8]\nrepeats = 1\n"
    << "[sweep.prefill]\nhosts = [\"n0\"]\ntp = 8\nep = 8\n"
    << "[sweep.decode]\nhosts = [\"n1\"]\ntp = 8\nep = 8\n"
    << "[workload]\ninput_tokens = 2000\noutput_tokens = 40\nrequests = 24\nseed = 7\n"
    << "[decision]\nmax_repeat_spread = 1.0\n"
    << "[lifecycle]\nstart_timeout_s = " << std::ceil(60 * LoadFactor())
    << "\npoll_interval_s = 0.1\nrequest_timeout_s = " << std::ceil(120 * LoadFactor())
    << "\nstop_grace_s = 10\nmemory_release_timeout_s = 20\ncheck_timeout_s = "
    << std::ceil(20 * LoadFactor()) << "\n";
  const fs::path spec = dir_ / "pd.toml";
  std::ofstream(spec) << s.str();
  CommandResult r = Run("run " + spec.string());
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  const fs::path run = RunDir();
  std::map<std::string, std::string> verdicts;
  for (const auto& j : Manifest(run))
    if (j.value("state", "") == "completed")
      verdicts[j.value("sample", "")] = j.value("verdict", "");
  ASSERT_EQ(verdicts.size(), 1u) << ReadText(run / "manifest.jsonl");
  const std::string sample = verdicts.begin()->first;
  EXPECT_EQ(verdicts.begin()->second, "ok") << ReadText(run / "manifest.jsonl");
  EXPECT_NE(ReadText(run / "service" / sample / "n0.log").find("Prefill batch"), std::string::npos);
  EXPECT_NE(ReadText(run / "service" / sample / "n1.log").find("Decode batch"), std::string::npos);
  EXPECT_NE(ReadText(run / "service" / sample / "n0.router.log").find("Starting router on"),
            std::string::npos);
  const std::string commands = ReadText(run / "metadata" / "commands.txt");
  EXPECT_NE(commands.find("n0 (router): ssh -n -T"), std::string::npos) << commands;
  EXPECT_TRUE(ServeSimsLeft(5).empty()) << "serve-sim processes outlived the run";
  EXPECT_TRUE(ProcessesMentioning({"router-sim", "--port " + std::to_string(ports[1])}).empty())
      << "the router outlived the run";
}

// `ppsearch probe` over ssh: each node's phase runs the script through the
// launcher (its standard input carried by ssh), then both nodes at once
// meet at the first node's address for the cross-node ping-pong (gloo over
// 127.0.0.1, the nodes' CPU PyTorch).
TEST_F(SshE2e, ProbeMeasuresEachNodeAndTheLinkBetweenThem) {
  if (std::system("/usr/bin/python3 -c 'import torch' 2>/dev/null") != 0)
    FAIL() << "/usr/bin/python3 cannot import torch: run scripts/setup.sh --tests";
  SpecParts p;
  p.hosts =
      "[\n  {name = \"n0\", address = \"127.0.0.1\"},\n  {name = \"n1\", address = "
      "\"127.0.0.2\"},\n]";
  p.pp = "[1]";
  const std::string spec = WriteSpec(p);
  const std::string out = (dir_ / "measured.toml").string();
  CommandResult r = Run("probe " + spec +
                        " --python /usr/bin/python3 --quick --tokens 32 --shapes 2 "
                        "--seconds 0.05 -o " +
                        out);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.err.find("probe: n0 (1 of 2)"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("probe: n1 (2 of 2)"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("between nodes: "), std::string::npos) << r.out;
  const std::string text = ReadText(out);
  EXPECT_NE(text.find("on n0, n1"), std::string::npos) << text;
  EXPECT_NE(text.find("nic_gbps_per_gpu = "), std::string::npos) << text;
  EXPECT_NE(text.find("inter_latency_us = "), std::string::npos);
  // The plan reads the overlay (K3 fits no layout of two nodes; the header
  // names the profile all the same).
  r = Run("plan " + spec + " --set cluster.hardware=measured.toml");
  EXPECT_NE(r.out.find("NVIDIA RTX 6000D (measured)"), std::string::npos) << r.out << r.err;
}

// Ending the ssh client does not end a command sshd runs without a
// terminal: an interrupted probe left its python (and its saved script)
// running on the host until it next wrote. Now the script prints its pid
// and ppsearch signals its process group there, as it stops a server.
TEST_F(SshE2e, AnInterruptedProbeStopsItsScriptOnTheHost) {
  if (std::system("/usr/bin/python3 -c 'import torch' 2>/dev/null") != 0)
    FAIL() << "/usr/bin/python3 cannot import torch: run scripts/setup.sh --tests";
  // The node's python saves its script in its own TMPDIR, and its
  // environment names it: how its processes are found on the "host".
  const fs::path tmp = dir_ / "tmp";
  fs::create_directories(tmp);
  SpecParts p;
  p.hosts = "[\n  {name = \"n0\", address = \"127.0.0.1\"},\n]";
  p.pp = "[1]";
  p.engine_env = "TMPDIR = \"" + tmp.string() + "\"";
  const std::string spec = WriteSpec(p);
  const auto ours = [&] { return ProcessesWhose("environ", {"TMPDIR=" + tmp.string() + " "}); };
  const auto saved = [&] {
    std::vector<fs::path> out;
    for (const auto& e : fs::directory_iterator(tmp))
      if (e.path().filename().string().rfind("ppsearch-probe-", 0) == 0) out.push_back(e.path());
    return out;
  };
  const fs::path err_file = dir_ / "probe.err";
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::freopen("/dev/null", "w", stdout);
    ::freopen(err_file.c_str(), "w", stderr);
    ::execl(bin_.c_str(), bin_.c_str(), "probe", spec.c_str(), "--python", "/usr/bin/python3",
            "--tokens", "32", "--shapes", "2", "--seconds", "2", "--no-cross",
            static_cast<char*>(nullptr));
    ::_exit(127);
  }
  runners_.push_back(pid);
  const auto until = [](const auto& done, double seconds) {
    const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                             std::chrono::duration<double>(seconds * LoadFactor()));
    while (Clock::now() < deadline) {
      if (done()) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return done();
  };
  ASSERT_TRUE(until([&] { return !saved().empty(); }, 60)) << ReadText(err_file);
  std::vector<std::pair<pid_t, unsigned long long>> started;
  for (pid_t q : ours()) started.emplace_back(q, StartTicks(q));
  ASSERT_FALSE(started.empty());
  ::kill(pid, SIGTERM);
  int status = 0;
  ASSERT_TRUE(until([&] { return ::waitpid(pid, &status, WNOHANG) == pid; }, 30))
      << "ppsearch did not end after SIGTERM";
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 3) << ReadText(err_file);
  EXPECT_NE(ReadText(err_file).find("probe interrupted by SIGTERM"), std::string::npos)
      << ReadText(err_file);
  // Gone on the host once ppsearch has ended: nothing waits for a write.
  for (const auto& [q, ticks] : started) EXPECT_FALSE(AliveSince(q, ticks)) << "pid " << q;
  EXPECT_TRUE(saved().empty());
}

TEST_F(SshE2e, ShellMetacharactersArriveLiterally) {
  const std::string pwned = "/tmp/" + unique_ + "-pwned";
  const std::string value = "a b;touch " + pwned + ";$(id)'\"`x`";
  SpecParts p;
  p.pp = "[8]";
  // The remote shell prints the variable, then becomes serve-sim.
  p.command_prefix = "\"/bin/sh\", \"-c\", " +
                     Toml("printf 'ENV=%s\\n' \"$PPS_TEST_VALUE\"; exec \"$0\" \"$@\"") + ", ";
  p.command_suffix = ", \"--cmd-flag\", " + Toml(value);
  p.engine_args = "some-flag = " + Toml(value) + "\n";
  p.engine_env = "PPS_TEST_VALUE = " + Toml(value) + "\n";
  const std::string spec = WriteSpec(p);
  CommandResult r = Run("run " + spec);
  EXPECT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_FALSE(fs::exists(pwned)) << "a spec value was run by a shell";
  const fs::path run = RunDir();
  ASSERT_FALSE(run.empty());
  const std::string sample = "pp8-tp4-ep4_c8_r1";
  for (const char* host : kSshHosts) {
    const std::string log = ReadText(run / "service" / sample / (std::string(host) + ".log"));
    EXPECT_NE(log.find("\nENV=" + value + "\n"), std::string::npos) << host << ":\n" << log;
    EXPECT_NE(log.find("server_args=ServerArgs("), std::string::npos) << host;
    EXPECT_NE(log.find("some_flag='" + value + "'"), std::string::npos) << host << ":\n" << log;
    EXPECT_NE(log.find("cmd_flag='" + value + "'"), std::string::npos) << host << ":\n" << log;
  }
  EXPECT_TRUE(ServeSimsLeft(5).empty());

  // A host name with shell metacharacters never reaches a command line.
  const std::string alias = "/tmp/" + unique_ + "-alias";
  SpecParts bad;
  bad.hosts = "[{name = " + Toml("n0;touch " + alias) +
              ", address = \"127.0.0.1\"}, {name = \"n1\", address = \"127.0.0.2\"}]";
  const std::string bad_spec = WriteSpec(bad, "bad-host.toml");
  for (const std::string cmd : {"validate ", "run "}) {
    CommandResult v = Run(cmd + bad_spec);
    EXPECT_EQ(v.exit_code, 2) << cmd << v.err;
    EXPECT_NE(v.err.find("key 'cluster.hosts[0].name'"), std::string::npos) << cmd << v.err;
  }
  EXPECT_FALSE(fs::exists(alias));
}

TEST_F(SshE2e, SecretNeverReachesTheRunDirectory) {
  const std::string token = "hf_secret_" + std::to_string(::getpid()) + "x7Qz";
  const std::string key = "key_" + std::to_string(::getpid()) + "k9Wv";
  // The server's --api-key: serve-sim refuses requests without it, as SGLang
  // does, so the run completes only if the benchmark sends it.
  const std::string api_key = "sk-" + std::to_string(::getpid()) + "a4Rt";
  SpecParts p;
  p.pp = "[8]";
  p.engine_env = "HF_TOKEN = " + Toml(token) + "\n";
  const std::string spec = WriteSpec(p);
  const std::string set =
      " --set engine.env.API_KEY=" + key + " --set engine.args.api-key=" + api_key;

  const std::set<fs::path> control_dirs = ControlDirs();
  CommandResult dry = Run("run " + spec + " --dry-run" + set);
  // A dry run leaves its (empty) ssh control directory behind: remove what it left.
  // (Only a dead process's: another test's runner may have just made its own.)
  for (const fs::path& d : ControlDirs()) {
    const std::string pid = d.filename().string().substr(std::string("ppsearch-ssh-").size());
    if (!control_dirs.count(d) && !fs::exists("/proc/" + pid) && fs::is_empty(d)) fs::remove(d);
  }
  ASSERT_EQ(dry.exit_code, 0) << dry.err;
  EXPECT_NE(dry.out.find("HF_TOKEN="), std::string::npos) << dry.out;
  EXPECT_EQ(dry.out.find(token), std::string::npos) << dry.out;
  EXPECT_EQ(dry.out.find(key), std::string::npos) << dry.out;
  EXPECT_EQ(dry.out.find(api_key), std::string::npos) << dry.out;

  CommandResult r = Run("run " + spec + set);
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_EQ(r.out.find(token), std::string::npos);
  EXPECT_EQ(r.out.find(key), std::string::npos);
  EXPECT_EQ(r.out.find(api_key), std::string::npos);
  const fs::path run = RunDir();
  ASSERT_FALSE(run.empty());
  int files = 0;
  for (const auto& e : fs::recursive_directory_iterator(run)) {
    if (!e.is_regular_file()) continue;
    ++files;
    const std::string text = ReadBinary(e.path());
    EXPECT_EQ(text.find(token), std::string::npos) << e.path();
    EXPECT_EQ(text.find(key), std::string::npos) << e.path();
    EXPECT_EQ(text.find(api_key), std::string::npos) << e.path();
  }
  EXPECT_GT(files, 10);
  for (const char* f : {"run.json", "commands.txt", "spec.toml", "spec.resolved.json"})
    EXPECT_NE(ReadText(run / "metadata" / f).find("<redacted>"), std::string::npos) << f;
}

// The cluster check before the first sample: one host refuses the ssh
// connection, one refuses the key, one has its server port taken and a GPU
// held by another process. The run stops at once, before any sample and
// before a run directory exists, naming each host and why.
TEST_F(SshE2e, ClusterNotReadyStopsTheRunBeforeAnySampleNamingEachHost) {
  const int closed_port = FreePorts(1)[0];  // nothing listens there
  const std::string d = dir_.string();
  ASSERT_EQ(std::system(("ssh-keygen -q -t ed25519 -N '' -f " + d + "/stranger_key").c_str()), 0);
  // n3's server port is held by this process, and its GPU 0 by "python3" (this pid).
  const int fd = ListenOn("127.0.0.4", server_port_);
  ASSERT_GE(fd, 0);
  HoldGpuMemory(dir_ / "gpu" / "n3", 3, 40000);
  SpecParts p;
  p.pp = "[8]";
  std::string spec_text = ReadText(WriteSpec(p));
  spec_text += "\n[cluster.ssh.n1]\nport = " + std::to_string(closed_port) +
               "\n\n[cluster.ssh.n2]\nkey = " + Toml(d + "/stranger_key") + "\n";
  std::ofstream(dir_ / "spec.toml") << spec_text;

  const auto start = Clock::now();
  CommandResult r = Run("run " + (dir_ / "spec.toml").string());
  const double took = std::chrono::duration<double>(Clock::now() - start).count();
  ::close(fd);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_LT(took, 30) << r.err;
  EXPECT_NE(r.err.find("n1: reach: ssh to n1 (127.0.0.2): connection refused"), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("n2: reach: ssh to n2 (127.0.0.3): authentication failed"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("n3: port: server port " + std::to_string(server_port_) +
                       " on 127.0.0.4 is already in use by pid " + std::to_string(::getpid())),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("n3: gpu: GPU memory is held by another process: pid " +
                       std::to_string(::getpid()) + " (python3) uses 40000 MiB"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("n0:"), std::string::npos) << "n0 is ready: " << r.err;
  EXPECT_NE(r.err.find("the cluster is not ready, so no sample ran"), std::string::npos) << r.err;
  EXPECT_TRUE(RunDir().empty()) << "no run directory before the cluster is ready";
}

// A host that takes the connection and never answers, as a host behind a
// dropping firewall or a hung sshd does: ssh gives up within the check's
// timeout and says why in its own words, instead of the check only timing out.
TEST_F(SshE2e, AHostThatNeverAnswersIsUnreachableInSshsOwnWords) {
  const int silent_port = FreePorts(1)[0];
  const int fd = ListenOn("127.0.0.2", silent_port);  // never accepts, never speaks
  ASSERT_GE(fd, 0);
  SpecParts p;
  p.pp = "[8]";
  std::string spec_text = ReadText(WriteSpec(p));
  spec_text += "\n[cluster.ssh.n1]\nport = " + std::to_string(silent_port) + "\n";
  std::ofstream(dir_ / "spec.toml") << spec_text;

  // The check's timeout scales with the machine's load: the other hosts'
  // (real, loaded) sshd must answer within it, also when the load rises
  // after it was read (a full suite on two cores: 3 s was once too short).
  const double check_timeout_s = std::ceil(5 * LoadFactor());
  const auto start = Clock::now();
  CommandResult r =
      Run("run " + (dir_ / "spec.toml").string() +
          " --set lifecycle.check_timeout_s=" + std::to_string(static_cast<int>(check_timeout_s)));
  const double took = std::chrono::duration<double>(Clock::now() - start).count();
  ::close(fd);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_LT(took, 4 * check_timeout_s) << r.err;
  EXPECT_NE(r.err.find("error: n1: reach: ssh to n1 (127.0.0.2): unreachable: Connection timed "
                       "out during banner exchange\n"),
            std::string::npos)
      << r.err;
  for (const char* ready : {"n0:", "n2:", "n3:"})
    EXPECT_EQ(r.err.find(ready), std::string::npos) << r.err;
  EXPECT_TRUE(RunDir().empty());
}

TEST_F(SshE2e, KilledRunnerThenResumeLeavesNoOrphanAndNoDuplicate) {
  SpecParts p;
  p.pp = "[8]";
  p.repeats = 3;
  p.requests = 8;
  p.time_scale = 20;  // a sample takes a few seconds
  const std::string spec = WriteSpec(p);
  const fs::path out_file = dir_ / "killed.out";
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::freopen(out_file.c_str(), "w", stdout);
    ::freopen(out_file.c_str(), "a", stderr);
    ::execl(bin_.c_str(), bin_.c_str(), "run", spec.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  runners_.push_back(pid);
  // Bounded wait: one sample done, a later one started, its servers recorded.
  fs::path run;
  auto state_files = [&] {
    std::vector<fs::path> files;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(run / "state" / "servers", ec))
      if (e.path().extension() == ".json") files.push_back(e.path());
    return files;
  };
  // Waits on the runner's progress, not a fixed time: the deadline moves
  // whenever the manifest or the server states change, so a loaded machine
  // that runs slowly still gets there; a runner that stalls does not.
  bool ready = false;
  const auto stall =
      std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(60 * LoadFactor()));
  auto deadline = Clock::now() + stall;
  size_t progress = 0;
  while (!ready && Clock::now() < deadline) {
    run = RunDir();
    if (!run.empty()) {
      const std::vector<nlohmann::json> lines = Manifest(run);
      const size_t now = lines.size() * 16 + state_files().size();
      if (now != progress) {
        progress = now;
        deadline = Clock::now() + stall;
      }
      int completed = 0;
      for (const auto& j : lines) completed += j.value("state", "") == "completed" ? 1 : 0;
      const bool in_progress = !lines.empty() && lines.back().value("state", "") == "started";
      ready = completed >= 1 && in_progress && state_files().size() == 4;
    }
    if (::waitpid(pid, nullptr, WNOHANG) == pid) {
      pid = -1;
      break;
    }
    if (!ready) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (pid > 0) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
  }
  ASSERT_TRUE(ready) << "the runner ended or stalled before a second sample started:\n"
                     << ReadText(out_file);

  std::vector<pid_t> recorded;
  for (const auto& f : state_files()) {
    nlohmann::json j = nlohmann::json::parse(ReadText(f), nullptr, false);
    ASSERT_TRUE(j.is_object() && j.contains("pid")) << f;
    recorded.push_back(j["pid"].get<pid_t>());
  }
  ASSERT_EQ(recorded.size(), 4u);
  int alive = 0;
  std::vector<unsigned long long> started;
  for (pid_t r : recorded) {
    started.push_back(StartTicks(r));
    alive += Alive(r) && started.back() != 0 ? 1 : 0;
  }
  EXPECT_GE(alive, 1) << "the killed runner's servers should still run on their hosts";

  CommandResult resumed = Run("run --resume " + run.string());
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err << resumed.out;
  EXPECT_NE(resumed.err.find("stopped pid"), std::string::npos) << resumed.err;
  for (size_t i = 0; i < recorded.size(); ++i)
    EXPECT_FALSE(started[i] != 0 && AliveSince(recorded[i], started[i]))
        << "pid " << recorded[i] << " outlived the resume";
  std::error_code ec;
  EXPECT_TRUE(!fs::exists(run / "state" / "servers") || fs::is_empty(run / "state" / "servers"))
      << "state/servers is not empty";
  std::map<std::string, int> completed;
  for (const auto& j : Manifest(run))
    if (j.value("state", "") == "completed") ++completed[j.value("sample", "")];
  EXPECT_EQ(completed.size(), 3u) << ReadText(run / "manifest.jsonl");
  for (const auto& [sample, n] : completed) EXPECT_EQ(n, 1) << sample;
  EXPECT_TRUE(ServeSimsLeft(5).empty());
}

// Privileged steps for real: the login user needs a password for sudo. The
// container runtime (a stand-in "docker" that records `id -u`) and the stop
// of servers that ignore SIGTERM (root's, so only a root kill ends them) go
// through sudo, the password on sudo's standard input only.
TEST_F(SshE2e, PrivilegedStepsRunThroughSudoWithThePasswordOnStdinOnly) {
  if (::geteuid() != 0) GTEST_SKIP() << "creating a user and a sudoers rule needs root";
  for (const std::string tool : {"sudo", "useradd", "userdel", "chpasswd", "visudo"})
    if (std::system(("command -v " + tool + " >/dev/null").c_str()) != 0)
      GTEST_SKIP() << tool << " is missing (scripts/setup.sh --tests installs sudo)";
  std::string why;
  std::unique_ptr<SudoUser> user = SudoUser::Make(dir_, &why);
  ASSERT_TRUE(user) << why;
  const std::string d = dir_.string();
  fs::create_directories(dir_ / "bin");
  {
    std::ofstream rt(dir_ / "bin" / "docker");
    rt << "#!/bin/sh\n"
       << "echo \"uid=$(id -u) $1\" >> " << d << "/runtime.log\n"
       << "[ \"$1\" = run ] || exit 0\n"
       << "while [ $# -gt 0 ] && [ \"$1\" != ppsearch-test-image ]; do shift; done\n"
       << "shift\nexec \"$@\"\n";
  }
  fs::permissions(dir_ / "bin" / "docker", fs::perms::owner_all | fs::perms::group_read |
                                               fs::perms::group_exec | fs::perms::others_read |
                                               fs::perms::others_exec);
  // The servers (root) write the GPU registry that smi-sim (the user) reads.
  for (const auto& e : fs::recursive_directory_iterator(dir_ / "gpu"))
    fs::permissions(e.path(), fs::perms::all);
  fs::permissions(dir_ / "gpu", fs::perms::all);
  const fs::path password_file = dir_ / "sudo_password";
  std::ofstream(password_file) << user->password() << "\n";
  fs::permissions(password_file, fs::perms::owner_read | fs::perms::owner_write);

  SpecParts p;
  p.pp = "[8]";
  p.command_suffix = ", \"--fault-ignore-sigterm\"";
  p.ssh_extra = "user = " + Toml(user->name()) + "\n";
  p.engine_extra = "image = \"ppsearch-test-image\"\ncontainer = \"docker\"\n";
  p.sudo_table = "[cluster.sudo]\nsteps = [\"container\", \"stop\"]\npassword_file = " +
                 Toml(password_file.string()) + "\n";
  const std::string spec = WriteSpec(p);

  // The run, in a child; every process's argv is read while it goes.
  const fs::path out_file = dir_ / "runner.out";
  pid_t runner = ::fork();
  ASSERT_GE(runner, 0);
  if (runner == 0) {
    ::freopen(out_file.c_str(), "w", stdout);
    ::freopen(out_file.c_str(), "a", stderr);
    ::execl(bin_.c_str(), bin_.c_str(), "run", spec.c_str(), "--set", "lifecycle.stop_grace_s=1",
            static_cast<char*>(nullptr));
    ::_exit(127);
  }
  runners_.push_back(runner);
  int status = -1;
  int scans = 0;
  std::vector<std::string> leaks;
  const auto deadline = Clock::now() + std::chrono::seconds(180);
  while (Clock::now() < deadline) {
    if (::waitpid(runner, &status, WNOHANG) == runner) break;
    for (pid_t pid : ProcessesMentioning({user->password()}))
      leaks.push_back(ReadBinary("/proc/" + std::to_string(pid) + "/cmdline"));
    ++scans;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (!WIFEXITED(status)) {
    ::kill(runner, SIGKILL);
    ::waitpid(runner, nullptr, 0);
    FAIL() << "the run did not finish within 180 s:\n" << ReadText(out_file);
  }
  const std::string out = ReadText(out_file);
  EXPECT_EQ(WEXITSTATUS(status), 0) << out;
  EXPECT_GT(scans, 10);
  EXPECT_TRUE(leaks.empty()) << "the password was on a command line: " << leaks.front();

  // The container runtime ran as root, for every node's server and, after
  // the servers ignored SIGTERM and were killed, for their cleanup.
  const std::string runtime = ReadText(dir_ / "runtime.log");
  size_t runs = 0, removals = 0;
  std::istringstream lines(runtime);
  for (std::string line; std::getline(lines, line);) {
    EXPECT_EQ(line.rfind("uid=0 ", 0), 0u) << runtime;
    runs += line == "uid=0 run" ? 1 : 0;
    removals += line == "uid=0 rm" ? 1 : 0;
  }
  EXPECT_EQ(runs, 4u) << runtime;
  EXPECT_EQ(removals, 4u) << runtime;
  // Root's servers ignored SIGTERM: only the stop step's root kill ended them.
  EXPECT_TRUE(ServeSimsLeft(5).empty()) << "root's servers outlived the run";

  const fs::path run = RunDir();
  ASSERT_FALSE(run.empty());
  const std::string bench = ReadText(run / "bench" / "pp8-tp4-ep4_c8_r1.json");
  EXPECT_NE(bench.find("ignored SIGTERM"), std::string::npos) << bench;
  const std::string commands = ReadText(run / "metadata" / "commands.txt");
  // Quoted once more inside ssh's remote command.
  EXPECT_NE(commands.find(R"(ppsearch-server sudo -k -S -p '\'''\'' -- docker run)"),
            std::string::npos)
      << commands;
  int files = 0;
  for (const auto& e : fs::recursive_directory_iterator(run)) {
    if (!e.is_regular_file()) continue;
    ++files;
    EXPECT_EQ(ReadBinary(e.path()).find(user->password()), std::string::npos) << e.path();
  }
  EXPECT_GT(files, 10);
  for (const fs::path& log : {out_file, dir_ / "sshd.log", dir_ / "runtime.log"})
    EXPECT_EQ(ReadBinary(log).find(user->password()), std::string::npos) << log;

  // A wrong password: one clear error before any sample, no hang.
  std::ofstream(password_file) << "not-" << user->password() << "\n";
  fs::remove_all(Results());
  const auto started = Clock::now();
  CommandResult wrong = Run("run " + spec);
  EXPECT_LT(Clock::now() - started, std::chrono::seconds(60));
  EXPECT_EQ(wrong.exit_code, 2) << wrong.err;
  EXPECT_NE(wrong.err.find("[cluster.sudo] on n0: sudo refused the password (the password from " +
                           password_file.string() + ")"),
            std::string::npos)
      << wrong.err;
  EXPECT_EQ(wrong.err.find(user->password()), std::string::npos);
  EXPECT_TRUE(RunDir().empty() || Manifest(RunDir()).empty()) << "a sample ran";

  // An unreadable password file: a config error naming it.
  fs::remove(password_file);
  CommandResult missing = Run("run " + spec + " --dry-run");
  EXPECT_EQ(missing.exit_code, 2) << missing.err;
  EXPECT_NE(missing.err.find("cannot read the sudo password file (cluster.sudo.password_file)"),
            std::string::npos)
      << missing.err;
  EXPECT_NE(missing.err.find(password_file.string()), std::string::npos) << missing.err;
}

}  // namespace
}  // namespace ppsearch::testing

// The host checks through the fake launcher: what each host's problem is
// called, that an unreachable host is not asked anything more, that every
// host of the cluster is checked, and how a busy port's holder is read from
// `ss`. A real socket on loopback stands for a port another process holds.

#include "sglang/host_check.h"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "launch/fake_launcher_testing.h"
#include "spec/spec_parser.h"

namespace ppsearch::sglang {
namespace {

using launch::FakeCall;
using launch::FakeLauncher;
using launch::FakeOutput;

constexpr const char* kIdleGpus = "0, GPU-0, NVIDIA H200, 1, 143771, 570.86\n";

// A socket listening on 127.0.0.3 (a free port), closed on destruction.
class Listener {
 public:
  Listener() {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    ::inet_pton(AF_INET, "127.0.0.3", &addr.sin_addr);
    EXPECT_EQ(::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
    EXPECT_EQ(::listen(fd_, 1), 0);
    socklen_t len = sizeof(addr);
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
  }
  ~Listener() { ::close(fd_); }
  int port() const { return port_; }

 private:
  int fd_ = -1;
  int port_ = 0;
};

spec::Spec ThreeHosts(int server_port) {
  const std::string text =
      "[experiment]\nname = \"t\"\n[cluster]\nhosts = [{name = \"n0\", address = \"127.0.0.1\"}, "
      "{name = \"n1\", address = \"127.0.0.2\"}, {name = \"n2\", address = \"127.0.0.3\"}]\n"
      "gpus_per_node = 1\nserver_port = " +
      std::to_string(server_port) +
      "\n[engine]\nmodel_config = \"m.json\"\nmodel_path = \"/m\"\n[sweep]\npp = [1]\n"
      "concurrency = [1]\n[workload]\ninput_tokens = 8\noutput_tokens = 1\nrequests = 1\n";
  Result<spec::Spec> s = spec::ParseSpec(text, "/tmp/spec.toml", {});
  EXPECT_TRUE(s.ok()) << s.error().message;
  return s.ok() ? *s : spec::Spec{};
}

TEST(HostCheck, NamesEachHostsProblemAndAsksAnUnreachableHostNothingMore) {
  Listener busy;  // n2's server port is taken
  const spec::Spec spec = ThreeHosts(busy.port());
  FakeLauncher launcher({"n0", "n1", "n2"}, "ssh");
  launcher.ScriptCommand(1, "true",
                         {MakeError("ssh to n1 (127.0.0.2): unreachable: ssh: connect to host "
                                    "127.0.0.2 port 22: No route to host")});
  launcher.ScriptCommand(FakeLauncher::kAnyNode, "--query-compute-apps", {FakeOutput("")});
  launcher.ScriptCommand(2, "--query-compute-apps", {FakeOutput("4242, python3, 40000\n")});
  launcher.ScriptCommand(FakeLauncher::kAnyNode, "--query-gpu", {FakeOutput(kIdleGpus)});
  launcher.ScriptCommand(2, "ss -Hltnp",
                         {FakeOutput("LISTEN 0 1 127.0.0.3:" + std::to_string(busy.port()) +
                                     " 0.0.0.0:* users:((\"sglang::sched\",pid=977,fd=12))\n")});

  const std::vector<HostProblem> problems = CheckCluster(launcher, spec, 5);
  ASSERT_EQ(problems.size(), 3u);
  EXPECT_EQ(problems[0].Describe(),
            "n1: reach: ssh to n1 (127.0.0.2): unreachable: ssh: connect to host 127.0.0.2 port "
            "22: No route to host");
  EXPECT_EQ(problems[1].Describe(), "n2: port: server port " + std::to_string(busy.port()) +
                                        " on 127.0.0.3 is already in use by pid 977 "
                                        "(sglang::sched)");
  EXPECT_EQ(problems[2].Describe(),
            "n2: gpu: GPU memory is held by another process: pid 4242 (python3) uses 40000 MiB "
            "(more than lifecycle.preflight_gpu_mib = 1024)");
  // Nothing but the reach probe went to n1; every command had the check's timeout.
  for (const FakeCall& call : launcher.calls()) {
    if (call.kind != FakeCall::Kind::kRunOnHost) continue;
    EXPECT_EQ(call.seconds, 5) << call.Describe();
    if (call.node == 1) {
      EXPECT_EQ(call.argv, std::vector<std::string>{"true"});
    }
  }
}

TEST(HostCheck, AHostThatDoesNotAnswerInTimeIsUnreachable) {
  const spec::Spec spec = ThreeHosts(1);  // port 1: nothing listens
  FakeLauncher launcher({"n0", "n1", "n2"}, "ssh");
  launcher.ScriptCommand(FakeLauncher::kAnyNode, "true", {launch::FakeTimeout()});
  const std::vector<HostProblem> problems = CheckCluster(launcher, spec, 2.5);
  ASSERT_EQ(problems.size(), 3u);
  for (size_t i = 0; i < problems.size(); ++i)
    EXPECT_EQ(problems[i].Describe(),
              fmt::format("n{}: reach: no answer within 2.5 s (unreachable, or the ssh launcher "
                          "is waiting for something)",
                          i));
}

TEST(HostCheck, NvidiaSmiThatFailsIsNamed) {
  const spec::Spec spec = ThreeHosts(1);
  FakeLauncher launcher({"n0", "n1", "n2"}, "ssh");
  launcher.ScriptCommand(FakeLauncher::kAnyNode, "--query-compute-apps", {FakeOutput("")});
  launcher.ScriptCommand(FakeLauncher::kAnyNode, "--query-gpu", {FakeOutput(kIdleGpus)});
  launcher.ScriptCommand(0, "--query-compute-apps",
                         {launch::FakeFailure(127, "bash: nvidia-smi: command not found")});
  const std::vector<HostProblem> problems = CheckCluster(launcher, spec, 5);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0].host, "n0");
  EXPECT_EQ(problems[0].check, "nvidia-smi");
  EXPECT_NE(problems[0].detail.find("command not found"), std::string::npos) << problems[0].detail;
}

TEST(HostCheck, PortHolderReadsTheFirstProcessThatSsNames) {
  EXPECT_EQ(PortHolder("LISTEN 0 4096 0.0.0.0:30000 0.0.0.0:* "
                       "users:((\"python3\",pid=1234,fd=7),(\"python3\",pid=1240,fd=7))\n"),
            "pid 1234 (python3)");
  EXPECT_EQ(PortHolder("LISTEN 0 4096 0.0.0.0:30000 0.0.0.0:*\n"), "");  // another user's
  EXPECT_EQ(PortHolder(""), "");
  EXPECT_EQ(PortHolder("users:((\"x\",pid=,fd=1))"), "");
}

}  // namespace
}  // namespace ppsearch::sglang

// The fake launcher keeps its own promises, so the engine tests built on it
// can trust what it reports: scripts in turn, signals that end a server or
// not, and a record of every call in order.

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "launch/fake_launcher_testing.h"

namespace ppsearch::launch {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;

ServerLaunch Launch(int node, const std::string& log_path) {
  ServerLaunch l;
  l.node = node;
  l.argv = {"python3", "-m", "sglang.launch_server"};
  l.env = {{"NCCL_DEBUG", "WARN"}};
  l.log_path = log_path;
  l.tag = "t-n" + std::to_string(node);
  return l;
}

class FakeLauncherTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("ppsearch_fake_launcher_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Log(int node) const {
    return (dir_ / ("n" + std::to_string(node) + ".log")).string();
  }
  fs::path dir_;
};

TEST_F(FakeLauncherTest, ServersEndAsScriptedAndEveryCallIsRecorded) {
  FakeLauncher launcher({"n0", "n1"});
  FakeServerScript stubborn;
  stubborn.ignores_sigterm = true;
  stubborn.log = "loading weights\n";
  launcher.ScriptServer(1, stubborn);
  auto p0 = launcher.StartServer(Launch(0, Log(0)));
  auto p1 = launcher.StartServer(Launch(1, Log(1)));
  ASSERT_TRUE(p0.ok() && p1.ok());
  EXPECT_EQ((*p1)->Record().host, "n1");
  EXPECT_EQ((*p1)->Record().launcher, "local") << "the kind it stands in for";
  EXPECT_FALSE((*p0)->Poll());
  ASSERT_TRUE((*p0)->Signal(SIGTERM).ok());
  ASSERT_TRUE((*p0)->Poll());
  EXPECT_EQ((*p0)->Poll()->Describe(), "was killed by signal 15 (SIGTERM)");
  ASSERT_TRUE((*p1)->Signal(SIGTERM).ok());
  EXPECT_FALSE((*p1)->Poll()) << "it ignores SIGTERM";
  ASSERT_TRUE((*p1)->Signal(SIGKILL).ok());
  EXPECT_TRUE((*p1)->Poll());
  std::stringstream log;
  log << std::ifstream(Log(1)).rdbuf();
  EXPECT_EQ(log.str(), "loading weights\n");
  EXPECT_THAT(launcher.CallLog(),
              ElementsAre("start 0 python3 -m sglang.launch_server",
                          "start 1 python3 -m sglang.launch_server", "signal 0 SIGTERM",
                          "signal 1 SIGTERM", "signal 1 SIGKILL"));
  EXPECT_EQ(launcher.calls()[0].env, (EnvList{{"NCCL_DEBUG", "WARN"}}));
}

TEST_F(FakeLauncherTest, ACrashAtStartAndARefusedStart) {
  FakeLauncher launcher;
  FakeServerScript crash;
  crash.exit_code_at_start = 1;
  launcher.ScriptServer(0, crash);
  FakeServerScript refused;
  refused.start_error = "ssh: connect to host n1 port 22: Connection refused";
  launcher.ScriptServer(1, refused);
  auto p0 = launcher.StartServer(Launch(0, Log(0)));
  ASSERT_TRUE(p0.ok());
  ASSERT_TRUE((*p0)->Poll());
  EXPECT_EQ((*p0)->Poll()->Describe(), "exited with status 1");
  auto p1 = launcher.StartServer(Launch(1, Log(1)));
  ASSERT_FALSE(p1.ok());
  EXPECT_EQ(p1.error().message, "ssh: connect to host n1 port 22: Connection refused");
}

TEST_F(FakeLauncherTest, CommandsGetTheirAnswersInTurnTheLastRepeating) {
  FakeLauncher launcher;
  launcher.ScriptCommand(FakeLauncher::kAnyNode, "--query-gpu", {FakeOutput("a"), FakeOutput("b")});
  launcher.ScriptCommand(1, "--query-gpu", {FakeTimeout()});
  const std::vector<std::string> smi = {"nvidia-smi", "--query-gpu=index"};
  EXPECT_EQ(launcher.RunOnHost(0, smi, 5)->out, "a");
  EXPECT_EQ(launcher.RunOnHost(0, smi, 5)->out, "b");
  EXPECT_EQ(launcher.RunOnHost(0, smi, 5)->out, "b");
  EXPECT_TRUE(launcher.RunOnHost(1, smi, 5)->timed_out) << "the node's own script wins";
  Result<Captured> other = launcher.RunOnHost(0, {"docker", "rm", "-f", "x"}, 5);
  ASSERT_TRUE(other.ok());
  EXPECT_EQ(other->exit.code, 127);
  EXPECT_EQ(other->err, "fake launcher: no answer scripted for 'docker rm -f x' on node 0");
  ServerRecord r;
  r.node = 2;
  r.tag = "left-over";
  EXPECT_TRUE(launcher.StopRecorded(r, 30).ok());
  launcher.ScriptStopRecorded(MakeError("cannot reach n2"));
  EXPECT_FALSE(launcher.StopRecorded(r, 30).ok());
  EXPECT_EQ(launcher.CallLog().back(), "stop-recorded 2 left-over");
  EXPECT_EQ(launcher.calls()[3].seconds, 5);
}

TEST_F(FakeLauncherTest, ExitServerEndsTheRunningServerAndRunsItsExitHook) {
  FakeLauncher launcher;
  int started = 0, exited = 0;
  FakeServerScript serving;
  serving.on_start = [&] { ++started; };
  serving.on_exit = [&] { ++exited; };
  launcher.ScriptServer(0, serving);
  auto p = launcher.StartServer(Launch(0, Log(0)));
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(started, 1);
  launcher.ExitServer(0, 3);
  ASSERT_TRUE((*p)->Poll());
  EXPECT_EQ((*p)->Poll()->code, 3);
  EXPECT_EQ(exited, 1);
  ASSERT_TRUE((*p)->Signal(SIGTERM).ok());
  EXPECT_EQ(exited, 1) << "an exited server does not exit again";
}

}  // namespace
}  // namespace ppsearch::launch

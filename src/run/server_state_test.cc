// The state files of launched servers and what a resume does with them,
// through the fake launcher: every recorded server is stopped on its node
// (with its cleanup), its file removed, and a launcher of another kind refused.

#include "run/server_state.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "launch/fake_launcher_testing.h"

namespace ppsearch::run {
namespace {

namespace fs = std::filesystem;
using evidence::LoadServerStates;
using evidence::SaveServerState;
using ::testing::ElementsAre;

class ServerStateTest : public ::testing::Test {
 protected:
  void SetUp() override {
    paths_.root =
        (fs::temp_directory_path() / ("ppsearch_server_state_" + std::to_string(::getpid())))
            .string();
    fs::remove_all(paths_.root);
  }
  void TearDown() override { fs::remove_all(paths_.root); }

  launch::ServerRecord Record(int node, const std::string& launcher) {
    launch::ServerRecord r;
    r.launcher = launcher;
    r.host = std::string(1, 'n') + std::to_string(node);
    r.node = node;
    r.pid = 4000 + node;
    r.tag = "ppsearch-t-pp2-tp2-ep1_c2_r1-" + r.host;
    return r;
  }

  evidence::RunPaths paths_;
};

TEST_F(ServerStateTest, AResumeStopsEveryRecordedServerAndRemovesItsFile) {
  launch::ServerRecord in_container = Record(1, "local");
  in_container.cleanup = {"docker", "rm", "-f", "c1"};
  ASSERT_TRUE(SaveServerState(paths_, Record(0, "local")).ok());
  ASSERT_TRUE(SaveServerState(paths_, in_container).ok());
  Result<std::vector<launch::ServerRecord>> saved = LoadServerStates(paths_);
  ASSERT_TRUE(saved.ok()) << saved.error().message;
  ASSERT_EQ(saved->size(), 2u);
  EXPECT_EQ((*saved)[1].cleanup, in_container.cleanup);

  launch::FakeLauncher launcher;
  launcher.ScriptCommand(1, "docker rm", {launch::FakeOutput("")});
  Result<std::vector<std::string>> stopped = StopLeftoverServers(paths_, launcher, 30, 5);
  ASSERT_TRUE(stopped.ok()) << stopped.error().message;
  EXPECT_THAT(launcher.CallLog(), ElementsAre("stop-recorded 0 ppsearch-t-pp2-tp2-ep1_c2_r1-n0",
                                              "stop-recorded 1 ppsearch-t-pp2-tp2-ep1_c2_r1-n1",
                                              "run 1 docker rm -f c1"));
  EXPECT_EQ(launcher.calls()[0].seconds, 30) << "the grace period";
  EXPECT_THAT(*stopped, ElementsAre("stopped pid 4000 on n0 (ppsearch-t-pp2-tp2-ep1_c2_r1-n0) left "
                                    "by an interrupted run",
                                    "stopped pid 4001 on n1 (ppsearch-t-pp2-tp2-ep1_c2_r1-n1) left "
                                    "by an interrupted run"));
  EXPECT_TRUE(LoadServerStates(paths_)->empty());
}

TEST_F(ServerStateTest, AServerThatCannotBeStoppedKeepsItsFile) {
  ASSERT_TRUE(SaveServerState(paths_, Record(0, "local")).ok());
  launch::FakeLauncher launcher;
  launcher.ScriptStopRecorded(MakeError("ssh: n0: Connection timed out"));
  Result<std::vector<std::string>> stopped = StopLeftoverServers(paths_, launcher, 30, 5);
  ASSERT_FALSE(stopped.ok());
  EXPECT_EQ(stopped.error().message,
            "cannot stop pid 4000 on n0 left by an earlier run: ssh: n0: Connection timed out");
  EXPECT_EQ(LoadServerStates(paths_)->size(), 1u) << "a later resume tries again";
}

TEST_F(ServerStateTest, ServersOfAnotherLauncherAreNotTouched) {
  ASSERT_TRUE(SaveServerState(paths_, Record(0, "ssh")).ok());
  launch::FakeLauncher launcher;
  Result<std::vector<std::string>> stopped = StopLeftoverServers(paths_, launcher, 30, 5);
  ASSERT_FALSE(stopped.ok());
  EXPECT_EQ(stopped.error().message,
            paths_.server_state("ppsearch-t-pp2-tp2-ep1_c2_r1-n0") +
                ": started by the ssh launcher, but the spec now uses local");
  EXPECT_TRUE(launcher.calls().empty());
}

}  // namespace
}  // namespace ppsearch::run

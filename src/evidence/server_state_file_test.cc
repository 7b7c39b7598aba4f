#include "evidence/server_state_file.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

namespace ppsearch::evidence {
namespace {

using ::testing::HasSubstr;

launch::ServerRecord SshRecord() {
  launch::ServerRecord r;
  r.launcher = "ssh";
  r.host = "n2";
  r.node = 2;
  r.pid = 4242;
  r.start_ticks = 99;
  r.client_pid = 77;
  r.tag = "ppsearch-t-n2";
  r.cleanup = {"docker", "rm", "-f", "x"};
  return r;
}

TEST(ServerStateFile, ARecordReadsBackAsWritten) {
  auto back = ReadServerRecord(ServerRecordJson(SshRecord()), "f.json");
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->launcher, "ssh");
  EXPECT_EQ(back->node, 2);
  EXPECT_EQ(back->pid, 4242);
  EXPECT_EQ(back->start_ticks, 99u);
  EXPECT_EQ(back->client_pid, 77);
  EXPECT_EQ(back->tag, "ppsearch-t-n2");
  EXPECT_EQ(back->cleanup.size(), 4u);
  EXPECT_EQ(back->Describe(), "pid 4242 on n2");
}

TEST(ServerStateFile, ABadRecordIsNamedByKey) {
  auto bad = ReadServerRecord({{"launcher", "pbs"}, {"host", "a"}, {"pid", 1}}, "f.json");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message, "f.json: unknown launcher 'pbs'");
  bad = ReadServerRecord({{"launcher", "ssh"}, {"host", "a"}}, "f.json");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.error().message, HasSubstr("f.json: key 'pid' must be an integer"));
  bad = ReadServerRecord({{"launcher", "ssh"}, {"host", "a"}, {"pid", "1"}}, "f.json");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.error().message, HasSubstr("key 'pid' must be"));
  bad = ReadServerRecord(nlohmann::json::array(), "f.json");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message, "f.json: not a server record (a JSON object)");
}

TEST(ServerStateFile, SavedLoadedAndRemovedAndALinkIsNotFollowed) {
  RunPaths paths{(std::filesystem::temp_directory_path() /
                  ("ppsearch_state_file_" + std::to_string(::getpid())))
                     .string()};
  std::filesystem::remove_all(paths.root);
  ASSERT_TRUE(SaveServerState(paths, SshRecord()).ok());
  auto loaded = LoadServerStates(paths);
  ASSERT_TRUE(loaded.ok()) << loaded.error().message;
  ASSERT_EQ(loaded->size(), 1u);
  EXPECT_EQ((*loaded)[0].tag, "ppsearch-t-n2");
  // A state file planted as a link is refused, not read through.
  std::filesystem::create_symlink("/etc/hostname", paths.server_state("planted"));
  loaded = LoadServerStates(paths);
  ASSERT_FALSE(loaded.ok());
  EXPECT_THAT(loaded.error().message, HasSubstr("planted.json"));
  std::filesystem::remove(paths.server_state("planted"));
  RemoveServerState(paths, SshRecord());
  loaded = LoadServerStates(paths);
  ASSERT_TRUE(loaded.ok());
  EXPECT_TRUE(loaded->empty());
  std::filesystem::remove_all(paths.root);
}

}  // namespace
}  // namespace ppsearch::evidence

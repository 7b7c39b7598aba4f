// Where the data directory is found: environment, installed tree beside the
// executable, source tree. What a read refuses (non-regular files, links when
// told, files over the limit) and that an atomic write never writes through a
// link planted at its temporary path.

#include "util/files.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace ppsearch {
namespace {

namespace fs = std::filesystem;

class DataDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() /
            ("ppsearch_datadir_" + std::to_string(::getpid()) + "_" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(root_ / "prefix/bin");
    exe_ = (root_ / "prefix/bin/ppsearch").string();
    installed_ = (root_ / "prefix/share/ppsearch/data").string();
    source_ = (root_ / "source/data").string();
  }
  void TearDown() override { fs::remove_all(root_); }

  fs::path root_;
  std::string exe_, installed_, source_;
};

TEST_F(DataDirTest, EnvironmentWinsOverEverything) {
  fs::create_directories(installed_);
  fs::create_directories(source_);
  EXPECT_EQ(ChooseDataDir("/elsewhere/data", exe_, source_), "/elsewhere/data");
}

TEST_F(DataDirTest, InstalledTreeBesideTheExecutableWinsOverTheSourceTree) {
  fs::create_directories(installed_);
  fs::create_directories(source_);
  EXPECT_EQ(ChooseDataDir("", exe_, source_), installed_);
}

TEST_F(DataDirTest, SourceTreeIsTheFallbackForADevelopmentBuild) {
  fs::create_directories(source_);
  EXPECT_EQ(ChooseDataDir("", exe_, source_), source_);
  EXPECT_EQ(ChooseDataDir("", "", source_), source_);
}

TEST_F(DataDirTest, WithNoDataAnywhereNamesTheInstalledLocation) {
  EXPECT_EQ(ChooseDataDir("", exe_, source_), installed_);
  EXPECT_EQ(ChooseDataDir("", "", source_), source_);
}

TEST(DataDir, DevelopmentBuildFindsTheSourceTreeData) {
  if (getenv("PPSEARCH_DATA_DIR") != nullptr) GTEST_SKIP() << "PPSEARCH_DATA_DIR is set";
  EXPECT_TRUE(fs::is_regular_file(DataDir() + "/hardware/rtx-6000d.toml")) << DataDir();
}

class ReadFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("ppsearch_readfile_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Write(const std::string& name, const std::string& text) {
    const std::string path = (dir_ / name).string();
    std::ofstream(path, std::ios::binary) << text;
    return path;
  }

  fs::path dir_;
};

TEST_F(ReadFileTest, ReadsARegularFileWhole) {
  const std::string path = Write("a.txt", std::string(200000, 'x') + "end");
  Result<std::string> text = ReadFile(path);
  ASSERT_TRUE(text.ok()) << text.error().message;
  EXPECT_EQ(text->size(), 200003u);
}

TEST_F(ReadFileTest, RefusesAFifoWithoutBlocking) {
  const std::string path = (dir_ / "fifo").string();
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
  Result<std::string> text = ReadFile(path);
  ASSERT_FALSE(text.ok());
  EXPECT_NE(text.error().message.find(path + ": is a FIFO, expected a regular file"),
            std::string::npos)
      << text.error().message;
}

TEST_F(ReadFileTest, RefusesADeviceAndADirectory) {
  Result<std::string> zero = ReadFile("/dev/zero");
  ASSERT_FALSE(zero.ok());
  EXPECT_NE(zero.error().message.find("/dev/zero: is a character device"), std::string::npos)
      << zero.error().message;
  Result<std::string> dir = ReadFile(dir_.string());
  ASSERT_FALSE(dir.ok());
  EXPECT_NE(dir.error().message.find("is a directory"), std::string::npos);
}

TEST_F(ReadFileTest, RefusesAFileOverTheLimit) {
  const std::string path = Write("big.csv", std::string(4096, 'x'));
  ReadOptions options;
  options.max_bytes = 1024;
  Result<std::string> text = ReadFile(path, options);
  ASSERT_FALSE(text.ok());
  EXPECT_NE(text.error().message.find(path + ": larger than 1024 bytes"), std::string::npos)
      << text.error().message;
  options.max_bytes = 4096;
  EXPECT_TRUE(ReadFile(path, options).ok());
}

TEST_F(ReadFileTest, FollowsALinkOnlyWhenAllowed) {
  const std::string target = Write("target.txt", "secret elsewhere");
  const std::string link = (dir_ / "link.txt").string();
  fs::create_symlink(target, link);
  EXPECT_TRUE(ReadFile(link).ok());
  ReadOptions evidence;
  evidence.follow_links = false;
  Result<std::string> text = ReadFile(link, evidence);
  ASSERT_FALSE(text.ok());
  EXPECT_NE(text.error().message.find(link + ": is a symbolic link"), std::string::npos)
      << text.error().message;
}

TEST_F(ReadFileTest, AtomicWriteReplacesALinkAtItsTemporaryPathInsteadOfWritingThroughIt) {
  const std::string victim = Write("victim.txt", "untouched");
  const std::string path = (dir_ / "out.json").string();
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  fs::create_symlink(victim, tmp);
  ASSERT_TRUE(WriteFileAtomic(path, "new contents").ok());
  EXPECT_EQ(*ReadFile(victim), "untouched");
  EXPECT_EQ(*ReadFile(path), "new contents");
  EXPECT_FALSE(fs::exists(fs::symlink_status(tmp)));
}

}  // namespace
}  // namespace ppsearch

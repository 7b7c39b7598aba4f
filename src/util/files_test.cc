// Where the data directory is found: environment, installed tree beside the
// executable, source tree.

#include "util/files.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
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

}  // namespace
}  // namespace ppsearch

// `cmake --install` of this build tree, then the installed binary moved to
// another prefix and run from elsewhere: it must find its data beside itself
// (share/ppsearch/data), not in the source tree it was built from.

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <string>

#include "cli_fixture.h"

namespace {

namespace fs = std::filesystem;
using ppsearch::testing::ReadText;

class InstallE2e : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("ppsearch_install_" + std::to_string(::getpid()));
    fs::remove_all(root_);
    fs::create_directories(root_ / "elsewhere");
  }
  void TearDown() override { fs::remove_all(root_); }

  // Runs `command` in a shell from `cwd` without PPSEARCH_DATA_DIR; its exit
  // code, with stdout and stderr in root_/out.txt.
  int Shell(const std::string& command, const fs::path& cwd) {
    const std::string line = "cd '" + cwd.string() + "' && env -u PPSEARCH_DATA_DIR " + command +
                             " >'" + (root_ / "out.txt").string() + "' 2>&1";
    const int status = std::system(line.c_str());
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  std::string Output() const { return ReadText(root_ / "out.txt"); }

  fs::path root_;
};

TEST_F(InstallE2e, MovedInstallFindsItsOwnData) {
  const fs::path first = root_ / "first";
  ASSERT_EQ(Shell(std::string("'") + PPSEARCH_CMAKE_COMMAND + "' --install '" + PPSEARCH_BUILD_DIR +
                      "' --prefix '" + first.string() + "'",
                  root_),
            0)
      << Output();
  const fs::path share = first / "share/ppsearch";
  for (const char* path : {"bin/ppsearch", "share/ppsearch/data/hardware/rtx-6000d.toml",
                           "share/ppsearch/data/models/kimi-k3/config.json",
                           "share/ppsearch/data/baseline/pp1-tp32-ep4.csv",
                           "share/ppsearch/data/model_error.json",
                           "share/ppsearch/examples/kimi-k3-pp-search.toml"}) {
    EXPECT_TRUE(fs::is_regular_file(first / path)) << path;
  }

  // A profile only the installed tree has: found only if the binary looks
  // beside itself rather than in the source tree.
  const fs::path hardware = share / "data/hardware";
  std::string profile = ReadText(hardware / "rtx-6000d.toml");
  profile =
      std::regex_replace(profile, std::regex("name = \"rtx-6000d\""), "name = \"installed-only\"");
  std::ofstream(hardware / "installed-only.toml") << profile;

  // Moved: the first prefix no longer exists.
  const fs::path moved = root_ / "moved";
  fs::copy(first, moved, fs::copy_options::recursive);
  fs::remove_all(first);

  const std::string bin = (moved / "bin/ppsearch").string();
  const std::string spec = (moved / "share/ppsearch/examples/kimi-k3-pp-search.toml").string();
  EXPECT_EQ(Shell(bin + " plan " + spec, root_ / "elsewhere"), 0) << Output();
  EXPECT_EQ(
      Shell(bin + " plan " + spec + " --set cluster.hardware=installed-only", root_ / "elsewhere"),
      0)
      << Output();
  EXPECT_EQ(Shell(bin + " model " + (moved / "share/ppsearch/data/models/kimi-k3").string(),
                  root_ / "elsewhere"),
            0)
      << Output();
  // A shipped model by its name, as a shipped hardware profile.
  EXPECT_EQ(Shell(bin + " model kimi-k3", root_ / "elsewhere"), 0) << Output();
  EXPECT_NE(Output().find("kimi-k3"), std::string::npos) << Output();
  EXPECT_EQ(Shell(bin + " model kimi-k9", root_ / "elsewhere"), 2) << Output();
  EXPECT_NE(Output().find("no shipped model of that name (shipped: deepseek-v3, kimi-k2, kimi-k3"),
            std::string::npos)
      << Output();
  // The shipped backtest cases travel with the install.
  EXPECT_EQ(Shell(bin + " backtest", root_ / "elsewhere"), 0) << Output();
  EXPECT_NE(Output().find("lmsys-h20"), std::string::npos) << Output();

  // Without its data the binary says where it looked.
  fs::remove_all(moved / "share/ppsearch/data/hardware");
  EXPECT_NE(
      Shell(bin + " plan " + spec + " --set cluster.hardware=installed-only", root_ / "elsewhere"),
      0);
  EXPECT_NE(Output().find("unknown hardware profile 'installed-only'"), std::string::npos)
      << Output();
}

}  // namespace

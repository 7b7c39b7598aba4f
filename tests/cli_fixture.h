#pragma once
// Runs the built ppsearch binary (PPSEARCH_BIN, set by CMake) as a user
// would, from the repository root, with a scratch directory per test.

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace ppsearch::testing {

struct CommandResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

// How much slower than an idle machine this one is now: the one-minute load
// average per core, at least 1 and at most 10. A deadline a test waits on
// (a server to answer, a sample to finish) is multiplied by it, so a busy
// machine, as a user's often is, does not fail a test for want of seconds.
inline double LoadFactor() {
  double load = 0;
  const long cores = ::sysconf(_SC_NPROCESSORS_ONLN);
  if (::getloadavg(&load, 1) != 1 || cores < 1) return 1;
  return std::clamp(load / static_cast<double>(cores), 1.0, 10.0);
}

inline std::string ReadText(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream buf;
  buf << in.rdbuf();
  return buf.str();
}

class CliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // dir_ first: fixtures find (and kill) the processes their test started
    // by the paths under it, so it must never be empty, not even when the
    // binary is missing and the test stops here.
    dir_ = std::filesystem::temp_directory_path() /
           ("ppsearch_e2e_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
    const char* bin = std::getenv("PPSEARCH_BIN");
    ASSERT_NE(bin, nullptr) << "PPSEARCH_BIN is set by CMake's test properties";
    bin_ = bin;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // Runs `ppsearch <args>`; stdout and stderr are kept apart.
  CommandResult Run(const std::string& args) { return RunCommand(bin_ + " " + args); }

  // Runs a shell command line (ppsearch inside a wrapper such as salloc);
  // stdout and stderr are kept apart.
  CommandResult RunCommand(const std::string& command) {
    const std::filesystem::path err_file = dir_ / "stderr.txt";
    const std::string cmd = "(" + command + ") 2>" + err_file.string();
    CommandResult result;
    FILE* pipe = ::popen(cmd.c_str(), "r");
    if (pipe == nullptr) return result;
    char buf[4096];
    for (size_t n; (n = std::fread(buf, 1, sizeof(buf), pipe)) > 0;) result.out.append(buf, n);
    const int status = ::pclose(pipe);
    result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    result.err = ReadText(err_file);
    return result;
  }

  std::string bin_;
  std::filesystem::path dir_;
};

}  // namespace ppsearch::testing

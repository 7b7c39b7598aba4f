// The fixtures find the processes a test started by words of their command
// line, then kill them: an empty word would find every process.

#include "process_fixture.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

namespace ppsearch::testing {
namespace {

TEST(ProcessFixture, AnEmptyWordFindsNoProcessAndAWordOfOneFindsOnlyIt) {
  const std::string mark = "ppsearch-fixture-" + std::to_string(::getpid());
  const std::string log = (std::filesystem::temp_directory_path() / (mark + ".log")).string();
  const pid_t sleeper = StartDaemon({"/bin/sh", "-c", "sleep 30; : " + mark}, log);
  ASSERT_GT(sleeper, 0);
  // Until the shell's child has exec'd sleep: between its fork and its exec
  // it still carries the shell's command line, mark included.
  std::vector<pid_t> found;
  for (int i = 0; i < 100 && found != std::vector<pid_t>{sleeper}; ++i) {
    found = ProcessesMentioning({mark});
    if (found != std::vector<pid_t>{sleeper})
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_EQ(found, std::vector<pid_t>{sleeper});
  EXPECT_TRUE(ProcessesMentioning({""}).empty());
  EXPECT_TRUE(ProcessesMentioning({mark, ""}).empty());
  EXPECT_TRUE(ProcessesWhose("environ", {""}).empty());
  StopDaemons({sleeper}, 5);
  std::filesystem::remove(log);
}

}  // namespace
}  // namespace ppsearch::testing

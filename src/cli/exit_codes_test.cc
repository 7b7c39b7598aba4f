#include <gtest/gtest.h>

#include "cli/command.h"
#include "util/files.h"

namespace ppsearch::cli {
namespace {

TEST(ExitCodes, OneMappingFromErrorKinds) {
  EXPECT_EQ(ExitCodeFor(MakeError("bad spec")), kExitConfigError);
  EXPECT_EQ(ExitCodeFor(IoError("disk full")), kExitFailure);
  EXPECT_EQ(ExitCodeFor(MakeError("x", ErrorKind::kIncomplete)), kExitIncomplete);
  EXPECT_EQ(ExitCodeFor(MakeError("x", ErrorKind::kNoQualifier)), kExitNoneQualifies);
  EXPECT_EQ(ExitCodeFor(MakeError("x", ErrorKind::kInternal)), kExitFailure);
}

TEST(ExitCodes, WritingFailuresAreIoErrorsAndReadingABadPathIsTheUsers) {
  Status w = WriteFileAtomic("/proc/ppsearch-cannot/x.json", "{}");
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(ExitCodeFor(w.error()), kExitFailure) << w.error().message;
  Result<std::string> r = ReadFile("/nonexistent/spec.toml");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(ExitCodeFor(r.error()), kExitConfigError);
}

}  // namespace
}  // namespace ppsearch::cli

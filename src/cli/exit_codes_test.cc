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

TEST(ExitCodes, SeveralErrorsAreOneErrorWhoseLinesMainPrefixesAlike) {
  const Error e = ErrorLines({"a.toml:3:1: bad", "PP3 does not divide 61 layers"});
  EXPECT_EQ("error: " + e.message, "error: a.toml:3:1: bad\nerror: PP3 does not divide 61 layers");
  EXPECT_EQ(ExitCodeFor(e), kExitConfigError);
  EXPECT_EQ(ExitCodeFor(ErrorLines({"x", "cannot write y"}, ErrorKind::kIo)), kExitFailure);
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

#include "loadgen/url.h"

#include <gtest/gtest.h>

namespace ppsearch::loadgen {
namespace {

// No output or message shows a URL's user and password, even one whose
// password holds a '/' (a URL libcurl refuses, whose error still quotes it).
TEST(ShownUrl, HidesTheUserAndPassword) {
  EXPECT_EQ(ShownUrl("http://u:pw@h:1/generate"), "http://<redacted>@h:1/generate");
  EXPECT_EQ(ShownUrl("http://u:p/w@h:1"), "http://<redacted>@h:1");
  EXPECT_EQ(ShownUrl("http://h:1/a?x=u@v"), "http://h:1/a?x=u@v");
  EXPECT_EQ(ShownUrl("http://h:3/x@y"), "http://h:3/x@y");  // the path holds it
  EXPECT_EQ(ShownUrl("http://h:1"), "http://h:1");
}

TEST(CheckServerUrl, NamesTheFlagAndHidesThePassword) {
  EXPECT_TRUE(CheckServerUrl("http://127.0.0.1:30000").ok());
  const std::string message = CheckServerUrl("http://u:p/w@127.0.0.1:1").error().message;
  EXPECT_EQ(message.rfind("--url 'http://<redacted>@127.0.0.1:1' is not a URL: ", 0), 0u)
      << message;
  EXPECT_EQ(CheckServerUrl("127.0.0.1:1").error().message,
            "--url must start with http:// or https://, e.g. http://127.0.0.1:30000 (got "
            "'127.0.0.1:1')");
}

}  // namespace
}  // namespace ppsearch::loadgen

#include "util/safe_name.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace ppsearch {
namespace {

TEST(SafeName, OneShortPathComponentThatIsNoOption) {
  for (const std::string& ok :
       std::vector<std::string>{"kimi3-pp", "run.2", "A_b", std::string(kMaxNameBytes, 'a')})
    EXPECT_TRUE(IsSafeName(ok)) << ok;
  for (const std::string& bad :
       std::vector<std::string>{"", ".", "..", "-foo", "--help", ".hidden", "_x", "a/b", "a b",
                                "a;b", std::string(kMaxNameBytes + 1, 'a')})
    EXPECT_FALSE(IsSafeName(bad)) << bad;
}

}  // namespace
}  // namespace ppsearch

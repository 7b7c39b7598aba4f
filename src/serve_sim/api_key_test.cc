// The --api-key check: only the exact header passes, and the decision is
// made by comparing two fixed-length digests through the comparison routine,
// never the key or the header themselves (checked by recording what is
// compared, not by timing, which would flake).

#include "serve_sim/api_key.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace ppsearch::serve_sim {
namespace {

TEST(ApiKeyCheck, AdmitsTheExactHeaderAloneNeverAPrefixALongerKeyOrAnotherCase) {
  const ApiKeyCheck check("s3cret");
  EXPECT_TRUE(check.asks());
  EXPECT_TRUE(check.Admits("Bearer s3cret"));
  EXPECT_FALSE(check.Admits("Bearer s3cre"));    // a prefix
  EXPECT_FALSE(check.Admits("Bearer "));         // the empty prefix
  EXPECT_FALSE(check.Admits("Bearer s3cret!"));  // longer
  EXPECT_FALSE(check.Admits("Bearer s3creT"));   // same length, last byte differs
  EXPECT_FALSE(check.Admits("Bearer S3cret"));   // same length, first byte differs
  EXPECT_FALSE(check.Admits("s3cret"));
  EXPECT_FALSE(check.Admits(""));
  const ApiKeyCheck none;
  EXPECT_FALSE(none.asks());
  EXPECT_TRUE(none.Admits(""));
  EXPECT_TRUE(none.Admits("Bearer anything"));
}

struct Compared {
  std::string a, b;
};
std::vector<Compared>* g_compared = nullptr;
bool g_answer = false;

bool Record(std::string_view a, std::string_view b) {
  g_compared->push_back({std::string(a), std::string(b)});
  return g_answer;
}

// Were the check to go back to comparing the header with "Bearer <key>"
// (==, or any comparison that stops early or skips on length), the
// recorder would not see every request, or would see the header itself.
TEST(ApiKeyCheck, EveryRequestComparesTwoDigestsOfOneLengthThroughTheRoutine) {
  std::vector<Compared> compared;
  g_compared = &compared;
  const std::string key = "s3cret";
  const ApiKeyCheck check(key, Record);
  const std::vector<std::string> headers = {
      "", "B", "Bearer s3cre", "Bearer s3cret", "Bearer s3cret!", std::string(10000, 'x')};
  g_answer = false;
  for (const std::string& h : headers) EXPECT_FALSE(check.Admits(h)) << h.size();
  ASSERT_EQ(compared.size(), headers.size());
  for (size_t i = 0; i < compared.size(); ++i) {
    EXPECT_EQ(compared[i].a.size(), 64u) << headers[i].size();
    EXPECT_EQ(compared[i].b.size(), 64u) << headers[i].size();
    EXPECT_EQ(compared[i].a.find(key), std::string::npos);
    EXPECT_EQ(compared[i].b.find(key), std::string::npos);
    EXPECT_EQ(compared[i].b, compared[0].b) << "the key's digest, the same every time";
  }
  EXPECT_EQ(compared[3].a, compared[3].b) << "the right header's digest is the key's";
  EXPECT_NE(compared[2].a, compared[2].b);
  // The routine's answer is the decision.
  g_answer = true;
  EXPECT_TRUE(check.Admits("Bearer wrong"));
  g_compared = nullptr;
}

TEST(SameDigest, EqualOnlyForTheSameBytesOfTheSameLength) {
  EXPECT_TRUE(SameDigest("", ""));
  EXPECT_TRUE(SameDigest("abcdef", "abcdef"));
  EXPECT_FALSE(SameDigest("abcdef", "abcdeg"));
  EXPECT_FALSE(SameDigest("abcdef", "bbcdef"));
  EXPECT_FALSE(SameDigest("abc", "abcdef"));  // a prefix
  EXPECT_FALSE(SameDigest("abcdef", "abc"));
  const std::string with_nul("ab\0cd", 5), other_nul("ab\0ce", 5);
  EXPECT_FALSE(SameDigest(with_nul, other_nul)) << "every byte, past a NUL too";
}

}  // namespace
}  // namespace ppsearch::serve_sim

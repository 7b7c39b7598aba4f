#include "util/excerpt.h"

#include <gtest/gtest.h>

#include <string>

namespace ppsearch {
namespace {

TEST(Excerpt, KeepsShortTextAndCutsLongTextSayingItsSize) {
  EXPECT_EQ(Excerpt("kimi3-pp"), "kimi3-pp");
  EXPECT_EQ(Excerpt(std::string(80, 'a')), std::string(80, 'a'));
  EXPECT_EQ(Excerpt(std::string(1 << 20, 'a')), std::string(80, 'a') + "... (1048576 bytes)");
  EXPECT_EQ(Excerpt("abcdef", 3), "abc... (6 bytes)");
  // "é" is two bytes: a cut inside it backs off to the character before.
  EXPECT_EQ(Excerpt("ab\xc3\xa9z", 3), "ab... (5 bytes)");
}

}  // namespace
}  // namespace ppsearch

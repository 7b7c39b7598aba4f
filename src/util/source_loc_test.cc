// SourceLoc's "file:line:col: key 'x'" prefixes.

#include "util/source_loc.h"

#include <gtest/gtest.h>

namespace ppsearch {
namespace {

TEST(SourceLoc, PositionOmitsUnknownParts) {
  EXPECT_EQ((SourceLoc{"a.toml", 41, 7, ""}).Position(), "a.toml:41:7");
  EXPECT_EQ((SourceLoc{"a.toml", 41, 0, ""}).Position(), "a.toml:41");
  EXPECT_EQ((SourceLoc{"a.toml", 0, 7, ""}).Position(), "a.toml");
  EXPECT_EQ((SourceLoc{"", 0, 0, ""}).Position(), "");
}

TEST(SourceLoc, WhereAddsTheKey) {
  EXPECT_EQ((SourceLoc{"a.toml", 3, 1, "sweep.pp"}).Where(), "a.toml:3:1: key 'sweep.pp'");
  EXPECT_EQ((SourceLoc{"a.toml", 0, 0, ""}).Where(), "a.toml");
  EXPECT_EQ((SourceLoc{"", 0, 0, "sweep.pp"}).Where(), "key 'sweep.pp'");
}

}  // namespace
}  // namespace ppsearch

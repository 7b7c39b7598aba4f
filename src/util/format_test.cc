#include "util/format.h"

#include <gtest/gtest.h>

namespace ppsearch {
namespace {

TEST(FormatTest, GroupsThousands) {
  EXPECT_EQ(FormatThousands(0), "0");
  EXPECT_EQ(FormatThousands(999), "999");
  EXPECT_EQ(FormatThousands(1000), "1,000");
  EXPECT_EQ(FormatThousands(-1234567), "-1,234,567");
  EXPECT_EQ(FormatNumber(3257.956, 2), "3,257.96");
  EXPECT_EQ(FormatNumber(-0.001, 2), "0.00");
  EXPECT_EQ(FormatSignedPercent(0.1234), "+12.34%");
  EXPECT_EQ(FormatSignedPercent(-0.5), "-50.00%");
}

// A range whose ends print alike is one figure: "9.1%", not "9.1% to 9.1%".
TEST(FormatTest, APercentRangeWhoseEndsPrintAlikeIsOneFigure) {
  EXPECT_EQ(FormatPercentRange(0.071, 0.317), "7.1% to 31.7%");
  EXPECT_EQ(FormatPercentRange(0.0912, 0.0908), "9.1%");
  EXPECT_EQ(FormatPercentRange(0.25, 0.25, 0), "25%");
}

}  // namespace
}  // namespace ppsearch

#include "sglang/node_gpus.h"

#include <gtest/gtest.h>

namespace ppsearch::sglang {
namespace {

TEST(ComputeApps, ParsesNvidiaSmiIncludingNamesWithCommasAndNa) {
  auto apps =
      ParseComputeApps("4242, python3, 40000\n\n 77 , /usr/bin/a,b , [N/A]\n", "nvidia-smi on n0");
  ASSERT_TRUE(apps.ok()) << apps.error().message;
  ASSERT_EQ(apps->size(), 2u);
  EXPECT_EQ((*apps)[0].pid, 4242);
  EXPECT_EQ((*apps)[0].name, "python3");
  EXPECT_EQ(*(*apps)[0].used_mib, 40000);
  EXPECT_EQ((*apps)[1].name, "/usr/bin/a,b");
  EXPECT_FALSE((*apps)[1].used_mib.has_value());
  auto bad = ParseComputeApps("No running processes found\n", "nvidia-smi on n1");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message,
            "nvidia-smi on n1:1: expected 'pid, process_name, used_memory': 'No running processes "
            "found'");
}

}  // namespace
}  // namespace ppsearch::sglang

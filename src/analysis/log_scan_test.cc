#include "analysis/log_scan.h"

#include <gtest/gtest.h>

namespace ppsearch::analysis {
namespace {

struct Case {
  const char* line;
  FindingKind kind;
};

TEST(ScanLog, EveryPatternIsFoundWithFileAndLine) {
  const Case cases[] = {
      {"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB",
       FindingKind::kCudaOom},
      {"RuntimeError: CUDA out of memory.", FindingKind::kCudaOom},
      {"OutOfMemoryError raised in worker", FindingKind::kCudaOom},
      {"NCCL error: unhandled system error", FindingKind::kNcclFailure},
      {"node:1:1 [0] NCCL WARN Net : Connection closed by remote peer", FindingKind::kNcclFailure},
      {"[Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1187)",
       FindingKind::kNcclFailure},
      {"ncclInternalError: Internal check failed.", FindingKind::kNcclFailure},
      {"ncclSystemError: System call failed", FindingKind::kNcclFailure},
      {"RuntimeError: CUDA error: device-side assert triggered", FindingKind::kCudaError},
      {"an illegal memory access was encountered", FindingKind::kCudaError},
      {"Traceback (most recent call last):", FindingKind::kTraceback},
      {"Received sigquit from a child process. It usually means the child failed.",
       FindingKind::kEngineExit},
      {"Rank 3 scheduler exited with code -9", FindingKind::kEngineExit},
      {"[2026-01-01 00:00:00 PP1] Scheduler hit an exception: boom", FindingKind::kEngineExit},
      {"server process exited unexpectedly", FindingKind::kEngineExit},
  };
  for (const Case& c : cases) {
    const std::string text =
        "[2026-01-01 00:00:00] Load weight end.\n\n" + std::string(c.line) + "\n";
    std::vector<LogFinding> found = ScanLog(text, "service/s/603.log");
    ASSERT_FALSE(found.empty()) << c.line;
    const LogFinding* worst = MostSevere(found);
    EXPECT_EQ(worst->kind, c.kind) << c.line;
    EXPECT_EQ(worst->Where(), "service/s/603.log:3") << c.line;
    EXPECT_EQ(worst->text, c.line);
  }
}

TEST(ScanLog, CleanLogHasNoFinding) {
  EXPECT_TRUE(ScanLog("[2026-01-01 00:00:00] Prefill batch. #new-seq: 1\n"
                      "[2026-01-01 00:00:01] The server is fired up and ready to roll!\n",
                      "x.log")
                  .empty());
}

TEST(ScanLog, OomBlockReportsEachKindOnItsLineAndOomIsMostSevere) {
  const std::string text =
      "[2026-01-01 00:00:00] Scheduler hit an exception: Traceback (most recent call last):\n"
      "  File \"scheduler.py\", line 3046, in run_scheduler_process\n"
      "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.\n";
  std::vector<LogFinding> found = ScanLog(text, "603.log");
  ASSERT_EQ(found.size(), 3u);
  EXPECT_EQ(found[0].kind, FindingKind::kTraceback);
  EXPECT_EQ(found[0].line, 1);
  EXPECT_EQ(found[1].kind, FindingKind::kEngineExit);
  EXPECT_EQ(found[1].line, 1);
  EXPECT_EQ(found[2].kind, FindingKind::kCudaOom);
  EXPECT_EQ(MostSevere(found)->Where(), "603.log:3");
  EXPECT_STREQ(FindingKindName(MostSevere(found)->kind), "CUDA out of memory");
}

}  // namespace
}  // namespace ppsearch::analysis

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
      {"RuntimeError: CUDA error: out of memory", FindingKind::kCudaOom},
      {"[2026-01-01 00:00:00 TP0] Watchdog timeout (self.watchdog_timeout=300)",
       FindingKind::kEngineExit},
      {"Fatal Python error: Segmentation fault", FindingKind::kEngineExit},
      {"Fatal Python error: Aborted", FindingKind::kEngineExit},
      {"[2026-01-01 00:00:00] Child process unexpectedly failed with an exit code 139. pid=4242",
       FindingKind::kEngineExit},
      {"[2026-01-01 00:00:00] Child process unexpectedly failed with exitcode=256. pid=4242",
       FindingKind::kEngineExit},
      {"torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:1970, unhandled "
       "system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.21.5",
       FindingKind::kNcclFailure},
      {"ncclRemoteError: A call failed possibly due to a network error or a remote process "
       "exiting prematurely.",
       FindingKind::kNcclFailure},
      {"n1:77:90 [1] transport/net_ib.cc:1696 NCCL WARN NET/IB : Got completion from peer "
       "10.0.0.2<48231> with status=12 opcode=0 len=0 vendor err 129 (Recv)",
       FindingKind::kNcclFailure},
      {"[rank3]:[E1201 ProcessGroupNCCL.cpp:1484] [PG 0 Rank 3] Some NCCL operations have failed "
       "or timed out.",
       FindingKind::kNcclFailure},
      {"n1:77:90 [1] misc/socket.cc:49 NCCL WARN socketProgress: Connection reset by peer",
       FindingKind::kNcclFailure},
      {"n1:77:90 [1] proxy.cc:1504 NCCL WARN [Proxy Service 1] Failed to execute operation "
       "Connect from rank 9, retcode 3",
       FindingKind::kNcclFailure},
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

TEST(ScanLog, NcclSetupWarningsAreNotFailures) {
  // What NCCL_DEBUG = "WARN" prints on a healthy node.
  const std::string text =
      "n0:41:41 [0] init.cc:136 NCCL WARN Missing \"iommu=pt\" from kernel command line which "
      "can lead to system instablity or hang!\n"
      "n0:41:41 [0] misc/ibvwrap.cc:63 NCCL WARN Failed to open libibverbs.so[.1]\n"
      "n0:41:41 [0] NCCL WARN NET/Plugin : Plugin load (libnccl-net.so) returned 2 : "
      "libnccl-net.so: cannot open shared object file: No such file or directory\n"
      "n0:41:97 [0] graph/search.cc:1127 NCCL WARN Could not find a path for pattern 4, falling "
      "back to simple order\n";
  EXPECT_TRUE(ScanLog(text, "601.log").empty());
}

TEST(ScanLog, CudaOutOfMemoryErrorIsOnlyOom) {
  std::vector<LogFinding> found = ScanLog("RuntimeError: CUDA error: out of memory\n", "x.log");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].kind, FindingKind::kCudaOom);
}

TEST(ScanLog, EveryKindButATracebackEndsTheServer) {
  EXPECT_TRUE(EndsTheServer(FindingKind::kCudaOom));
  EXPECT_TRUE(EndsTheServer(FindingKind::kNcclFailure));
  EXPECT_TRUE(EndsTheServer(FindingKind::kCudaError));
  EXPECT_TRUE(EndsTheServer(FindingKind::kEngineExit));
  EXPECT_FALSE(EndsTheServer(FindingKind::kTraceback));
  EXPECT_FALSE(EndsTheServer(FindingKind::kKvTransfer)) << "one request aborted, not the server";
}

// A disaggregated deployment's failed transfers, as SGLang logs them on
// either side (lines from public logs of a Mooncake deployment).
TEST(ScanLog, AFailedKvTransferIsFoundOnEitherSide) {
  const std::string text =
      "[2026-02-27 15:01:51 TP8] Decode transfer failed for request rank=8 "
      "decode_req.req.rid='63b1b22dad53465b92560ebdda56d075' "
      "decode_req.req.bootstrap_room=6593551520068383758 with exception "
      "KVTransferError(bootstrap_room=6593551520068383758): Failed to get kvcache from prefill "
      "instance, it might be dead\n"
      "[2026-02-27 15:01:51 TP4] Prefill transfer failed for request rank=4 "
      "req.rid='ca271fb6eab2421f98ac61976e6f0f34' req.bootstrap_room=6593551520068383758 with "
      "exception KVTransferError(bootstrap_room=6593551520068383758): Decode instance could be "
      "dead, remote mooncake session 10.99.91.49:15295 is not alive\n"
      "[2026-02-27 15:01:52 TP0] Decode batch, #running-req: 3, #token: 6000\n";
  const std::vector<LogFinding> found = ScanLog(text, "n1.log");
  ASSERT_EQ(found.size(), 2u);
  EXPECT_EQ(found[0].kind, FindingKind::kKvTransfer);
  EXPECT_EQ(found[1].Where(), "n1.log:2");
  EXPECT_STREQ(FindingKindName(found[1].kind), "KV transfer failure");
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

#include "serve_sim/server_log.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <regex>

#include "ppsearch_source_dir.h"

namespace ppsearch::serve_sim {
namespace {

TEST(ScopePrefixTest, OnlySizesAboveOne) {
  EXPECT_EQ(ScopePrefix(0, 1, 0, 1), "");
  EXPECT_EQ(ScopePrefix(1, 2, 3, 8), " PP1 TP3");
  EXPECT_EQ(ScopePrefix(0, 1, 2, 4), " TP2");
  // EP after TP, moe_ep_rank = tp_rank / (tp / ep).
  EXPECT_EQ(ScopePrefix(0, 2, 0, 8, 8), " PP0 TP0 EP0");
  EXPECT_EQ(ScopePrefix(1, 2, 6, 8, 4), " PP1 TP6 EP3");
  EXPECT_EQ(ScopePrefix(0, 1, 3, 8, 1), " TP3");
}

TEST(ServerLogTest, SglangTimestampFormat) {
  std::FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  {
    ServerLog log(f);
    log.Info("The server is fired up and ready to roll!", " PP1");
  }
  std::rewind(f);
  char buf[256] = {};
  ASSERT_NE(std::fgets(buf, sizeof(buf), f), nullptr);
  std::fclose(f);
  EXPECT_TRUE(std::regex_match(
      std::string(buf),
      std::regex(
          R"(\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d PP1\] The server is fired up and ready to roll!\n)")))
      << buf;
}

TEST(BatchLoggerTest, PrefillEveryBatchDecodeEveryInterval) {
  BatchLogger logger(1000, 2);
  sim::BatchLaunch p;
  p.is_prefill = true;
  p.launch_ns = 0;
  p.new_seqs = 2;
  p.new_tokens = 300;
  p.running_requests = 2;
  p.queued_requests = 1;
  p.kv_tokens_used = 300;
  EXPECT_EQ(
      logger.Line(p),
      "Prefill batch, #new-seq: 2, #new-token: 300, #cached-token: 0, token usage: 0.30, "
      "#running-req: 0, "
      "#queue-req: 1, #pending-token: 0, cuda graph: False, input throughput (token/s): 0.00");
  p.launch_ns = 500'000'000;  // 0.5 s later: 300 tokens / 0.5 s
  EXPECT_NE(logger.Line(p).find("input throughput (token/s): 600.00"), std::string::npos);

  sim::BatchLaunch d;
  d.is_prefill = false;
  d.new_tokens = 2;
  d.running_requests = 2;
  d.kv_tokens_used = 302;
  d.launch_ns = 1'000'000'000;
  EXPECT_EQ(logger.Line(d), "");
  d.launch_ns = 1'100'000'000;
  EXPECT_EQ(logger.Line(d),
            "Decode batch, #running-req: 2, #token: 302, token usage: 0.30, cuda graph: True, gen "
            "throughput "
            "(token/s): 0.00, #queue-req: 0");
  d.launch_ns = 1'200'000'000;
  EXPECT_EQ(logger.Line(d), "");
  d.launch_ns = 1'300'000'000;  // 4 tokens in 0.2 s since the last line
  EXPECT_NE(logger.Line(d).find("gen throughput (token/s): 20.00"), std::string::npos);
}

}  // namespace
}  // namespace ppsearch::serve_sim

namespace ppsearch::serve_sim {
namespace {

TEST(FaultLogTextTest, EachKindReadsLikeTheRealFailure) {
  ServerArgs a;
  a.model_path = std::string(PPSEARCH_SOURCE_DIR) + "/data/models/qwen3-235b-a22b";
  a.tp_size = 8;
  auto d = BuildDeployment(a);
  ASSERT_TRUE(d.ok()) << d.error().message;
  const std::string oom = FaultLogText("oom", **d);
  EXPECT_NE(oom.find("Scheduler hit an exception: Traceback (most recent call last):"),
            std::string::npos);
  EXPECT_NE(oom.find("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU "
                     "0 has a total "
                     "capacity of 83.64 GiB"),
            std::string::npos)
      << oom;
  const std::string nccl = FaultLogText("nccl", **d);
  EXPECT_NE(nccl.find("Watchdog caught collective operation timeout"), std::string::npos);
  EXPECT_NE(nccl.find("ncclRemoteError"), std::string::npos);
  const std::string tb = FaultLogText("traceback", **d);
  EXPECT_NE(tb.find("Traceback (most recent call last):"), std::string::npos);
  EXPECT_EQ(tb.back(), '\n');
}

}  // namespace
}  // namespace ppsearch::serve_sim

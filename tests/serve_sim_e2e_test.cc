// `ppsearch serve-sim` as a real process on 127.0.0.1: readiness, SGLang's
// streaming formats, /flush_cache, /gpu_memory through the nvidia-smi
// parser, every fault flag, and a two-node start and failure. Every wait is
// bounded; TearDown kills what the test started.

#include <arpa/inet.h>
#include <httplib.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <optional>
#include <thread>
#include <vector>

#include "nvidia_smi/snapshot_testing.h"
#include "serve_sim_fixture.h"

namespace ppsearch::testing {
namespace {

TEST_F(ServeSimE2e, StreamsSglangChunksAndServesTheApi) {
  const int port = FreePort();
  pid_t pid = Start(Common(port) + " --time-scale 50");
  ASSERT_TRUE(WaitHealthy(port, 20)) << Log();

  const double sent = UnixNow();
  std::vector<int> ids(37, 7);
  auto res = Post(port, "/generate",
                  {{"input_ids", ids},
                   {"sampling_params", {{"max_new_tokens", 8}, {"ignore_eos", true}}},
                   {"stream", true}});
  ASSERT_TRUE(res) << httplib::to_string(res.error());
  ASSERT_EQ(res->status, 200);
  EXPECT_EQ(res->get_header_value("Content-Type").rfind("text/event-stream", 0), 0u);
  auto events = SseData(res->body);
  ASSERT_GE(events.size(), 2u);
  EXPECT_EQ(events.back(), "[DONE]");
  int64_t last_tokens = 0;
  for (size_t i = 0; i + 1 < events.size(); ++i) {
    json chunk = json::parse(events[i]);
    const json& meta = chunk["meta_info"];
    EXPECT_EQ(meta["prompt_tokens"], 37);
    EXPECT_EQ(meta["cached_tokens"], 0);
    const int64_t n = meta["completion_tokens"];
    EXPECT_GT(n, last_tokens) << "cumulative chunks grow";
    EXPECT_EQ(chunk["output_ids"].size(), static_cast<size_t>(n));
    last_tokens = n;
    const bool last = i + 2 == events.size();
    EXPECT_EQ(meta["finish_reason"].is_null(), !last);
    EXPECT_EQ(meta.contains("e2e_latency"), last);
    EXPECT_GE(meta["first_token_ts"].get<double>(), sent - 0.5);
    EXPECT_LE(meta["first_token_ts"].get<double>(), UnixNow());
  }
  json final_chunk = json::parse(events[events.size() - 2]);
  EXPECT_EQ(final_chunk["meta_info"]["finish_reason"], json({{"type", "length"}, {"length", 8}}));
  EXPECT_EQ(final_chunk["meta_info"]["completion_tokens"], 8);
  // Wall time is simulated time / --time-scale (with slack for the HTTP round trips).
  const double sim_e2e = final_chunk["meta_info"]["sim_e2e_latency_s"];
  EXPECT_GT(sim_e2e, 0);
  EXPECT_GE(final_chunk["meta_info"]["e2e_latency"].get<double>(), sim_e2e / 50 * 0.9);

  auto plain = Post(port, "/generate",
                    {{"text", "the cat sat here"}, {"sampling_params", {{"max_new_tokens", 3}}}});
  ASSERT_TRUE(plain);
  ASSERT_EQ(plain->status, 200) << plain->body;
  json pj = json::parse(plain->body);
  EXPECT_EQ(pj["meta_info"]["prompt_tokens"], 4);
  EXPECT_EQ(pj["meta_info"]["completion_tokens"], 3);

  auto comp = Post(port, "/v1/completions",
                   {{"model", "m"},
                    {"prompt", {1, 2, 3, 4, 5}},
                    {"max_tokens", 4},
                    {"stream", true},
                    {"stream_options", {{"include_usage", true}}}});
  ASSERT_TRUE(comp);
  auto cev = SseData(comp->body);
  ASSERT_GE(cev.size(), 3u);
  EXPECT_EQ(cev.back(), "[DONE]");
  json usage = json::parse(cev[cev.size() - 2]);
  EXPECT_TRUE(usage["choices"].empty());
  EXPECT_EQ(usage["usage"]["prompt_tokens"], 5);
  EXPECT_EQ(usage["usage"]["completion_tokens"], 4);
  json first = json::parse(cev[0]);
  EXPECT_EQ(first["object"], "text_completion");

  httplib::Client c("127.0.0.1", port);
  auto info = c.Get("/server_info");
  ASSERT_TRUE(info);
  json ij = json::parse(info->body);
  EXPECT_EQ(ij["tp_size"], 8);
  EXPECT_GT(ij["internal_states"][0]["pp_max_micro_batch_size"].get<int>(), 0);
  EXPECT_GT(ij["internal_states"][0]["memory_usage"]["token_capacity"].get<int64_t>(), 0);

  // /gpu_memory read through the same parser as nvidia-smi's output.
  nvidia_smi::ShellRunner shell;
  auto gpus = nvidia_smi::TakeSnapshot(
      shell, "curl -s http://127.0.0.1:" + std::to_string(port) + "/gpu_memory");
  ASSERT_TRUE(gpus.ok()) << gpus.error().message;
  ASSERT_EQ(gpus->size(), 8u);
  EXPECT_EQ((*gpus)[0].name, "NVIDIA RTX 6000D");
  EXPECT_GT(*(*gpus)[7].used_mib, 40000);

  const std::string log = Log();
  EXPECT_NE(log.find("] server_args=ServerArgs(model_path='"), std::string::npos);
  EXPECT_NE(log.find("KV Cache is allocated."), std::string::npos);
  EXPECT_NE(log.find("max_total_num_tokens="), std::string::npos);
  EXPECT_NE(log.find("The server is fired up and ready to roll!"), std::string::npos);
  EXPECT_NE(log.find("Prefill batch, #new-seq: 1, #new-token: 37,"), std::string::npos) << log;

  // SIGTERM is a clean stop.
  ::kill(pid, SIGTERM);
  std::optional<int> code = WaitExit(pid, 10);
  ASSERT_TRUE(code.has_value());
  EXPECT_EQ(*code, 0);
}

TEST_F(ServeSimE2e, FlushCacheIsRefusedWhileARequestIsInFlight) {
  const int port = FreePort();
  Start(Common(port) + " --time-scale 1");
  ASSERT_TRUE(WaitHealthy(port, 20)) << Log();
  EXPECT_EQ(Status(port, "/flush_cache"), 200);
  std::thread client([&] {
    auto r = Post(port, "/generate",
                  {{"input_ids", {1, 2, 3}}, {"sampling_params", {{"max_new_tokens", 40}}}});
    EXPECT_TRUE(r && r->status == 200);
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(150));
  EXPECT_EQ(Status(port, "/flush_cache"), 400);
  client.join();
  httplib::Client c("127.0.0.1", port);
  auto flushed = c.Post("/flush_cache", "", "text/plain");
  ASSERT_TRUE(flushed);
  EXPECT_EQ(flushed->status, 200);
  EXPECT_EQ(flushed->body.rfind("Cache flushed.", 0), 0u);
}

TEST_F(ServeSimE2e, Http500FaultFailsASeededFraction) {
  const int port = FreePort();
  Start(Common(port) + " --time-scale 100 --fault-http500 0.5 --fault-seed 7");
  ASSERT_TRUE(WaitHealthy(port, 20)) << Log();
  int errors = 0;
  for (int i = 0; i < 16; ++i) {
    auto r = Post(port, "/generate",
                  {{"input_ids", {1, 2}}, {"sampling_params", {{"max_new_tokens", 1}}}});
    ASSERT_TRUE(r);
    ASSERT_TRUE(r->status == 200 || r->status == 500) << r->status;
    if (r->status == 500) {
      ++errors;
      EXPECT_EQ(json::parse(r->body)["error"]["code"], 500);
    }
  }
  EXPECT_GT(errors, 0);
  EXPECT_LT(errors, 16);
}

TEST_F(ServeSimE2e, HangFaultIsDetectedByAClientTimeout) {
  const int port = FreePort();
  Start(Common(port) + " --time-scale 100 --fault-hang-after 1");
  ASSERT_TRUE(WaitHealthy(port, 20)) << Log();
  json body = {{"input_ids", {1, 2}}, {"sampling_params", {{"max_new_tokens", 2}}}};
  auto first = Post(port, "/generate", body, 5);
  ASSERT_TRUE(first);
  EXPECT_EQ(first->status, 200);
  auto second = Post(port, "/generate", body, /*read_timeout_s=*/1);
  EXPECT_FALSE(second);
  EXPECT_EQ(second.error(), httplib::Error::Read);
}

TEST_F(ServeSimE2e, ExitAfterNRequests) {
  const int port = FreePort();
  pid_t pid = Start(Common(port) + " --time-scale 100 --fault-exit-after 2");
  ASSERT_TRUE(WaitHealthy(port, 20)) << Log();
  json body = {{"input_ids", {1, 2}}, {"sampling_params", {{"max_new_tokens", 2}}}};
  for (int i = 0; i < 2; ++i) {
    auto r = Post(port, "/generate", body);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 200);
  }
  std::optional<int> code = WaitExit(pid, 10);
  ASSERT_TRUE(code.has_value()) << "still running after 2 requests";
  EXPECT_EQ(*code, 1);
  EXPECT_NE(Log().find("Exiting after 2 requests (--fault-exit-after)."), std::string::npos);
}

TEST_F(ServeSimE2e, OomFaultWritesACudaOomIntoTheLog) {
  const int port = FreePort();
  Start(Common(port) + " --time-scale 100 --fault-log oom");
  ASSERT_TRUE(WaitHealthy(port, 20)) << Log();
  EXPECT_EQ(Log().find("CUDA out of memory"), std::string::npos);
  auto r = Post(port, "/generate",
                {{"input_ids", {1, 2}}, {"sampling_params", {{"max_new_tokens", 1}}}});
  ASSERT_TRUE(r);
  const std::string log = Log();
  EXPECT_NE(log.find("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate"),
            std::string::npos)
      << log;
}

TEST_F(ServeSimE2e, NeverReadyStays503AndSlowStartBecomesReadyLate) {
  const int never = FreePort();
  Start(Common(never) + " --fault-never-ready", "never");
  const int slow = FreePort();
  const auto start = Clock::now();
  Start(Common(slow) + " --fault-slow-start-s 1.5", "slow");
  ASSERT_TRUE(WaitHealthy(slow, 20)) << Log("slow");
  EXPECT_GE(std::chrono::duration<double>(Clock::now() - start).count(), 1.5);
  EXPECT_FALSE(WaitHealthy(never, 1.0));
  EXPECT_EQ(Status(never, "/health"), 503);
  auto r = Post(never, "/generate", {{"input_ids", {1}}});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 503);
  EXPECT_EQ(Log("never").find("fired up"), std::string::npos);
}

// A number given on the command line is checked, never quietly replaced
// by SGLang's default (a server started on 0.821 when told NaN), and one no
// server can use is refused before the server says it is ready.
TEST_F(ServeSimE2e, AGivenNumberIsCheckedNotDropped) {
  const std::string model = std::string("serve-sim --model-path ") + kModel + " --tp-size 8 ";
  const std::pair<const char*, const char*> cases[] = {
      {"--mem-fraction-static nan", "error: --mem-fraction-static must be in (0, 1) (got nan)\n"},
      {"--max-running-requests 0", "error: --max-running-requests must be at least 1 (got 0)\n"},
      {"--pp-max-micro-batch-size -3",
       "error: --pp-max-micro-batch-size must be at least 1 (got -3)\n"},
      {"--chunked-prefill-size 0",
       "error: --chunked-prefill-size must be a number of tokens, or -1 to disable chunking "
       "(got 0)\n"},
      {"--fault-exit-after -1",
       "error: --fault-exit-after must be 0 (never) or a number of requests (got -1)\n"},
      {"--time-scale inf",
       "error: --time-scale must be a positive number of simulated seconds per wall second, at "
       "most 1e+06 (got inf)\n"},
  };
  for (const auto& [flag, message] : cases) {
    CommandResult r = Run(model + flag);
    EXPECT_EQ(r.exit_code, 2) << flag;
    EXPECT_EQ(r.err, message) << flag;
  }
  // smi-sim's answer holds no impossible number either.
  const std::string smi = "smi-sim --state-dir " + (dir_ / "none").string() +
                          " --query-gpu=index,memory.used,memory.total "
                          "--format=csv,noheader,nounits ";
  CommandResult nan = Run(smi + "--total-mib nan");
  EXPECT_EQ(nan.exit_code, 2);
  EXPECT_EQ(nan.err,
            "error: --total-mib must be a positive number of MiB up to 1073741824 (got "
            "nan)\n");
  CommandResult none = Run(smi + "--gpus -1");
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_EQ(none.err, "error: --gpus must be between 1 and 1024 (got -1)\n");
  EXPECT_EQ(Run(smi + "--gpus 2 --total-mib 1000").out, "0, 0, 1000\n1, 0, 1000\n");
}

// SGLANG_PP_LAYER_PARTITION in serve-sim's environment splits its stages as
// it splits SGLang's (a run's [engine.pp_layer_partition] arrives this way):
// the stage of 54 layers holds more than the stage of 40. A value SGLang
// would refuse stops the start, naming the variable.
TEST_F(ServeSimE2e, TheEnvironmentsLayerSplitSplitsTheStages) {
  const std::string layout = std::string("--model-path ") + kModel + " --tp-size 4 --pp-size 2";
  const int bad = FreePort();
  const pid_t refused = Start(layout + " --host 127.0.0.1 --port " + std::to_string(bad), "bad",
                              "SGLANG_PP_LAYER_PARTITION='40;54'");
  const std::optional<int> code = WaitExit(refused, 20);
  ASSERT_TRUE(code.has_value());
  EXPECT_NE(*code, 0);
  EXPECT_NE(ReadText(dir_ / "bad.out")
                .find("SGLANG_PP_LAYER_PARTITION='40;54': expected each pipeline stage's layer "
                      "count"),
            std::string::npos)
      << ReadText(dir_ / "bad.out");

  const int port = FreePort();
  Start(layout + " --host 127.0.0.1 --port " + std::to_string(port), "split",
        "SGLANG_PP_LAYER_PARTITION=40,54");
  ASSERT_TRUE(WaitHealthy(port, 20)) << Log("split");
  nvidia_smi::ShellRunner shell;
  auto gpus = nvidia_smi::TakeSnapshot(
      shell, "curl -s http://127.0.0.1:" + std::to_string(port) + "/gpu_memory");
  ASSERT_TRUE(gpus.ok()) << gpus.error().message;
  ASSERT_EQ(gpus->size(), 8u);
  // GPUs 0-3 hold stage 0 (40 layers), 4-7 stage 1 (54 layers and the LM head).
  EXPECT_GT(*(*gpus)[4].used_mib, *(*gpus)[0].used_mib + 5000)
      << *(*gpus)[4].used_mib << " vs " << *(*gpus)[0].used_mib;
}

TEST_F(ServeSimE2e, TwoNodesBecomeReadyTogetherAndNodeZeroFailsWhenNodeOneDies) {
  const int port0 = FreePort(), port1 = FreePort(), dist = FreePort();
  const std::string common = std::string("--model-path ") + kModel +
                             " --tp-size 4 --pp-size 2 --nnodes 2 --host 127.0.0.1 --time-scale 1"
                             " --dist-init-addr 127.0.0.1:" +
                             std::to_string(dist);
  pid_t node0 = Start(common + " --node-rank 0 --port " + std::to_string(port0), "node0");
  EXPECT_FALSE(WaitHealthy(port0, 1.0)) << "ready before node 1 joined";
  EXPECT_EQ(Status(port0, "/health"), 503);
  pid_t node1 = Start(common + " --node-rank 1 --port " + std::to_string(port1), "node1");
  ASSERT_TRUE(WaitHealthy(port0, 20)) << Log("node0");
  ASSERT_TRUE(WaitHealthy(port1, 5)) << Log("node1");
  // Each node logs the stages it holds.
  EXPECT_NE(Log("node1").find(" PP1 TP0] max_total_num_tokens="), std::string::npos)
      << Log("node1");
  EXPECT_EQ(Log("node0").find(" PP1 TP0]"), std::string::npos);
  EXPECT_NE(Log("node0").find(" PP0 TP0] max_total_num_tokens="), std::string::npos);

  // A long request is in flight when node 1 dies.
  std::optional<httplib::Result> inflight;
  std::thread client([&] {
    inflight = Post(port0, "/generate",
                    {{"input_ids", {1, 2, 3}},
                     {"sampling_params", {{"max_new_tokens", 2000}}},
                     {"stream", true}},
                    10);
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  ::kill(node1, SIGKILL);
  std::optional<int> code = WaitExit(node0, 10);
  client.join();
  ASSERT_TRUE(code.has_value()) << "node 0 kept running after node 1 died";
  EXPECT_NE(*code, 0);
  EXPECT_NE(Log("node0").find("Node 1 lost"), std::string::npos) << Log("node0");
  ASSERT_TRUE(inflight.has_value());
  // Either an error event in the stream or a dropped connection: never a clean finish.
  if (*inflight) {
    EXPECT_NE((*inflight)->body.find("\"error\""), std::string::npos);
  }
}

}  // namespace
}  // namespace ppsearch::testing
